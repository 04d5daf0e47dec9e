package datagen

import (
	"strconv"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

// Game is one self-play game: the position it started from, every ply
// (the random opening plies first), and how it ended.
type Game struct {
	StartFEN    string // the full FEN the first ply is played from
	Moves       []Move
	Result      Result // white-relative
	Termination Termination
}

// Move is one ply of a game.
type Move struct {
	UCI    string // long algebraic (e2e4, e7e8q, e1g1)
	Random bool   // a random opening ply: no search, Score and Depth are 0
	// Score is the engine's score of the position before the move, in
	// centipawns from White's point of view; a mate in n moves is
	// ±(MateScore - n).
	Score int
	Depth int // the depth the engine reported
}

// Mate scores: a mate in n moves is ±(MateScore - n), so that every score
// fits bullet's i16 and mates sort above any centipawn score; centipawn
// scores are clamped to ±MateBound.
const (
	MateScore = 32000
	MateBound = MateScore - 1000
)

// whiteScore is s (the mover's view) from White's point of view, with
// mates mapped as MateScore says.
func whiteScore(s match.Score, mover engine.Color) int {
	v := 0
	switch {
	case s.Mate > 0:
		v = MateScore - min(s.Mate, 999)
	case s.Mate < 0:
		v = -MateScore + min(-s.Mate, 999)
	default:
		v = max(-MateBound, min(MateBound, s.CP))
	}
	if mover == engine.Black {
		v = -v
	}
	return v
}

// Result is a game's result from White's point of view.
type Result uint8

const (
	NoResult Result = iota // not a finished game (never in a valid Game)
	WhiteWins
	Draw
	BlackWins
)

// String is the PGN result token.
func (r Result) String() string {
	switch r {
	case WhiteWins:
		return "1-0"
	case BlackWins:
		return "0-1"
	case Draw:
		return "1/2-1/2"
	}
	return "*"
}

// Text is bullet's text form: "1.0", "0.5", "0.0".
func (r Result) Text() string {
	switch r {
	case WhiteWins:
		return "1.0"
	case BlackWins:
		return "0.0"
	}
	return "0.5"
}

// halfPoints is White's score in half points (bullet's 2/1/0).
func (r Result) halfPoints() int {
	switch r {
	case WhiteWins:
		return 2
	case BlackWins:
		return 0
	}
	return 1
}

func resultOfMatch(r match.Result) Result {
	switch r {
	case match.WhiteWins:
		return WhiteWins
	case match.BlackWins:
		return BlackWins
	case match.Draw:
		return Draw
	}
	return NoResult
}

// Termination is how a game ended.
type Termination uint8

const (
	TermNone                 Termination = iota // not ended (never in a valid Game)
	TermCheckmate                               // by the rules
	TermStalemate                               // by the rules
	TermRepetition                              // threefold repetition
	TermFiftyMoves                              // the fifty-move rule
	TermInsufficientMaterial                    // neither side can mate
	TermWinAdjudication                         // Adjudication.WinScore/WinMoves
	TermDrawAdjudication                        // Adjudication.Draw*
	TermMaxMoves                                // Adjudication.MaxMoves
	TermResign                                  // the engine resigned on its own (xboard)
	TermTablebase                               // Syzygy tables' verdict (Settings.Tablebase)
	termCount
)

var termNames = [termCount]string{"none", "checkmate", "stalemate", "repetition", "fifty moves", "insufficient material",
	"win adjudication", "draw adjudication", "max moves", "resign", "tablebase adjudication"}

func (t Termination) String() string {
	if t < termCount {
		return termNames[t]
	}
	return "Termination(" + strconv.Itoa(int(t)) + ")"
}

// ByRules reports whether t is an end that the final position proves.
func (t Termination) ByRules() bool { return t >= TermCheckmate && t <= TermInsufficientMaterial }

// replay follows a game by the rules: the position and the positions since
// the last irreversible move (for repetitions), as the match game loop
// keeps them.
type replay struct {
	pos  engine.Position
	hist []engine.Position
}

func (r *replay) reset(pos engine.Position) {
	r.pos = pos
	r.hist = append(r.hist[:0], pos)
}

func (r *replay) push(m engine.Move) {
	r.pos.MakeMove(m)
	if r.pos.HalfmoveClock() == 0 {
		r.hist = r.hist[:0]
	}
	r.hist = append(r.hist, r.pos)
}

// status is how the game stands by the rules in the current position
// (match.RulesStatus: the game loop's own rules).
func (r *replay) status() (Result, Termination) {
	res, end, _, _, over := match.RulesStatus(&r.pos, r.hist)
	if !over {
		return NoResult, TermNone
	}
	return resultOfMatch(res), termOfEnd(end)
}

// termOfEnd is the termination of a game that ended by the rules.
func termOfEnd(e match.End) Termination {
	switch e {
	case match.EndCheckmate:
		return TermCheckmate
	case match.EndStalemate:
		return TermStalemate
	case match.EndRepetition:
		return TermRepetition
	case match.EndFiftyMoves:
		return TermFiftyMoves
	case match.EndInsufficientMaterial:
		return TermInsufficientMaterial
	}
	return TermNone
}
