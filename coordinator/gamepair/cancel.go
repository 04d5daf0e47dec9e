package gamepair

import (
	"context"
	"sync"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Cancel is a game workload's Cancel of jobID once the caller holds its
// commit lock: jobs are the workload's jobs by id and rec a job's record,
// both read under mu. A running job's change (its cancelled state) is
// stored, then finish ends the job in memory, under mu. An unknown job is
// NOT_FOUND, a finished one FAILED_PRECONDITION; neither changes anything.
func Cancel[J comparable](ctx context.Context, st *store.Store, mu *sync.Mutex, jobs map[string]J, rec func(J) *store.Job,
	jobID string, change *store.JobChange, finish func(J, *store.JobChange)) error {
	var none J
	mu.Lock()
	j := jobs[jobID]
	if j == none {
		mu.Unlock()
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	if r := rec(j); r.State != store.StateRunning {
		mu.Unlock()
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "job %s is already %s", jobID, r.State)
	}
	mu.Unlock()
	if err := st.SetJobState(ctx, jobID, change); err != nil {
		return apierr.Store(err)
	}
	mu.Lock()
	finish(j, change)
	mu.Unlock()
	return nil
}
