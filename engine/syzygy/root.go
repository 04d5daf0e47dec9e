package syzygy

import (
	"cmp"
	"slices"

	"github.com/arbiter-chess/arbiter/engine"
)

// RootMove is one legal move of a root position with its tablebase value.
type RootMove struct {
	Move engine.Move
	// DTZ is counted from the root position, signed for the side to move
	// at the root (as ProbeDTZ): 1 for a move that mates or zeroes into a
	// win, and so on.
	DTZ int
	// WDL is the move's result for the side to move at the root, with the
	// root's 50-move counter taken into account.
	WDL WDL
	// Rank orders moves as Syzygy-aware engines do: 1000 a win the 50-move
	// rule cannot spoil, down to -1000 a loss it cannot save; wins nearer
	// the 50-move limit rank lower, losses nearer it higher.
	Rank int
}

// RootMoves ranks every legal move of pos by the DTZ tables, best first
// (equal ranks in generation order). It needs the WDL and DTZ tables of
// every position one move away.
func (tb *Tablebase) RootMoves(pos *engine.Position) ([]RootMove, error) {
	if err := tb.begin(pos); err != nil {
		return nil, err
	}
	defer tb.closeMu.RUnlock()
	counter := pos.HalfmoveClock()
	var ml engine.MoveList
	pos.GenerateMoves(&ml)
	moves := make([]RootMove, 0, ml.N)
	for _, m := range ml.Slice() {
		next := *pos
		next.MakeMove(m)
		v, err := tb.moveDTZ(&next)
		if err != nil {
			return nil, err
		}
		moves = append(moves, RootMove{Move: m, DTZ: v, WDL: dtzToWDL(counter, v), Rank: rootRank(counter, v)})
	}
	slices.SortStableFunc(moves, func(a, b RootMove) int { return cmp.Compare(b.Rank, a.Rank) })
	return moves, nil
}

// moveDTZ is the DTZ, from the mover's side, of the move that led to next.
func (tb *Tablebase) moveDTZ(next *engine.Position) (int, error) {
	var v int
	if next.HalfmoveClock() == 0 {
		// The move zeroed the counter: its DTZ is its WDL's.
		w, _, err := tb.probeWDL(next)
		if err != nil {
			return 0, err
		}
		v = wdlToDTZ[-w+2]
	} else {
		d, err := tb.probeDTZ(next)
		if err != nil {
			return 0, err
		}
		v = -d
		if v > 0 {
			v++
		} else if v < 0 {
			v--
		}
	}
	if v == 2 && next.IsCheckmate() {
		v = 1
	}
	return v, nil
}

// dtzToWDL is the result of a DTZ value once counter plies of the 50-move
// rule have passed.
func dtzToWDL(counter, dtz int) WDL {
	switch {
	case dtz > 0 && dtz+counter <= 100:
		return Win
	case dtz > 0:
		return CursedWin
	case dtz < 0 && -dtz+counter <= 100:
		return Loss
	case dtz < 0:
		return BlessedLoss
	}
	return Draw
}

// rootRank is Syzygy's ranking of a root move of the given DTZ.
func rootRank(counter, dtz int) int {
	switch {
	case dtz > 0 && dtz+counter <= 99:
		return 1000
	case dtz > 0:
		return 1000 - (dtz + counter)
	case dtz < 0 && -dtz*2+counter < 100:
		return -1000
	case dtz < 0:
		return -1000 + (-dtz + counter)
	}
	return 0
}
