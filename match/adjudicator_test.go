package match

import (
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// ply is one engine move fed to an Adjudicator: the mover and its score
// (none when !has).
type ply struct {
	mover engine.Color
	score int
	has   bool
}

// alternate gives plies by White then Black, each scoring scores[i] from
// its own point of view.
func alternate(scores ...int) []ply {
	out := make([]ply, len(scores))
	for i, s := range scores {
		out[i] = ply{mover: engine.Color(i % 2), score: s, has: true}
	}
	return out
}

func TestAdjudicator(t *testing.T) {
	resign := Adjudication{ResignMoves: 2, ResignScore: 500}
	draw := Adjudication{DrawMoveNumber: 3, DrawMoves: 2, DrawScore: 10}
	for _, tc := range []struct {
		name   string
		a      Adjudication
		plies  []ply
		at     int // the ply (1-based) that ends the game; 0: none does
		rule   AdjudicationRule
		result Result
	}{
		{"resign: White lost after two moves of each", resign, alternate(-600, 700, -500, 500), 4, AdjudicationResign, BlackWins},
		{"resign: Black lost", resign, alternate(900, -900, 900, -900), 4, AdjudicationResign, WhiteWins},
		{"resign: one move short", resign, alternate(-600, 700, -500), 0, AdjudicationNone, NoResult},
		{"resign: a score under the threshold resets", resign, alternate(-600, 700, -499, 700, -600, 700), 0, AdjudicationNone, NoResult},
		{"resign: the streak after a reset", resign, alternate(-600, 700, -499, 700, -600, 700, -600), 7, AdjudicationResign, BlackWins},
		{"resign: a move without a score resets", resign,
			[]ply{{engine.White, -600, true}, {engine.Black, 700, false}, {engine.White, -600, true}, {engine.Black, 700, true}}, 0, AdjudicationNone, NoResult},
		{"resign: engines that disagree never resign", resign, alternate(-600, -700, -600, -700, -600, -700), 0, AdjudicationNone, NoResult},
		{"draw: not before move 3", draw, alternate(0, 0, 0, 0), 0, AdjudicationNone, NoResult},
		// Plies 5.. are move 3 on: four of them in a row.
		{"draw: from move 3", draw, alternate(0, 0, 0, 0, 5, -5, 10, -10), 8, AdjudicationDraw, Draw},
		{"draw: a score over the bound resets", draw, alternate(0, 0, 0, 0, 5, -5, 11, -10, 0, 0), 0, AdjudicationNone, NoResult},
		{"draw: a move without a score resets", draw,
			append(alternate(0, 0, 0, 0, 0, 0, 0), ply{engine.Black, 0, false}), 0, AdjudicationNone, NoResult},
		{"max moves", Adjudication{MaxMoves: 3}, alternate(0, 0, 0, 0, 0, 0), 6, AdjudicationMaxMoves, Draw},
		{"resign is judged before the move limit", Adjudication{ResignMoves: 1, ResignScore: 100, MaxMoves: 1}, alternate(-100, 100), 2, AdjudicationResign, BlackWins},
		{"draw is judged before the move limit", Adjudication{DrawMoves: 1, DrawScore: 0, MaxMoves: 1}, alternate(0, 0), 2, AdjudicationDraw, Draw},
		{"nothing set, nothing ends", Adjudication{}, alternate(-9000, 9000, -9000, 9000, 0, 0, 0, 0), 0, AdjudicationNone, NoResult},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewAdjudicator(tc.a)
			at, rule, result := 0, AdjudicationNone, NoResult
			for i, p := range tc.plies {
				rule, result = j.Ply(p.mover, p.score, p.has)
				if rule != AdjudicationNone {
					at = i + 1
					break
				}
			}
			if at != tc.at || rule != tc.rule || result != tc.result {
				t.Fatalf("ends at ply %d by %s (%s); want ply %d by %s (%s)", at, rule, result, tc.at, tc.rule, tc.result)
			}
			if at > 0 && j.Plies() != at {
				t.Fatalf("Plies() = %d after %d plies", j.Plies(), at)
			}
		})
	}
}

// A score s of the mover is -s of its opponent: judging a game's scores
// all as White's (as datagen, which stores White's scores, does) gives
// the same verdicts as judging each as its mover's.
func TestAdjudicatorSymmetric(t *testing.T) {
	a := Adjudication{ResignMoves: 3, ResignScore: 300, DrawMoveNumber: 4, DrawMoves: 3, DrawScore: 15, MaxMoves: 40}
	scores := []int{20, -30, 5, -4, 310, -320, 400, -500, 300, -300, 0, 0, 10, -15, 15, -16, 3, 2, 1, 0, -1, -2, 900, -900, 901, -902}
	for n := 0; n <= len(scores); n++ {
		mover, white := NewAdjudicator(a), NewAdjudicator(a)
		var r1, r2 AdjudicationRule
		var res1, res2 Result
		for i, s := range scores[:n] {
			c := engine.Color(i % 2)
			ws := s
			if c == engine.Black {
				ws = -s
			}
			r1, res1 = mover.Ply(c, s, true)
			r2, res2 = white.Ply(engine.White, ws, true)
			if r1 != r2 || res1 != res2 {
				t.Fatalf("ply %d: judged as the mover's %s (%s), as White's %s (%s)", i+1, r1, res1, r2, res2)
			}
		}
	}
}
