package web

import (
	"context"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// VerifySessions is what the list reads of verify sessions (its "Verify
// sessions" table; a session's page, /verify/{id}, registers from the
// kind): the workload of the verify kind (kinds/verify), a floor above
// this package, answers it, so the list names no kind's package.
type VerifySessions interface {
	// Sessions returns live sessions, then reported ones, skipping offset
	// of them, at most limit, and the number in all.
	Sessions(ctx context.Context, offset, limit int) ([]verifyproto.SessionView, int, error)
	// Session returns one session, live or reported (UNKNOWN_JOB when
	// neither).
	Session(ctx context.Context, sid string) (verifyproto.SessionView, error)
	// Reports returns a session's stored position reports, skipping offset
	// of them, at most limit.
	Reports(ctx context.Context, sid string, offset, limit int) ([]*arbiterv1.VerifyPositionReport, error)
}

// verifySessionsOf is the workload of c that keeps verify sessions, nil
// when none does.
func verifySessionsOf(c *core.Core) VerifySessions {
	for _, wl := range c.Workloads() {
		if vs, ok := wl.(VerifySessions); ok {
			return vs
		}
	}
	return nil
}
