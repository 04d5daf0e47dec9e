package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A running test's change is stored in one piece (spec, priority,
// throughput, batch count); a finished one is refused and unchanged; a
// cancelled job reopens once, cleared of its end, and a running or done
// one does not. On both backends.
func TestModifyAndReopenTest(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		j := &Job{ID: "s1", Kind: "sprt", State: StateRunning, CreatedAt: time.Unix(100, 0), RootMoves: []string{}, Submitter: "carol"}
		if err := s.CreateTest(ctx, j, &Test{Spec: []byte("spec-1"), BatchPairs: 2}); err != nil {
			t.Fatal(err)
		}
		edit := func(b []byte) ([]byte, error) { return append(b, "+edit"...), nil }
		if err := s.ModifyTest(ctx, "s1", TestChange{Priority: 5, Throughput: 3, UnitsTotal: 50, Edit: edit}); err != nil {
			t.Fatal(err)
		}
		row, err := s.Test(ctx, "s1")
		if err != nil || string(row.Spec) != "spec-1+edit" {
			t.Fatalf("spec %q %v", row.Spec, err)
		}
		jobs, err := s.Jobs(ctx)
		if err != nil || len(jobs) != 1 || jobs[0].Priority != 5 || jobs[0].Throughput != 3 || jobs[0].UnitsTotal != 50 {
			t.Fatalf("job row: %+v %v", jobs[0], err)
		}
		// A failed edit changes nothing.
		boom := errors.New("boom")
		if err := s.ModifyTest(ctx, "s1", TestChange{Priority: 9, Throughput: 9, Edit: func([]byte) ([]byte, error) { return nil, boom }}); !errors.Is(err, boom) {
			t.Fatalf("failed edit: %v", err)
		}
		if _, err := s.ReopenJob(ctx, "s1"); !errors.Is(err, ErrNotStopped) {
			t.Fatalf("reopen a running job: %v", err)
		}
		if err := s.SetJobState(ctx, "s1", &JobChange{State: StateCancelled, Error: "stopped by carol", FinishedAt: time.Unix(200, 0)}); err != nil {
			t.Fatal(err)
		}
		if err := s.ModifyTest(ctx, "s1", TestChange{Priority: 1, Throughput: 1, Edit: edit}); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("modify a cancelled test: %v", err)
		}
		if err := s.ModifyTest(ctx, "nope", TestChange{Edit: edit}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("modify an unknown test: %v", err)
		}
		rec, err := s.ReopenJob(ctx, "s1")
		if err != nil || rec.State != StateRunning || rec.Error != "" || !rec.FinishedAt.IsZero() || rec.Priority != 5 {
			t.Fatalf("reopened: %+v %v", rec, err)
		}
		if row, _ := s.Test(ctx, "s1"); string(row.Spec) != "spec-1+edit" {
			t.Fatalf("spec after reopen %q", row.Spec)
		}
	})
}
