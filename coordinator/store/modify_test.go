package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// A cancelled job reopens once, cleared of its end, and a running or done
// one does not. On both backends. (A running test's change is the test
// kind's: kinds/test's TestStoredTests.)
func TestReopenJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		j := &Job{ID: "s1", Kind: "sprt", State: StateRunning, CreatedAt: time.Unix(100, 0), RootMoves: []string{}, Submitter: "carol", Priority: 5}
		if err := s.CreateKindJob(ctx, j, func(context.Context, *sql.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReopenJob(ctx, "s1"); !errors.Is(err, ErrNotStopped) {
			t.Fatalf("reopen a running job: %v", err)
		}
		if err := s.SetJobState(ctx, "s1", &JobChange{State: StateCancelled, Error: "stopped by carol", FinishedAt: time.Unix(200, 0)}); err != nil {
			t.Fatal(err)
		}
		rec, err := s.ReopenJob(ctx, "s1")
		if err != nil || rec.State != StateRunning || rec.Error != "" || !rec.FinishedAt.IsZero() || rec.Priority != 5 {
			t.Fatalf("reopened: %+v %v", rec, err)
		}
		if _, err := s.ReopenJob(ctx, "s1"); !errors.Is(err, ErrNotStopped) {
			t.Fatalf("reopen a reopened job: %v", err)
		}
		if _, err := s.ReopenJob(ctx, "nope"); !errors.Is(err, ErrNotStopped) {
			t.Fatalf("reopen an unknown job: %v", err)
		}
	})
}
