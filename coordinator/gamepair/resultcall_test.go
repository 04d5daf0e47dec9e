package gamepair

import (
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A result of another kind is malformed; a unit id that names no batch is
// unknown; a good one is split into its job and batch.
func TestResultOf(t *testing.T) {
	call := func(unit string, res any) core.ResultCall {
		rc := core.ResultCall{Result: res}
		rc.Lease.UnitID = unit
		return rc
	}
	good := &arbiterv1.GamePairBatchResult{}
	if _, _, _, err := ResultOf(call("s1.3", &arbiterv1.PerftBatchResult{})); apierr.ReasonOf(err) != apierr.ReasonMalformedResult {
		t.Errorf("a perft result: %v", err)
	}
	for _, unit := range []string{"s1", "s1.x", "s1.-1", ".3"} {
		if _, _, _, err := ResultOf(call(unit, good)); apierr.ReasonOf(err) != apierr.ReasonUnknownUnit {
			t.Errorf("unit %q: %v", unit, err)
		}
	}
	if r, job, idx, err := ResultOf(call("s1.a.3", good)); err != nil || r != good || job != "s1.a" || idx != 3 {
		t.Errorf("unit s1.a.3: %v %q %d %v", r, job, idx, err)
	}
}
