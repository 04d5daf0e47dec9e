package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestStoreRoundTrip(t *testing.T) { eachBackend(t, testStoreRoundTrip) }

func testStoreRoundTrip(t *testing.T, open opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() == SQLite {
		var mode string
		var sync int
		s.db.QueryRow("PRAGMA journal_mode").Scan(&mode)
		s.db.QueryRow("PRAGMA synchronous").Scan(&sync)
		if mode != "wal" || sync != 2 {
			t.Fatalf("journal_mode %q synchronous %d, want wal and 2 (FULL)", mode, sync)
		}
	}
	// A job row and a kind's rows in one transaction: a failing fn leaves
	// no job (a perft job's positions and units are written so).
	j := &Job{ID: "p1", Kind: "perft", FEN: "f", Depth: 5, SplitPly: 2, State: StateRunning,
		CreatedAt: time.Unix(100, 0), RootMoves: []string{"e2e4", "d2d4"}, UnitsTotal: 1, Positions: 2}
	failed := errors.New("the kind's rows failed")
	if err := s.CreateJob(ctx, &Job{ID: "p0", Kind: "perft", RootMoves: []string{}}, func(ctx context.Context, tx *sql.Tx) error {
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("a failing fn: %v", err)
	}
	var rowsInFn int
	if err := s.CreateJob(ctx, j, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM jobs WHERE id=?", j.ID).Scan(&rowsInFn)
	}); err != nil || rowsInFn != 1 {
		t.Fatalf("CreateJob: %v (fn saw %d job rows)", err, rowsInFn)
	}
	done := <-s.WriteStart(func(ctx context.Context, tx *sql.Tx) error {
		if err := SetJobStateTx(ctx, tx, "p1", &JobChange{State: StateDone, FinishedAt: time.Unix(300, 0), Total: "123", Divide: []string{"100", "23"}}); err != nil {
			return err
		}
		return InsertEventsTx(ctx, tx, []Event{{JobID: "p1", UnitID: "p1.0", WorkerID: "w1", Kind: "mismatch", Detail: "x", At: time.Unix(200, 0)}})
	})
	if done != nil {
		t.Fatal(done)
	}
	// A write that fails changes nothing: no job, no event.
	if err := <-s.WriteStart(func(ctx context.Context, tx *sql.Tx) error {
		if err := InsertEventsTx(ctx, tx, []Event{{JobID: "p1", Kind: "lost"}}); err != nil {
			return err
		}
		return SetJobStateTx(ctx, tx, "nope", &JobChange{State: StateDone})
	}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a state change of an unknown job: %v", err)
	}
	s.Close()

	s, err = open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jobs, err := s.Jobs(ctx)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v %v", jobs, err)
	}
	g := jobs[0]
	if g.State != StateDone || g.Total != "123" || !slices.Equal(g.Divide, []string{"100", "23"}) || !slices.Equal(g.RootMoves, j.RootMoves) || g.Seq != 1 {
		t.Fatalf("job read back as %+v", g)
	}
	ev, _ := s.Events(ctx, "p1")
	if len(ev) != 1 || ev[0].Kind != "mismatch" {
		t.Fatalf("events %+v", ev)
	}
}
