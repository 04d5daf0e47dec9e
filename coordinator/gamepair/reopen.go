package gamepair

import (
	"context"
	"errors"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Reopen runs a cancelled job again from where it stood: its row is set
// running, then the job is rebuilt from the store as a restart rebuilds a
// running one (Hooks.Load, its counted batches and workers), so what it
// counted stays counted and its batches not counted are open again. A job
// that is not cancelled is FAILED_PRECONDITION and nothing changes.
func (s *Set[J]) Reopen(ctx context.Context, jobID string) error {
	s.CommitMu.Lock()
	defer s.CommitMu.Unlock()
	s.Mu.Lock()
	j, ok := s.Jobs[jobID]
	var state string
	if ok {
		state = j.Base().Rec.State
	}
	s.Mu.Unlock()
	switch {
	case !ok:
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	case state != store.StateCancelled:
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "%s %s is %s; only a stopped (cancelled) %s resumes", s.What, jobID, state, s.What)
	}
	rec, err := s.Store.ReopenJob(ctx, jobID)
	if errors.Is(err, store.ErrNotStopped) {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "%s %s is no longer cancelled", s.What, jobID)
	}
	if err != nil {
		return apierr.Store(err)
	}
	nj, err := s.load(ctx, rec)
	if err != nil {
		// The row says running but the job cannot be rebuilt (its spec
		// is no longer valid): stop it again, with the reason.
		change := &store.JobChange{State: store.StateCancelled, Error: "could not resume: " + err.Error(), FinishedAt: s.Now()}
		if serr := s.Store.SetJobState(ctx, jobID, change); serr != nil {
			return apierr.Store(serr)
		}
		s.Mu.Lock()
		j.Base().Rec.Error = change.Error
		s.Mu.Unlock()
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "%s %s cannot resume: %v", s.What, jobID, err)
	}
	s.Mu.Lock()
	s.Jobs[jobID] = nj
	if nj.Base().Running() {
		s.Running = append(s.Running, nj)
	}
	s.Mu.Unlock()
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	return nil
}
