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

// checkEngineSyzygy refuses an engine's syzygy_pieces (the embedded
// engine probing the worker's tables in search) out of range or on an
// engine other than the embedded one, as an *apierr.Error naming it.
func checkEngineSyzygy(which string, e *arbiterv1.EngineSpec) error {
	n := e.GetSyzygyPieces()
	if n == 0 {
		return nil
	}
	q := apierr.Q(e.GetName())
	if !matchspec.IsBuiltin(e) {
		return apierr.Invalid("%s %s: syzygy pieces: only the builtin engine probes the workers' tables", which, q)
	}
	if n < 3 || n > 7 {
		return apierr.Invalid("%s %s: syzygy pieces %d: want 3 to 7", which, q, n)
	}
	return nil
}

// fitsEngineSyzygy says why a worker with caps cannot play engine e of a
// test ("" when it can): an engine probing tables in search needs a
// worker that passes them (an older one would play without) and has
// tables of that many pieces.
func fitsEngineSyzygy(e *arbiterv1.EngineSpec, caps core.Caps) string {
	n := int(e.GetSyzygyPieces())
	switch {
	case n == 0:
		return ""
	case !caps.Has(capability.EngineSyzygy):
		return "the worker passes no Syzygy tables to engines (an older version, or no --syzygy DIR)"
	case !caps.Has(capability.Syzygy(n)):
		return fmt.Sprintf("engine %s probes Syzygy tables of %d pieces; the worker has none that size (arbiter worker --syzygy DIR)", e.GetName(), n)
	}
	return ""
}
