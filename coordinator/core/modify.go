package core

import (
	"context"
	"fmt"
	"math"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
)

// Changing a running job (Modify), running a stopped one again (Resume),
// and the audit call site every such action goes through.

// Modification is what Modify changes; nil fields (and SetTags false)
// stay as they are.
type Modification struct {
	Priority *int32
	Share    *float64
	// Games is the new game cap (an SPRT: 0 for none).
	Games   *uint64
	Notes   *string
	SetTags bool
	Tags    []string
}

// String describes the change for logs and the audit log.
func (m Modification) String() string {
	var parts []string
	if m.Priority != nil {
		parts = append(parts, fmt.Sprintf("priority %d", *m.Priority))
	}
	if m.Share != nil {
		parts = append(parts, fmt.Sprintf("throughput %g", *m.Share))
	}
	if m.Games != nil {
		parts = append(parts, fmt.Sprintf("games %d", *m.Games))
	}
	if m.Notes != nil {
		parts = append(parts, fmt.Sprintf("notes (%d bytes)", len(*m.Notes)))
	}
	if m.SetTags {
		parts = append(parts, "tags ["+strings.Join(m.Tags, ", ")+"]")
	}
	return strings.Join(parts, ", ")
}

// Empty reports whether m changes nothing.
func (m Modification) Empty() bool {
	return m.Priority == nil && m.Share == nil && m.Games == nil && m.Notes == nil && !m.SetTags
}

// Modifier is a workload whose running jobs change while they run beyond
// priority and share (Prioritizer): game cap, notes, tags. Modify checks
// the values (INVALID_ARGUMENT naming the field), stores the change, then
// applies it; a job that is no longer running is FAILED_PRECONDITION.
type Modifier interface {
	Modify(ctx context.Context, jobID string, m Modification) error
}

// Resumer is a workload whose stopped (cancelled) jobs can run again from
// where they stood.
type Resumer interface {
	Resume(ctx context.Context, jobID string) error
}

// checkSchedule refuses a priority or share out of bounds.
func checkSchedule(priority *int32, share *float64) error {
	if priority != nil && (*priority < MinPriority || *priority > MaxPriority) {
		return apierr.Invalid("priority %d: must be between %d and %d", *priority, MinPriority, MaxPriority)
	}
	if share != nil && (math.IsNaN(*share) || *share <= 0 || *share > MaxShare) {
		return apierr.Invalid("throughput %v: must be above 0 and at most %g", *share, float64(MaxShare))
	}
	return nil
}

// Modify changes a running job on behalf of caller (its submitter or an
// admin): the next lease is scheduled with the change.
func (c *Core) Modify(ctx context.Context, caller identity.Identity, jobID string, m Modification) error {
	if err := c.mayManage(ctx, caller, jobID, "change"); err != nil {
		return err
	}
	if m.Empty() {
		return apierr.Invalid("nothing to change: give priority, throughput, games, notes or tags")
	}
	if err := checkSchedule(m.Priority, m.Share); err != nil {
		return err
	}
	md, ok := c.reg.workload(jobID).(Modifier)
	if !ok {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "job %s: only tests change while they run", jobID)
	}
	if err := md.Modify(ctx, jobID, m); err != nil {
		return err
	}
	c.recordAudit(ctx, caller, "job.modify", jobID, m.String())
	c.reg.changed(jobID)
	c.wake.signal()
	return nil
}

// Resume runs a cancelled job again on behalf of caller (its submitter or
// an admin); what it counted stays counted.
func (c *Core) Resume(ctx context.Context, caller identity.Identity, jobID string) error {
	if err := c.mayManage(ctx, caller, jobID, "resume"); err != nil {
		return err
	}
	rs, ok := c.reg.workload(jobID).(Resumer)
	if !ok {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "job %s: only tests can be resumed", jobID)
	}
	if err := rs.Resume(ctx, jobID); err != nil {
		return err
	}
	c.recordAudit(ctx, caller, "job.resume", jobID, "")
	c.reg.changed(jobID)
	c.wake.signal()
	return nil
}

// recordAudit is the one call site of the audit log for what the core
// does on someone's behalf: action is "<object>.<verb>" as the audit log
// names it elsewhere ("job.cancel", "job.priority", "job.modify",
// "job.resume", "job.reschedule", "worker.block", "worker.unblock"),
// target a job id or a block's key ("worker:ID", "identity:NAME"), detail
// what changed. The entry goes to the log and to Config.Auditor (the
// store's audit table) when set.
func (c *Core) recordAudit(ctx context.Context, who identity.Identity, action, target, detail string) {
	c.log.Info("audit: "+action, auditFields(who, target, detail)...)
	c.audit(ctx, who.Name, action, target, detail)
}

// RecordAudit records an action taken outside the core (a reschedule, a
// block) through the same call site.
func (c *Core) RecordAudit(ctx context.Context, who identity.Identity, action, target, detail string) {
	c.recordAudit(ctx, who, action, target, detail)
}

func auditFields(who identity.Identity, target, detail string) []zap.Field {
	return []zap.Field{zap.String("by", who.Name), zap.String("role", string(who.Role)), zap.String(logging.JobID, target), zap.String("detail", detail)}
}
