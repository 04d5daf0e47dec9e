package gamepair

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Cancel stores a running job's cancelled state and then finishes it in
// memory; an unknown or finished job is refused and nothing changes.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1_700_000_000, 0)
	running := &store.Job{ID: "t1", Kind: "spsa", State: store.StateRunning, CreatedAt: now, RootMoves: []string{}, Throughput: 1}
	if err := st.CreateKindJob(ctx, running, func(context.Context, *sql.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	done := &store.Job{ID: "t2", State: store.StateDone}
	var mu sync.Mutex
	jobs := map[string]*store.Job{"t1": running, "t2": done}
	var finished []string
	cancel := func(id string) error {
		change := &store.JobChange{State: store.StateCancelled, Error: "enough", FinishedAt: now}
		return Cancel(ctx, st, &mu, jobs, func(j *store.Job) *store.Job { return j }, id, change, func(j *store.Job, ch *store.JobChange) {
			if mu.TryLock() {
				t.Error("finish called without the lock")
				mu.Unlock()
			}
			j.State = ch.State
			finished = append(finished, j.ID)
		})
	}
	if err := cancel("nope"); apierr.ReasonOf(err) != apierr.ReasonUnknownJob {
		t.Errorf("unknown job: %v", err)
	}
	if err := cancel("t2"); apierr.ReasonOf(err) != apierr.ReasonJobFinished || err.Error() != "job t2 is already done" {
		t.Errorf("finished job: %v", err)
	}
	if err := cancel("t1"); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Jobs(ctx)
	if err != nil || len(recs) != 1 || recs[0].State != store.StateCancelled || recs[0].Error != "enough" {
		t.Fatalf("stored: %+v %v", recs, err)
	}
	if len(finished) != 1 || finished[0] != "t1" || running.State != store.StateCancelled {
		t.Fatalf("finished %v, state %s", finished, running.State)
	}
	if err := cancel("t1"); apierr.ReasonOf(err) != apierr.ReasonJobFinished {
		t.Errorf("cancelled twice: %v", err)
	}
}
