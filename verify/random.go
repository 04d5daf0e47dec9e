package verify

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// Chess960Array returns the back rank of Chess960 start position n
// (0..959) in Scharnagl's numbering, as White's pieces from a to h: 518 is
// "RNBQKBNR".
func Chess960Array(n int) string {
	var r [8]byte
	free := func(k int) int { // the k-th empty file
		for f := 0; f < 8; f++ {
			if r[f] == 0 {
				if k == 0 {
					return f
				}
				k--
			}
		}
		panic("verify: no free file")
	}
	r[2*(n%4)+1] = 'B' // light-squared bishop: b, d, f, h
	n /= 4
	r[2*(n%4)] = 'B' // dark-squared bishop: a, c, e, g
	n /= 4
	r[free(n%6)] = 'Q'
	n /= 6
	knights := [10][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}
	k := knights[n%10]
	a, b := free(k[0]), free(k[1])
	r[a], r[b] = 'N', 'N'
	r[free(0)] = 'R'
	r[free(0)] = 'K'
	r[free(0)] = 'R'
	return string(r[:])
}

// Chess960StartFEN returns start position n (0..959) as Shredder-FEN.
func Chess960StartFEN(n int) string {
	a := Chess960Array(n)
	var rooks []byte
	for f := 0; f < 8; f++ {
		if a[f] == 'R' {
			rooks = append(rooks, byte('A'+f))
		}
	}
	// Shredder order: the h-side rook first.
	castle := string([]byte{rooks[1], rooks[0]}) + strings.ToLower(string([]byte{rooks[1], rooks[0]}))
	return fmt.Sprintf("%s/pppppppp/8/8/8/8/PPPPPPPP/%s w %s - 0 1", strings.ToLower(a), a, castle)
}

// RandomOptions shape the fuzzing positions.
type RandomOptions struct {
	Depth    int  // the depth each Target asks for
	Chess960 bool // only Chess960 starts (otherwise half and half)
	Standard bool // only the standard start (otherwise half and half)
}

// RandomTargets returns k positions from seeded random walks: target i
// depends only on (seed, i), so any one of them can be regenerated alone.
// Walks start from the standard position or a random Chess960 array and
// run 8 to 200 plies, favouring captures (to reach endgames), pawn
// advances and the special moves; the position kept is drawn from the
// walk with a bias to those where promotions, e.p. or castling are legal.
func RandomTargets(k int, seed uint64, opt RandomOptions) []Target {
	out := make([]Target, 0, k)
	for i := 0; i < k; i++ {
		out = append(out, RandomTarget(seed, i, opt))
	}
	return out
}

// RandomTarget returns target i of RandomTargets(…, seed, opt).
func RandomTarget(seed uint64, i int, opt RandomOptions) Target {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	fen, c960 := engine.StartFEN, false
	// Mixed walks draw their start first; a seed gives the same mixed
	// positions as before the Standard option existed.
	if opt.Chess960 || (!opt.Standard && rng.IntN(2) == 1) {
		fen, c960 = Chess960StartFEN(rng.IntN(960)), true
	}
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		panic("verify: start FEN does not parse: " + err.Error())
	}
	pos.SetChess960(c960)

	type cand struct {
		pos    engine.Position
		weight int
	}
	var cands []cand
	plies := 8 + rng.IntN(193)
	for ply := 0; ply < plies; ply++ {
		moves := pos.LegalMoves()
		if len(moves) == 0 {
			break
		}
		// Score the position for what it exercises.
		score := 1
		weights := make([]int, len(moves))
		total := 0
		for j, m := range moves {
			w := 2
			pc := pos.PieceAt(m.From())
			switch {
			case m.IsEnPassant():
				w, score = 30, score+6
			case m.IsPromotion():
				w, score = 20, score+2
			case m.IsCastle():
				w, score = 10, score+2
			case pos.IsCapture(m):
				w = 12
			case pc.Type() == engine.Pawn:
				w = 4
				rel := m.To().Rank() // ranks from the mover's side
				if pos.SideToMove() == engine.Black {
					rel = 7 - rel
				}
				if rel >= 5 {
					w = 10 // close to promotion
				}
				if d := int(m.To()) - int(m.From()); d == 16 || d == -16 {
					// A double push that offers an e.p. capture.
					c := pos
					c.MakeMove(m)
					if c.EnPassant() != engine.NoSquare {
						w = 40
					}
				}
			}
			weights[j] = w
			total += w
		}
		if pos.CastlingRights() != 0 {
			score += 2
		}
		if pos.InCheck() {
			score += 2
		}
		if n := pos.Occupied().Count(); n < 16 {
			score += (16 - n) / 2 // endgames
		}
		if ply >= 6 {
			cands = append(cands, cand{pos, score * score})
		}
		r := rng.IntN(total)
		j := 0
		for r >= weights[j] {
			r -= weights[j]
			j++
		}
		pos.MakeMove(moves[j])
	}
	if pos.LegalMoveCount() > 0 {
		cands = append(cands, cand{pos, 1})
	}
	pick := pos
	if len(cands) > 0 {
		total := 0
		for _, c := range cands {
			total += c.weight
		}
		r := rng.IntN(total)
		for _, c := range cands {
			if r < c.weight {
				pick = c.pos
				break
			}
			r -= c.weight
		}
	}
	return Target{
		ID:       fmt.Sprintf("random %d (seed %d)", i, seed),
		FEN:      pick.FEN(),
		Depth:    opt.Depth,
		Chess960: c960,
	}
}
