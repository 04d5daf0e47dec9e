package syzygy

import (
	"fmt"
	"math"

	"github.com/arbiter-chess/arbiter/engine"
)

// WDL is a tablebase result from the side to move.
type WDL int

// The five WDL values, as Syzygy numbers them.
const (
	Loss        WDL = -2 // lost whatever the 50-move counter
	BlessedLoss WDL = -1 // lost, but the 50-move rule saves a draw
	Draw        WDL = 0
	CursedWin   WDL = 1 // won, but the 50-move rule spoils it to a draw
	Win         WDL = 2
)

func (w WDL) String() string {
	switch w {
	case Loss:
		return "loss"
	case BlessedLoss:
		return "blessed-loss"
	case Draw:
		return "draw"
	case CursedWin:
		return "cursed-win"
	case Win:
		return "win"
	}
	return "invalid"
}

// wdlToDTZ is the DTZ of a position whose best move zeroes the counter
// (a capture or pawn move), by WDL+2.
var wdlToDTZ = [5]int{-1, -101, 0, 101, 1}

// DTZ map numbers and "stored in plies" flags by WDL+2.
var (
	wdlToDTZMap = [5]int{1, 3, 0, 2, 0}
	dtzPlyFlag  = [5]byte{dtzFlagLossPlies, 0, 0, 0, dtzFlagWinPlies}
)

// ProbeWDL returns the WDL value of pos (the 50-move counter is not
// looked at). pos must have no castling rights and at most MaxPieces
// pieces; the tables of pos's material and of every material a capture
// sequence reaches must be present.
func (tb *Tablebase) ProbeWDL(pos *engine.Position) (WDL, error) {
	if err := tb.begin(pos); err != nil {
		return 0, err
	}
	defer tb.closeMu.RUnlock()
	v, _, err := tb.probeWDL(pos)
	return WDL(v), err
}

// ProbeDTZ returns the DTZ of pos in plies, signed as WDL: a win in n
// plies to the next capture or pawn move is n, a loss -n; cursed wins and
// blessed losses are beyond ±100; a draw is 0; a checkmated side gets -1.
// As Syzygy documents, a value n may stand for n+1 plies (tables store
// some distances in moves), so a win is certain when DTZ plus the 50-move
// counter is at most 99. It also needs the DTZ tables (.rtbz).
func (tb *Tablebase) ProbeDTZ(pos *engine.Position) (int, error) {
	if err := tb.begin(pos); err != nil {
		return 0, err
	}
	defer tb.closeMu.RUnlock()
	return tb.probeDTZ(pos)
}

