package accounts

import (
	"context"
	"errors"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Gate is the approval rule the core asks (core.Approvals): a job of a
// kind that runs submitted code, submitted by an account with role user,
// waits for an approver, when approvals are on. Credentials an admin made
// (not an account's) and approvers' and admins' jobs never wait: those are
// already trusted.
//
// Which kinds run submitted code is the kinds' own declaration
// (workload.Kind.Runs, read through runsSubmittedCode), never a list kept
// here: a kind added later is held the day it registers.
type Gate struct {
	s                 *Service
	runsSubmittedCode func(kind string) bool
}

// Gate returns the approval rule; runsSubmittedCode answers, for a kind,
// whether its jobs may start a program their submitter sent
// (workload.RunsSubmittedCode).
func (s *Service) Gate(runsSubmittedCode func(kind string) bool) *Gate {
	return &Gate{s: s, runsSubmittedCode: runsSubmittedCode}
}

// Hold reports whether a new job of kind by caller waits for an approver.
func (g *Gate) Hold(ctx context.Context, caller identity.Identity, kind string) (bool, error) {
	if !g.s.cfg.Approval || !g.runsSubmittedCode(kind) || caller.IsAdmin() {
		return false, nil
	}
	u, err := g.s.st.User(ctx, caller.Name)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, apierr.Store(err)
	}
	return !Role(u.Role).MayApprove(), nil
}

// Requested records that jobID of submitter waits.
func (g *Gate) Requested(ctx context.Context, jobID, submitter string) error {
	if err := g.s.st.AddApproval(ctx, store.Approval{JobID: jobID, Submitter: submitter, RequestedAt: g.s.cfg.Now()}); err != nil {
		return apierr.Store(err)
	}
	return g.s.audit(ctx, submitter, "test.submit-pending", jobID, "waits for an approver")
}

// Pending returns the ids of the jobs that wait.
func (g *Gate) Pending(ctx context.Context) ([]string, error) {
	as, err := g.s.st.Approvals(ctx, store.ApprovalPending)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.JobID
	}
	return ids, nil
}

// MayApprove reports whether caller approves other people's tests: an
// admin credential, or an account with role approver or admin.
func (g *Gate) MayApprove(ctx context.Context, caller identity.Identity) bool {
	if caller.IsAdmin() {
		return true
	}
	if !caller.CanSubmit() {
		return false
	}
	u, err := g.s.st.User(ctx, caller.Name)
	return err == nil && u.State == store.UserActive && Role(u.Role).MayApprove()
}

// CrossApproval reports whether submitters may not approve their own jobs.
func (g *Gate) CrossApproval() bool { return g.s.cfg.CrossApproval }

// MayDecide is the one rule of who may approve or refuse (verb) jobID of
// submitter: an approver or admin, and with cross-approval not its
// submitter. Decide enforces it; the pages ask it before offering the
// buttons.
func (g *Gate) MayDecide(ctx context.Context, caller identity.Identity, jobID, submitter, verb string) error {
	if !g.MayApprove(ctx, caller) {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"%s may not %s tests: only approvers and admins may", apierr.Q(caller.Name), verb)
	}
	if g.s.cfg.CrossApproval && caller.Name == submitter {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"job %s is %s's own: another approver must %s it (cross-approval)", jobID, submitter, verb)
	}
	return nil
}

// Decide records caller's approval or refusal of jobID of submitter, after
// checking that caller may decide it.
func (g *Gate) Decide(ctx context.Context, caller identity.Identity, jobID, submitter string, approve bool, reason string) error {
	verb := "approve"
	if !approve {
		verb = "refuse"
	}
	if err := g.MayDecide(ctx, caller, jobID, submitter, verb); err != nil {
		return err
	}
	state := store.ApprovalApproved
	if !approve {
		state = store.ApprovalRefused
	}
	if len(reason) > 500 {
		return fieldErr("reason", "longer than 500 bytes")
	}
	if err := g.s.st.DecideApproval(ctx, jobID, state, caller.Name, reason, g.s.cfg.Now()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "job %s does not wait for approval (decided already?)", apierr.Q(jobID))
		}
		return apierr.Store(err)
	}
	return g.s.audit(ctx, caller.Name, "test."+verb, jobID, reason)
}
