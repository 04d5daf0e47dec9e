// Package gamelabel names how games end for metrics: the label values of
// arbiter_games_total (deploy/prometheus/METRICS.md) for the structured
// outcome a worker reports with each game (GamePairBatchResult.games). It
// knows only the wire's enums, so the coordinator labels games without the
// match library and without reading PGN text.
package gamelabel

import arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"

// Values of the result label: who won.
const (
	White = "white"
	Black = "black"
	Draw  = "draw"
	None  = "none" // not finished (the match was stopped)
)

// Values of the termination label: how the game ended.
const (
	Checkmate            = "checkmate"
	Stalemate            = "stalemate"
	Repetition           = "repetition"
	FiftyMoves           = "fifty_moves"
	InsufficientMaterial = "insufficient_material"
	Resign               = "resign"
	Adjudication         = "adjudication"
	TimeForfeit          = "time_forfeit"
	IllegalMove          = "illegal_move"
	Crash                = "crash"
	Stalled              = "stalled"
	Abandoned            = "abandoned"
)

// Result is the result label of r; an unknown value (a newer worker) is none.
func Result(r arbiterv1.GameResult) string {
	switch r {
	case arbiterv1.GameResult_GAME_RESULT_WHITE_WINS:
		return White
	case arbiterv1.GameResult_GAME_RESULT_BLACK_WINS:
		return Black
	case arbiterv1.GameResult_GAME_RESULT_DRAW:
		return Draw
	}
	return None
}

// Termination is the termination label of t; an unknown value (unset, or a
// newer worker's) is abandoned.
func Termination(t arbiterv1.GameTermination) string {
	switch t {
	case arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE:
		return Checkmate
	case arbiterv1.GameTermination_GAME_TERMINATION_STALEMATE:
		return Stalemate
	case arbiterv1.GameTermination_GAME_TERMINATION_REPETITION:
		return Repetition
	case arbiterv1.GameTermination_GAME_TERMINATION_FIFTY_MOVES:
		return FiftyMoves
	case arbiterv1.GameTermination_GAME_TERMINATION_INSUFFICIENT_MATERIAL:
		return InsufficientMaterial
	case arbiterv1.GameTermination_GAME_TERMINATION_RESIGN:
		return Resign
	case arbiterv1.GameTermination_GAME_TERMINATION_ADJUDICATION:
		return Adjudication
	case arbiterv1.GameTermination_GAME_TERMINATION_TIME_FORFEIT:
		return TimeForfeit
	case arbiterv1.GameTermination_GAME_TERMINATION_ILLEGAL_MOVE:
		return IllegalMove
	case arbiterv1.GameTermination_GAME_TERMINATION_CRASH:
		return Crash
	case arbiterv1.GameTermination_GAME_TERMINATION_STALL:
		return Stalled
	}
	return Abandoned
}

// Labels are the result and termination labels of one game.
func Labels(o *arbiterv1.GameOutcome) (result, termination string) {
	return Result(o.GetResult()), Termination(o.GetTermination())
}

// Series lists, by termination, the results a game can have with it: the
// label pairs to initialise to 0, so that no series appears from nowhere.
// A pair outside it is a worker's bug (Labels never makes one for a
// well-formed outcome).
func Series() map[string][]string {
	decisive := func() []string { return []string{White, Black} }
	return map[string][]string{
		Checkmate:            decisive(),
		Stalemate:            {Draw},
		Repetition:           {Draw},
		FiftyMoves:           {Draw},
		InsufficientMaterial: {Draw},
		Resign:               decisive(),
		Adjudication:         {White, Black, Draw},
		TimeForfeit:          {White, Black, Draw}, // a draw when the side with time cannot mate
		IllegalMove:          decisive(),
		Crash:                decisive(),
		Stalled:              decisive(),
		Abandoned:            {White, Black, Draw, None},
	}
}
