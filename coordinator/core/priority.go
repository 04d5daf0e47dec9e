package core

import (
	"context"
	"math"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// Bounds of what a client may set for a job's scheduling.
const (
	// MinPriority and MaxPriority bound a job's priority; the workloads'
	// own priorities (verify units) lie outside, above.
	MinPriority, MaxPriority = -1000, 1000
	// MaxShare bounds a job's throughput weight.
	MaxShare = 1e6
)

// Prioritizer is a workload whose running jobs' priority and throughput
// share can change. SetPriority stores the change before it applies it, and
// refuses a job that is no longer running (FAILED_PRECONDITION).
type Prioritizer interface {
	SetPriority(ctx context.Context, jobID string, priority int32, share float64) error
}

// SetPriority changes a running job's priority and throughput share on
// behalf of caller (its submitter, an approver or an admin). The next lease is scheduled
// with them.
func (c *Core) SetPriority(ctx context.Context, caller identity.Identity, jobID string, priority int32, share float64) error {
	if err := c.mayManage(ctx, caller, jobID, "change"); err != nil {
		return err
	}
	if priority < MinPriority || priority > MaxPriority {
		return apierr.Invalid("priority %d: must be between %d and %d", priority, MinPriority, MaxPriority)
	}
	if math.IsNaN(share) || share <= 0 || share > MaxShare {
		return apierr.Invalid("throughput %v: must be above 0 and at most %g", share, float64(MaxShare))
	}
	p, ok := c.reg.workload(jobID).(Prioritizer)
	if !ok {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "job %s: its priority cannot change", jobID)
	}
	if err := p.SetPriority(ctx, jobID, priority, share); err != nil {
		return err
	}
	c.recordAudit(ctx, caller, "job.priority", jobID, Modification{Priority: &priority, Share: &share}.String())
	c.reg.changed(jobID)
	c.wake.signal()
	return nil
}