// begin checks pos is one tablebases hold and takes the read lock that
// Close waits for; the caller releases it.
func (tb *Tablebase) begin(pos *engine.Position) error {
	if n := pos.Occupied().Count(); n > tb.maxPieces {
		return &PositionError{FEN: pos.FEN(), Msg: tooManyPieces(n, tb.maxPieces)}
	}
	if pos.CastlingRights() != 0 {
		return &PositionError{FEN: pos.FEN(), Msg: "has castling rights; tablebases hold positions without them"}
	}
	tb.closeMu.RLock()
	if tb.closed {
		tb.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

func tooManyPieces(n, most int) string {
	return fmt.Sprintf("has %d pieces; the tables here have at most %d", n, most)
}

// probeWDL resolves captures (en passant included) over the table value,
// as the tables assume the side to move never has a capture that matters.
// decided reports that the value comes from a capture (a winning one, or
// an en-passant capture that is the only best move): probeDTZ relies on it.
func (tb *Tablebase) probeWDL(pos *engine.Position) (v int, decided bool, err error) {
	var ml engine.MoveList
	if mayCapture(pos) {
		pos.GenerateMoves(&ml)
	}
	bestCap, bestEp := -3, -3
	for _, m := range ml.Slice() {
		if !pos.IsCapture(m) {
			continue
		}
		next := *pos
		next.MakeMove(m)
		v, err := tb.probeCaptures(&next, -2, -bestCap)
		if err != nil {
			return 0, false, err
		}
		v = -v
		if v <= bestCap {
			continue
		}
		if v == 2 {
			return 2, true, nil
		}
		if !m.IsEnPassant() {
			bestCap = v
		} else if v > bestEp {
			bestEp = v
		}
	}
	v, err = tb.probeWDLTable(pos)
	if err != nil {
		return 0, false, err
	}
	// max(v, bestCap) is the value without en-passant rights; an
	// en-passant capture better than both decides.
	if bestEp > bestCap {
		if bestEp > v {
			return bestEp, true, nil
		}
		bestCap = bestEp
	}
	if bestCap >= v {
		return bestCap, bestCap > 0, nil
	}
	// The table value assumes no en-passant right: if without it the side
	// to move would be stalemated, the en-passant capture is the value.
	if bestEp > -3 && v == 0 {
		onlyEp := true
		for _, m := range ml.Slice() {
			if !m.IsEnPassant() {
				onlyEp = false
				break
			}
		}
		if onlyEp && !pos.InCheck() {
			return bestEp, true, nil
		}
	}
	return v, false, nil
}

// mayCapture reports whether the side to move attacks an enemy piece or
// has an en-passant right. Without either it has no capture and the move
// generation (most of a probe's cost) is skipped; with one, the legal
// moves decide.
func mayCapture(pos *engine.Position) bool {
	if pos.EnPassant() != engine.NoSquare {
		return true
	}
	us := pos.SideToMove()
	for b := pos.ColorPieces(us.Other()) &^ pos.TypePieces(engine.King); b != 0; b &= b - 1 {
		if pos.AttackedBy(b.First(), us) {
			return true
		}
	}
	return false
}

// probeCaptures is an alpha-beta search over captures only, with the table
// value as the stand-pat score. pos has no en-passant right (it follows a
// capture).
func (tb *Tablebase) probeCaptures(pos *engine.Position, alpha, beta int) (int, error) {
	var ml engine.MoveList
	if mayCapture(pos) {
		pos.GenerateMoves(&ml)
	}
	for _, m := range ml.Slice() {
		if !pos.IsCapture(m) {
			continue
		}
		next := *pos
		next.MakeMove(m)
		v, err := tb.probeCaptures(&next, -beta, -alpha)
		if err != nil {
			return 0, err
		}
		if v = -v; v > alpha {
			if v >= beta {
				return v, nil
			}
			alpha = v
		}
	}
	v, err := tb.probeWDLTable(pos)
	if err != nil {
		return 0, err
	}
	return max(alpha, v), nil
}

// probeDTZ follows Syzygy's rules: zeroing moves (captures, pawn moves)
// are resolved by WDL probes; otherwise the DTZ table answers when it
// holds the side to move, and a one-ply search over the other side's
// values when it does not.
func (tb *Tablebase) probeDTZ(pos *engine.Position) (int, error) {
	wdl, decided, err := tb.probeWDL(pos)
	if err != nil || wdl == 0 {
		return 0, err
	}
	if decided {
		return wdlToDTZ[wdl+2], nil
	}
	var ml engine.MoveList
	pos.GenerateMoves(&ml)
	if wdl > 0 {
		// A pawn move that keeps the win zeroes at once.
		for _, m := range ml.Slice() {
			if pos.PieceAt(m.From()).Type() != engine.Pawn || pos.IsCapture(m) {
				continue
			}
			next := *pos
			next.MakeMove(m)
			v, _, err := tb.probeWDL(&next)
			if err != nil {
				return 0, err
			}
			if -v == wdl {
				return wdlToDTZ[wdl+2], nil
			}
		}
	}
	dtz, otherSide, err := tb.probeDTZTable(pos, wdl)
	if err != nil {
		return 0, err
	}
	if !otherSide {
		if wdl > 0 {
			return wdlToDTZ[wdl+2] + dtz, nil
		}
		return wdlToDTZ[wdl+2] - dtz, nil
	}
	return tb.dtzBySearch(pos, &ml, wdl)
}

// dtzBySearch finds the DTZ of a position whose side to move the DTZ table
// does not store, from its non-zeroing moves (zeroing ones were handled).
func (tb *Tablebase) dtzBySearch(pos *engine.Position, ml *engine.MoveList, wdl int) (int, error) {
	best := math.MaxInt32
	if wdl < 0 {
		// The worst a loser can do is a zeroing move into the loss.
		best = wdlToDTZ[wdl+2]
	}
	for _, m := range ml.Slice() {
		if pos.IsCapture(m) || pos.PieceAt(m.From()).Type() == engine.Pawn {
			continue
		}
		next := *pos
		next.MakeMove(m)
		v, err := tb.probeDTZ(&next)
		if err != nil {
			return 0, err
		}
		v = -v
		switch {
		case v == 1 && next.IsCheckmate():
			best = 1
		case wdl > 0:
			if v > 0 && v+1 < best {
				best = v + 1
			}
		default:
			best = min(best, v-1)
		}
	}
	return best, nil
}

// probeWDLTable reads the WDL table value of pos as it stands (captures
// and en passant not considered).
func (tb *Tablebase) probeWDLTable(pos *engine.Position) (int, error) {
	v, _, err := tb.probeTable(pos, kindWDL, 0)
	return v, err
}

// probeDTZTable reads the DTZ table value of pos, whose WDL is wdl.
// otherSide reports that the table stores the other side to move only.
func (tb *Tablebase) probeDTZTable(pos *engine.Position, wdl int) (int, bool, error) {
	return tb.probeTable(pos, kindDTZ, wdl)
}

// probeTable finds pos in the table of its material.
func (tb *Tablebase) probeTable(pos *engine.Position, kind tableKind, wdl int) (int, bool, error) {
	if kind == kindWDL && pos.Occupied() == pos.TypePieces(engine.King) {
		return 0, false, nil // king against king
	}
	e, key, err := tb.entryFor(pos)
	if err != nil {
		return 0, false, err
	}
	t, err := tb.table(e, kind)
	if err != nil {
		return 0, false, err
	}
	// flip: the position's White plays the table's Black. blackSide: the
	// side to move is the table's Black.
	flip := pos.SideToMove() != engine.White
	blackSide := false
	if !e.symmetric {
		flip = key != e.key
		blackSide = (pos.SideToMove() == engine.White) == flip
	}
	var p [maxTablePieces]int
	ei, sub, otherSide, err := t.locate(pos, e, kind, flip, blackSide, &p)
	if err != nil || otherSide {
		return 0, otherSide, err
	}
	idx, ok := e.index(&p, ei)
	if !ok {
		return 0, false, corrupt(t.path, "piece header puts two kings next to each other for %s", pos.FEN())
	}
	b0, b1, err := ei.pairs.value(idx)
	if err != nil {
		return 0, false, err
	}
	if kind == kindWDL {
		if b0 > 4 {
			return 0, false, corrupt(t.path, "WDL value %d (want 0..4) for %s", b0, pos.FEN())
		}
		return int(b0) - 2, false, nil
	}
	v := int(b0) | int(b1&0xf)<<8
	flags := t.dtzFlags[sub]
	if flags&dtzFlagMapped != 0 {
		if v, err = t.mappedDTZ(sub, wdlToDTZMap[wdl+2], v); err != nil {
			return 0, false, err
		}
	}
	if flags&dtzPlyFlag[wdl+2] == 0 || wdl&1 != 0 {
		v *= 2
	}
	return v, false, nil
}

// locate picks the sub-table of pos and fills p with its squares in that
// sub-table's piece order. otherSide reports a DTZ table that does not
// store this side to move.
func (t *tableFile) locate(pos *engine.Position, e *tableEntry, kind tableKind, flip, blackSide bool, p *[maxTablePieces]int) (ei *encInfo, sub int, otherSide bool, err error) {
	side := 0
	if blackSide && kind == kindWDL {
		side = 1
	}
	storesSide := func(sub int) bool {
		return kind != kindDTZ || e.symmetric || (t.dtzFlags[sub]&dtzFlagBlackToMove != 0) == blackSide
	}
	mirror := 0
	i := 0
	if e.hasPawns {
		if flip {
			mirror = 0x38 // the table's White moves up the board
		}
		if i, err = fillSquares(t.path, pos, t.enc[0][0].pieces[0], flip, mirror, p, 0, e.num); err != nil {
			return nil, 0, false, err
		}
		sub = leadingPawnSubTable(p, e.pawns[0])
	}
	if !storesSide(sub) {
		return nil, sub, true, nil
	}
	ei = t.enc[side][sub]
	if ei == nil {
		return nil, 0, false, corrupt(t.path, "holds no values for %s to move", pos.SideToMove())
	}
	for i < e.num {
		if i, err = fillSquares(t.path, pos, ei.pieces[i], flip, mirror, p, i, e.num); err != nil {
			return nil, 0, false, err
		}
	}
	return ei, sub, false, nil
}
