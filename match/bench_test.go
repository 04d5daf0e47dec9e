package match

import (
	"math/rand/v2"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// BenchmarkPlyRules measures the runner's chess per engine move: the
// game's end, the engine's move read and checked, the move made and
// recorded. The moves are those of seeded random games (up to 200 plies
// each), written out in UCI as an engine would send them.
func BenchmarkPlyRules(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	type game struct{ moves []string }
	var games []game
	plies := 0
	for len(games) < 50 {
		pos := engine.StartPosition()
		var g game
		for len(g.moves) < 200 {
			legal := pos.LegalMoves()
			if len(legal) == 0 {
				break
			}
			m := legal[rng.IntN(len(legal))]
			g.moves = append(g.moves, pos.UCIMove(m))
			pos.MakeMove(m)
		}
		games = append(games, g)
		plies += len(g.moves)
	}
	var st gameState
	rec := &GameRecord{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := games[i%len(games)]
		pos := engine.StartPosition()
		st.hist = append(st.hist[:0], pos)
		st.uci = st.uci[:0]
		rec.Moves, rec.Info = rec.Moves[:0], rec.Info[:0]
		for _, s := range g.moves {
			if _, _, _, _, over := st.status(&pos); over {
				break
			}
			m, err := pos.ParseUCIMove(s)
			if err != nil {
				b.Fatal(err)
			}
			st.push(&pos, m, rec, MoveInfo{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(plies)/float64(len(games))), "ns/ply")
}
