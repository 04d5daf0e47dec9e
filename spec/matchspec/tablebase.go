package matchspec

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// MaxTBPieces bounds a test's tablebase pieces: Syzygy tables exist up to
// 7 pieces.
const MaxTBPieces = 7

// tbResults pairs the wire's tablebase results with the match library's;
// the one table both directions read.
var tbResults = []struct {
	wire arbiterv1.TablebaseResults
	lib  match.TBResults
}{
	{arbiterv1.TablebaseResults_TABLEBASE_RESULTS_BOTH, match.TBBoth},
	{arbiterv1.TablebaseResults_TABLEBASE_RESULTS_WIN_LOSS, match.TBWinLoss},
	{arbiterv1.TablebaseResults_TABLEBASE_RESULTS_DRAW, match.TBDraw},
}

// tbRuleToProto is nil (off) for a rule of no pieces.
func tbRuleToProto(r match.TBRule) *arbiterv1.TablebaseAdjudication {
	if r.Pieces <= 0 {
		return nil
	}
	t := &arbiterv1.TablebaseAdjudication{Pieces: uint32(r.Pieces), Ignore_50MoveRule: r.Ignore50}
	for _, e := range tbResults {
		if e.lib == r.Results {
			t.Results = e.wire
		}
	}
	return t
}

// tbRuleFromProto is the zero rule (off) for nil. CheckTablebase refuses
// what is out of range before a test is accepted.
func tbRuleFromProto(t *arbiterv1.TablebaseAdjudication) match.TBRule {
	if t == nil {
		return match.TBRule{}
	}
	r := match.TBRule{Pieces: int(min(t.GetPieces(), MaxTBPieces+1)), Ignore50: t.GetIgnore_50MoveRule(), Results: match.TBBoth}
	for _, e := range tbResults {
		if e.wire == t.GetResults() {
			r.Results = e.lib
		}
	}
	return r
}

// CheckTablebase refuses a tablebase request a test cannot carry.
func CheckTablebase(a *arbiterv1.Adjudication) error {
	t := a.GetTablebase()
	if t == nil {
		return nil
	}
	if p := t.GetPieces(); p < 3 || p > MaxTBPieces {
		return fmt.Errorf("adjudication.tablebase.pieces: %d is not in 3..%d", p, MaxTBPieces)
	}
	switch t.GetResults() {
	case arbiterv1.TablebaseResults_TABLEBASE_RESULTS_UNSPECIFIED, arbiterv1.TablebaseResults_TABLEBASE_RESULTS_WIN_LOSS,
		arbiterv1.TablebaseResults_TABLEBASE_RESULTS_DRAW, arbiterv1.TablebaseResults_TABLEBASE_RESULTS_BOTH:
	default:
		return fmt.Errorf("adjudication.tablebase.results: %d is not a TablebaseResults", t.GetResults())
	}
	return nil
}
