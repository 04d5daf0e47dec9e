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

// BenchmarkInfoLines measures what the runner does with each line of a
// search: Stockfish's lines for one move at nodes=5000, told apart and the
// info lines parsed.
func BenchmarkInfoLines(b *testing.B) {
	lines := [][]byte{
		[]byte("info string NNUE evaluation using nn-ad9b42354671.nnue enabled"),
		[]byte("info depth 1 seldepth 1 multipv 1 score cp 28 nodes 38 nps 38000 hashfull 0 tbhits 0 time 1 pv e2e4"),
		[]byte("info depth 2 seldepth 2 multipv 1 score cp 44 nodes 77 nps 38500 hashfull 0 tbhits 0 time 2 pv e2e4 e7e5"),
		[]byte("info depth 5 seldepth 2 multipv 1 score cp 107 nodes 182 nps 91000 hashfull 0 tbhits 0 time 2 pv e2e4 e7e5 g1f3 b8c6 f1b5"),
		[]byte("info depth 8 seldepth 6 multipv 1 score cp 44 nodes 1801 nps 225125 hashfull 0 tbhits 0 time 8 pv e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6"),
		[]byte("info depth 10 seldepth 9 multipv 1 score cp 50 upperbound nodes 5000 nps 263157 hashfull 2 tbhits 0 time 19 pv b5a4"),
		[]byte("bestmove b5a4 ponder b7b5"),
	}
	var inf Info
	found := 0
	for i := 0; i < b.N; i++ {
		for _, line := range lines {
			switch {
			case hasWord(line, "info"):
				parseUCIInfo(line, &inf)
			case hasWord(line, "bestmove"):
				found++
			}
		}
	}
	if found != b.N || inf.Nodes != 5000 {
		b.Fatalf("%d bestmoves in %d searches, nodes %d", found, b.N, inf.Nodes)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}
