package match

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

// Tablebase adjudication ends a game by the Syzygy tables' win/draw/loss
// of its position, as fastchess's -tb, -tbpieces and -tbadjudicate do.
//
// Invariants:
//   - A position is probed only when the 50-move counter is 0 (right after
//     the capture or pawn move that entered the table), it has no castling
//     rights and at most Pieces pieces. At counter 0 the table's WDL is the
//     game's value under the 50-move rule, so a cursed win or a blessed
//     loss (WDL ±1) is a draw unless Ignore50 says otherwise; a position
//     reached with a nonzero counter is never probed (its WDL would not
//     account for the moves already spent).
//   - Rules come first: a position over by the rules (mate, stalemate, ...)
//     is never adjudicated. The tables come before the score adjudications.
//   - TablebaseVerdict is the one place the rule lives: the game loop, the
//     coordinator's replay of a batch and datagen all call it.
//   - An absent table is not an error of the game: that position is not
//     adjudicated, and the first time each missing table is met the
//     adjudicator's Warn says so, once per table, never per position.

// TBResults selects which verdicts of the tables end a game
// (fastchess's -tbadjudicate WIN_LOSS|DRAW|BOTH).
type TBResults uint8

const (
	TBWinLoss TBResults            = 1 << iota // decisive verdicts end the game
	TBDraw                                     // drawn verdicts end the game
	TBBoth    = TBWinLoss | TBDraw             // fastchess's default
)

// ParseTBResults reads WIN_LOSS, DRAW or BOTH (any case; win-loss too).
func ParseTBResults(s string) (TBResults, error) {
	switch strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(s)), "-", "_") {
	case "WIN_LOSS":
		return TBWinLoss, nil
	case "DRAW":
		return TBDraw, nil
	case "BOTH":
		return TBBoth, nil
	}
	return 0, fmt.Errorf("%q is not WIN_LOSS, DRAW or BOTH", s)
}

func (r TBResults) String() string {
	switch r {
	case TBWinLoss:
		return "WIN_LOSS"
	case TBDraw:
		return "DRAW"
	case TBBoth:
		return "BOTH"
	}
	return fmt.Sprintf("TBResults(%d)", uint8(r))
}

// The reasons fastchess writes (its PGN's last comment) for a tablebase
// adjudication; the replay of a batch recognises the claim by them.
const (
	TBWinReasonFormat = "%s wins by adjudication: SyzygyTB"
	TBDrawReason      = "Draw by adjudication: SyzygyTB"
	tbReasonSuffix    = "by adjudication: SyzygyTB"
)

// IsTBReason reports whether reason is a tablebase adjudication's.
func IsTBReason(reason string) bool { return strings.HasSuffix(reason, tbReasonSuffix) }

// TBProber is what adjudication needs of the tables (*syzygy.Tablebase).
type TBProber interface {
	ProbeWDL(pos *engine.Position) (syzygy.WDL, error)
	MaxPieces() int
}

// TBRule is what a test asks of tablebase adjudication; it travels with
// the test (Adjudication.Tablebase), the tables do not.
type TBRule struct {
	// Pieces is the most pieces (kings included) a probed position may
	// have; 0 means as many as the tables have (a local match only: on
	// the cluster, 0 is off).
	Pieces int
	// Results selects the verdicts that end a game; 0 means TBBoth.
	Results TBResults
	// Ignore50 takes cursed wins and blessed losses as wins and losses
	// (fastchess's -tbignore50).
	Ignore50 bool
}

// TablebaseAdjudication is a rule with the tables that apply it. One value
// is shared by every game of a match (its Warn-once set is), so pass it by
// pointer.
type TablebaseAdjudication struct {
	TBRule
	Tables TBProber
	// Warn, when set, is told once per absent or unreadable table.
	Warn func(msg string)

	mu     sync.Mutex
	warned map[string]bool
}

// Eligible reports whether pos is one the rule probes: counter 0, no
// castling rights, few enough pieces. It needs no tables.
func (t *TablebaseAdjudication) Eligible(pos *engine.Position) bool {
	most := t.Pieces
	if t.Tables != nil && (most == 0 || most > t.Tables.MaxPieces()) {
		most = t.Tables.MaxPieces()
	}
	return pos.HalfmoveClock() == 0 && pos.CastlingRights() == 0 && pos.Occupied().Count() <= most
}

// TablebaseVerdict probes pos (not over by the rules) and returns the
// result and PGN reason when the tables end the game there. ok is false
// when the position is not eligible, its table is absent (Warn hears of it
// once), or the verdict is one Results does not adjudicate.
func (t *TablebaseAdjudication) TablebaseVerdict(pos *engine.Position) (r Result, reason string, ok bool) {
	r, reason, ok, err := t.Verdict(pos)
	if err != nil {
		t.warnOnce(err)
	}
	return r, reason, ok
}

// Verdict is TablebaseVerdict with the probe's error (a *syzygy.MissingTableError
// for an absent table), for callers that must tell "no verdict" from
// "could not probe" (the coordinator's replay).
func (t *TablebaseAdjudication) Verdict(pos *engine.Position) (r Result, reason string, ok bool, err error) {
	if t == nil || t.Tables == nil || !t.Eligible(pos) {
		return NoResult, "", false, nil
	}
	wdl, err := t.Tables.ProbeWDL(pos)
	if err != nil {
		return NoResult, "", false, err
	}
	if !t.Ignore50 && (wdl == syzygy.CursedWin || wdl == syzygy.BlessedLoss) {
		wdl = syzygy.Draw
	}
	results := t.Results
	if results == 0 {
		results = TBBoth
	}
	stm := pos.SideToMove()
	switch {
	case wdl == syzygy.Draw && results&TBDraw != 0:
		return Draw, TBDrawReason, true, nil
	case wdl > 0 && results&TBWinLoss != 0:
		return winFor(stm), fmt.Sprintf(TBWinReasonFormat, colorName(stm)), true, nil
	case wdl < 0 && results&TBWinLoss != 0:
		return winFor(stm.Other()), fmt.Sprintf(TBWinReasonFormat, colorName(stm.Other())), true, nil
	}
	return NoResult, "", false, nil
}

func winFor(c engine.Color) Result {
	if c == engine.White {
		return WhiteWins
	}
	return BlackWins
}

// warnOnce tells Warn about err the first time its table fails.
func (t *TablebaseAdjudication) warnOnce(err error) {
	key := err.Error()
	var missing *syzygy.MissingTableError
	if errors.As(err, &missing) {
		key = missing.Name
	}
	t.mu.Lock()
	first := !t.warned[key]
	if first {
		if t.warned == nil {
			t.warned = map[string]bool{}
		}
		t.warned[key] = true
	}
	t.mu.Unlock()
	if first && t.Warn != nil {
		if missing != nil {
			t.Warn(fmt.Sprintf("tablebase adjudication: table %s is absent; its positions are not adjudicated", missing.Name))
		} else {
			t.Warn(fmt.Sprintf("tablebase adjudication: %v; that position is not adjudicated", err))
		}
	}
}
