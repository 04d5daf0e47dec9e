package match

import "github.com/arbiter-chess/arbiter/engine"

// AdjudicationRule names the rule of an Adjudication that ended a game.
type AdjudicationRule uint8

const (
	AdjudicationNone     AdjudicationRule = iota // the game goes on
	AdjudicationResign                           // a side both engines saw as lost for ResignMoves moves each
	AdjudicationDraw                             // both engines saw a draw for DrawMoves moves each
	AdjudicationMaxMoves                         // MaxMoves moves of the engines were played
)

var adjudicationRuleNames = [...]string{"none", "resign adjudication", "draw adjudication", "move limit"}

func (r AdjudicationRule) String() string {
	if int(r) < len(adjudicationRuleNames) {
		return adjudicationRuleNames[r]
	}
	return "AdjudicationRule(?)"
}

// Adjudicator follows the scores of a game's engine moves, one at a time,
// and says when an Adjudication ends the game. It is the one place the
// streak rules live: the game loop (PlayGame) uses it to end games, and
// the checks of finished games (the coordinator's replay of a batch's
// PGNs, datagen's check of a shard) use it to see that a game ended
// exactly where the rules of its test end it. The zero value, after
// Reset, is ready; it holds no pointers and does not allocate.
type Adjudicator struct {
	a            Adjudication
	resignStreak [2]int // consecutive plies in which colour c was judged lost
	drawStreak   int
	plies        int // engine plies so far
}

// NewAdjudicator returns an Adjudicator for one game under a.
func NewAdjudicator(a Adjudication) Adjudicator {
	return Adjudicator{a: a}
}

// Reset starts a new game under a.
func (j *Adjudicator) Reset(a Adjudication) { *j = Adjudicator{a: a} }

// Ply records an engine move just made by mover, with the score its engine
// gave (centipawns from mover's point of view) when hasScore, and reports
// whether the game is adjudicated after it, by which rule and with which
// result. Rules are judged in the game loop's order: resign, draw, move
// limit; the first that ends the game is reported. A move-limit end does
// not look at the position: a caller whose final position is also over by
// the rules (mate on the last move) lets the rules decide.
func (j *Adjudicator) Ply(mover engine.Color, score int, hasScore bool) (AdjudicationRule, Result) {
	j.plies++
	a := &j.a
	c := int(mover)
	if a.ResignMoves > 0 {
		lost := -1 // the side both engines see as lost, judged by this ply
		if hasScore {
			if score <= -a.ResignScore {
				lost = c
			} else if score >= a.ResignScore {
				lost = 1 - c
			}
		}
		for k := range j.resignStreak {
			if k == lost {
				j.resignStreak[k]++
			} else {
				j.resignStreak[k] = 0
			}
		}
		if lost >= 0 && j.resignStreak[lost] >= 2*a.ResignMoves {
			if lost == int(engine.White) {
				return AdjudicationResign, BlackWins
			}
			return AdjudicationResign, WhiteWins
		}
	}
	if a.DrawMoves > 0 {
		if hasScore && abs(score) <= a.DrawScore && (j.plies+1)/2 >= a.DrawMoveNumber {
			j.drawStreak++
		} else {
			j.drawStreak = 0
		}
		if j.drawStreak >= 2*a.DrawMoves {
			return AdjudicationDraw, Draw
		}
	}
	if a.MaxMoves > 0 && j.plies >= 2*a.MaxMoves {
		return AdjudicationMaxMoves, Draw
	}
	return AdjudicationNone, NoResult
}

// Plies is the number of engine plies recorded since the last Reset.
func (j *Adjudicator) Plies() int { return j.plies }

// loserOf is the colour that loses a decisive result.
func loserOf(r Result) engine.Color {
	if r == WhiteWins {
		return engine.Black
	}
	return engine.White
}
