package gamepair

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// FitsTablebase says why a worker with caps cannot play a test adjudicated
// by tablebases ("" when it can): it needs Syzygy tables of the test's
// pieces (arbiter worker --syzygy DIR).
func FitsTablebase(adj *arbiterv1.Adjudication, caps core.Caps) string {
	t := adj.GetTablebase()
	if t == nil {
		return ""
	}
	if !caps.Has(capability.Syzygy(int(t.GetPieces()))) {
		return fmt.Sprintf("the test adjudicates by Syzygy tables of %d pieces; the worker has none that size (arbiter worker --syzygy DIR)", t.GetPieces())
	}
	return ""
}

// CheckTablebase refuses a spec's tablebase request out of range, as an
// *apierr.Error naming it.
func CheckTablebase(adj *arbiterv1.Adjudication) error {
	if err := matchspec.CheckTablebase(adj); err != nil {
		return apierr.Invalid("%v", err)
	}
	return nil
}
