package datagen

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
)

// Tablebase adjudication of datagen games (`arbiter datagen --tb DIR
// --tb-pieces N [--tb-rescore]`), by the match loop's rule
// (match.TablebaseAdjudication: probed at 50-move counter 0 only, cursed
// wins and blessed losses are draws).
//
// Invariants:
//   - A game ends by TermTablebase only right after an engine move, in a
//     position the rule probes (counter 0, no castling rights); DecodeShard
//     refuses any other (tablebaseEnd), CheckBatch refuses it when the
//     settings ask for no tables.
//   - Rescoring never changes a record whose position the tables cannot
//     answer for with the 50-move rule counted (RescoreRecords).

// MaxTBPieces bounds Tablebase.Pieces (Syzygy tables exist up to 7).
const MaxTBPieces = 7

// Tablebase is the datagen's tablebase rule and the machine's tables.
type Tablebase struct {
	// Tables are this machine's tables (nil: off). They are not part of
	// what decides a batch: two machines with the same tables play the
	// same games.
	Tables *syzygy.Tablebase
	// Pieces is the most pieces of an adjudicated position (0: as many as
	// the tables have).
	Pieces int
	// Rescore sets each record's result by its own position's WDL where
	// the tables answer for it (RescoreRecords).
	Rescore bool
	// Warn hears of absent tables, once per table.
	Warn func(string)
}

func (t Tablebase) validate() error {
	switch {
	case t.Pieces < 0 || t.Pieces > MaxTBPieces || (t.Pieces > 0 && t.Pieces < 3):
		return fmt.Errorf("tb-pieces: %d: must be 0 (as many as the tables have) or between 3 and %d", t.Pieces, MaxTBPieces)
	case t.Tables == nil && t.Rescore:
		return fmt.Errorf("tb-rescore: needs the tables (--tb DIR)")
	}
	return nil
}

// adjudication is the game loop's rule (nil: off). A dataset that asks
// for tables of Pieces pieces cannot be played without them (a farm
// worker without --syzygy, or with fewer pieces).
func (t Tablebase) adjudication() (*match.TablebaseAdjudication, error) {
	if t.Tables == nil {
		if t.Pieces > 0 {
			return nil, fmt.Errorf("tb-pieces: the dataset adjudicates by Syzygy tables of %d pieces; there are no tables here (arbiter worker --syzygy DIR)", t.Pieces)
		}
		return nil, nil
	}
	if t.Pieces > t.Tables.MaxPieces() {
		return nil, fmt.Errorf("tb-pieces: the dataset adjudicates by Syzygy tables of %d pieces; the tables here have %d", t.Pieces, t.Tables.MaxPieces())
	}
	return &match.TablebaseAdjudication{TBRule: match.TBRule{Pieces: t.Pieces}, Tables: t.Tables, Warn: t.Warn}, nil
}

// tablebaseEnd refuses a final position the tablebase rule never probes.
func tablebaseEnd(pos *engine.Position) error {
	if pos.HalfmoveClock() != 0 || pos.CastlingRights() != 0 || pos.Occupied().Count() > MaxTBPieces {
		return fmt.Errorf("tablebase adjudication in %s, a position the rule never probes (it probes at 50-move counter 0, without castling rights)", pos.FEN())
	}
	return nil
}

// RescoreRecords sets the result of each record whose position the tables
// answer for to that position's own verdict, and returns how many
// changed. With the 50-move rule counted: at counter 0 the WDL is the
// verdict (a cursed win or blessed loss is a draw); at a later counter a
// drawn WDL is a draw, and a win stands only when its distance to zeroing
// plus the counter stays under 100 plies with a ply to spare (Syzygy's DTZ
// may be one ply short); anything else keeps the game's result.
func RescoreRecords(recs []Record, t Tablebase) int {
	if t.Tables == nil {
		return 0
	}
	most := t.Tables.MaxPieces()
	if t.Pieces > 0 {
		most = min(most, t.Pieces)
	}
	changed := 0
	for i := range recs {
		pos, err := engine.ParseFEN(recs[i].FEN)
		if err != nil || pos.CastlingRights() != 0 || pos.Occupied().Count() > most {
			continue
		}
		r, ok := verdictAt(t.Tables, &pos)
		if ok && r != recs[i].Result {
			recs[i].Result = r
			changed++
		}
	}
	return changed
}

// verdictAt is pos's result by the tables with its 50-move counter, White
// relative; ok is false when they cannot say.
func verdictAt(tables *syzygy.Tablebase, pos *engine.Position) (Result, bool) {
	wdl, err := tables.ProbeWDL(pos)
	if err != nil {
		return NoResult, false
	}
	counter := pos.HalfmoveClock()
	switch {
	case wdl == syzygy.Draw || wdl == syzygy.CursedWin || wdl == syzygy.BlessedLoss:
		return Draw, true
	case counter > 0:
		dtz, err := tables.ProbeDTZ(pos)
		if err != nil || abs(dtz)+counter >= 99 {
			return NoResult, false
		}
	}
	if (wdl > 0) == (pos.SideToMove() == engine.White) {
		return WhiteWins, true
	}
	return BlackWins, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
