package core

import (
	"context"
	"fmt"
	"sort"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Pending jobs.
//
// A job whose submitter the Approvals rule holds is created and stored as
// any other, but is pending: the core offers none of its units to any
// worker until an approver approves it; a refusal cancels it. Whether a job
// is pending is the core's (held, in memory, rebuilt from the Approvals'
// record at Load), not the workload's: every kind gets approval without
// knowing of it. Snapshots and lists show such a job as pending.
//
// A job becomes pending in the same Create that stores it. Between the
// workload's Create and the core marking the job held, the core refuses
// every candidate job it does not know yet (creatingHeld), so not one unit
// of a pending job is ever leased.

// Approvals is the rule and record of approvals the core consults; nil
// (Config.Approvals): no job waits.
type Approvals interface {
	// Hold reports whether a new job of kind by caller waits for an approver.
	Hold(ctx context.Context, caller identity.Identity, kind string) (bool, error)
	// Requested records durably that jobID of submitter waits.
	Requested(ctx context.Context, jobID, submitter string) error
	// Pending returns the ids of the jobs waiting (read at Load).
	Pending(ctx context.Context) ([]string, error)
	// Decide checks that caller may decide jobID of submitter, and
	// records the approval or refusal.
	Decide(ctx context.Context, caller identity.Identity, jobID, submitter string, approve bool, reason string) error
	// MayApprove reports whether caller is an approver (or an admin): one
	// who may also change, stop and resume other people's jobs.
	MayApprove(ctx context.Context, caller identity.Identity) bool
	// MayDecide is nil when caller may approve or refuse (verb) jobID of
	// submitter, else the refusal Decide would give.
	MayDecide(ctx context.Context, caller identity.Identity, jobID, submitter, verb string) error
}

// Auditor records who did what (*store.Store's Audit).
type Auditor interface {
	Audit(ctx context.Context, e store.AuditEntry) error
}

// audit records an action; a failure is logged, not returned: the action
// is done and stored by then.
func (c *Core) audit(ctx context.Context, actor, action, target, detail string) {
	if c.cfg.Auditor == nil {
		return
	}
	if err := c.cfg.Auditor.Audit(ctx, store.AuditEntry{At: c.cfg.Now(), Actor: actor, Action: action, Target: target, Detail: detail}); err != nil {
		c.log.Error("audit entry not stored", zap.String("action", action), zap.String("target", target), zap.Error(err))
	}
}

// loadHeld marks the jobs the Approvals record as waiting. Caller: Load,
// after the workloads loaded.
func (c *Core) loadHeld(ctx context.Context) error {
	if c.cfg.Approvals == nil {
		return nil
	}
	ids, err := c.cfg.Approvals.Pending(ctx)
	if err != nil {
		return fmt.Errorf("core: pending approvals: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		wl := c.reg.workload(id)
		if wl == nil {
			continue
		}
		// A job cancelled while it waited stays decided by its cancel.
		if d, ok := wl.(Describer); ok {
			if info, ok := d.Describe(id); !ok || info.State != store.StateRunning {
				continue
			}
		}
		c.held[id] = true
	}
	return nil
}

// mayOffer reports whether pick may offer a unit of jobID. Caller holds mu.
func (c *Core) mayOffer(jobID string) bool {
	if c.held[jobID] {
		return false
	}
	if c.creatingHeld > 0 {
		_, known := c.reg.ref(jobID)
		return known
	}
	return true
}

// Pending reports whether a job waits for approval.
func (c *Core) Pending(jobID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[jobID]
}

// heldSet is a copy of the held jobs (nil for none), for a list to check
// without taking the core's lock per job.
func (c *Core) heldSet() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held) == 0 {
		return nil
	}
	out := make(map[string]bool, len(c.held))
	for id := range c.held {
		out[id] = true
	}
	return out
}

// PendingJobs returns the jobs waiting for approval, oldest first. It
// reads only those jobs, so the front page costs nothing more with many
// stored jobs.
func (c *Core) PendingJobs() []JobInfo {
	c.mu.Lock()
	ids := make([]string, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	type row struct {
		seq  int64
		info JobInfo
	}
	var rows []row
	for _, id := range ids {
		ref, ok := c.reg.ref(id)
		wl := c.reg.workload(id)
		if !ok || wl == nil {
			continue
		}
		info := JobInfo{ID: id, Kind: wl.Kind(), Submitter: ref.Submitter, State: StatePending}
		if d, ok := wl.(Describer); ok {
			di, known := d.Describe(id)
			if !known || di.State != store.StateRunning {
				continue
			}
			info.Kind = di.Kind
		}
		rows = append(rows, row{ref.Seq, info})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].seq < rows[j].seq })
	out := make([]JobInfo, len(rows))
	for i, r := range rows {
		out[i] = r.info
	}
	return out
}

// StatePending is JobInfo.State of a job waiting for approval.
const StatePending = "pending"

// Approve lets a pending job run, on behalf of an approver.
func (c *Core) Approve(ctx context.Context, caller identity.Identity, jobID string) error {
	return c.decide(ctx, caller, jobID, true, "")
}

// Refuse cancels a pending job, on behalf of an approver, with reason.
func (c *Core) Refuse(ctx context.Context, caller identity.Identity, jobID, reason string) error {
	return c.decide(ctx, caller, jobID, false, reason)
}

// MayDecide reports whether caller may approve or refuse pending job
// jobID (the approvals' own rule, as Approve applies it).
func (c *Core) MayDecide(ctx context.Context, caller identity.Identity, jobID string) bool {
	ref, ok := c.reg.ref(jobID)
	return ok && c.cfg.Approvals != nil && c.cfg.Approvals.MayDecide(ctx, caller, jobID, ref.Submitter, "approve") == nil
}

func (c *Core) decide(ctx context.Context, caller identity.Identity, jobID string, approve bool, reason string) error {
	if c.cfg.Approvals == nil {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "this coordinator takes no approvals")
	}
	ref, ok := c.reg.ref(jobID)
	if !ok {
		return unknownJob(jobID)
	}
	if !c.Pending(jobID) {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "job %s does not wait for approval", apierr.Q(jobID))
	}
	if err := c.cfg.Approvals.Decide(ctx, caller, jobID, ref.Submitter, approve, reason); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.held, jobID)
	c.mu.Unlock()
	if approve {
		c.log.Info("job approved", zap.String(logging.JobID, jobID), zap.String("approver", caller.Name))
		c.reg.changed(jobID)
		c.wake.signal()
		return nil
	}
	why := "refused by " + caller.Name
	if reason != "" {
		why += ": " + reason
	}
	c.log.Info("job refused", zap.String(logging.JobID, jobID), zap.String("approver", caller.Name))
	if err := c.reg.workload(jobID).Cancel(ctx, jobID, why); err != nil {
		return err
	}
	c.reg.changed(jobID)
	return nil
}
