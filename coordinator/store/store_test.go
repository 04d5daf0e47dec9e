package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
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
	j := &Job{ID: "p1", Kind: "perft", FEN: "f", Depth: 5, SplitPly: 2, State: StateRunning,
		CreatedAt: time.Unix(100, 0), RootMoves: []string{"e2e4", "d2d4"}, UnitsTotal: 1, Positions: 2}
	pos := []Position{{FEN: "a", Mult: []RootMult{{0, 2}, {1, 1}}}, {FEN: "b", Mult: []RootMult{{1, 3}}}}
	if err := s.CreateJob(ctx, j, pos, []Unit{{ID: "p1.0", JobID: "p1", First: 0, End: 2, Verify: true}}); err != nil {
		t.Fatal(err)
	}
	run := &Run{UnitID: "p1.0", WorkerID: "w1", Counts: []engine.Count{engine.CountOf(7), engine.CountOf(1 << 63), {Hi: 3, Lo: 5}}, At: time.Unix(200, 0), ElapsedMS: 5}
	if err := s.Commit(ctx, "p1", "p1.0", run, &UnitChange{Settled: true, Counts: run.Counts},
		&JobChange{State: StateDone, FinishedAt: time.Unix(300, 0), Total: "123", Divide: []string{"100", "23"}},
		[]Event{{JobID: "p1", UnitID: "p1.0", WorkerID: "w1", Kind: "mismatch", Detail: "x", At: time.Unix(200, 0)}}); err != nil {
		t.Fatal(err)
	}
	// The same run again violates the one-run-per-worker key and changes nothing.
	if err := s.Commit(ctx, "p1", "p1.0", run, &UnitChange{}, nil, nil); err == nil {
		t.Fatal("duplicate run stored")
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
	gp, _ := s.Positions(ctx, "p1")
	if len(gp) != 2 || gp[0].Mult[1] != (RootMult{1, 1}) || gp[1].FEN != "b" {
		t.Fatalf("positions %+v", gp)
	}
	us, _ := s.Units(ctx, "p1")
	if len(us) != 1 || !us[0].Settled || !us[0].Verify || !slices.Equal(us[0].Counts, run.Counts) {
		t.Fatalf("units %+v", us)
	}
	rs, _ := s.Runs(ctx, "p1")
	if len(rs) != 1 || rs[0].Counts[1] != engine.CountOf(1<<63) || rs[0].Counts[2] != (engine.Count{Hi: 3, Lo: 5}) {
		t.Fatalf("runs %+v", rs)
	}
	ev, _ := s.Events(ctx, "p1")
	if len(ev) != 1 || ev[0].Kind != "mismatch" {
		t.Fatalf("events %+v", ev)
	}
}
