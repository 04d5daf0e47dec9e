package core

import (
	"context"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// Failer is a workload whose running jobs the coordinator itself may end
// as failed (a test no worker can start, say). Fail stores the failed
// state with its reason before it applies it, and refuses a job that is no
// longer running (FAILED_PRECONDITION).
type Failer interface {
	Fail(ctx context.Context, jobID, reason string) error
}

// Fail ends a running job as failed with reason, on the coordinator's own
// behalf (no caller: nothing a client asked for), and ends its leases.
func (c *Core) Fail(ctx context.Context, jobID, reason string) error {
	wl := c.reg.workload(jobID)
	if wl == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	f, ok := wl.(Failer)
	if !ok {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "job %s: a %s job cannot be failed", jobID, wl.Kind())
	}
	if err := f.Fail(ctx, jobID, reason); err != nil {
		return err
	}
	c.mu.Lock()
	c.endJobLeases(jobID)
	c.mu.Unlock()
	c.reg.changed(jobID)
	return nil
}
