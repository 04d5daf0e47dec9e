package test

import (
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestFinishedTestKeepsWorkerBench: a finished test's row of a worker
// shows the bench speed the worker played it at (and the time scale that
// gave), also after the worker registers again faster and the coordinator
// restarts: not the worker's latest registration.
func TestFinishedTestKeepsWorkerBench(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(matchSpec(4, 1, 4))
	w := e.Worker("w", DefaultReferenceNPS/2)
	for i := 0; i < 2; i++ {
		e.MustSubmit(w, e.MustLease(w), draws(1), core.Accepted)
	}
	if s := e.Job(id).GetState(); s != arbiterv1.JobState_JOB_STATE_DONE {
		t.Fatalf("test %v after its games", s)
	}
	check := func(when string) {
		t.Helper()
		row := workerRow(e.Job(id), w.ID)
		if row == nil || row.GetBenchNps() != DefaultReferenceNPS/2 || row.GetTimeScale() != 2 {
			t.Fatalf("%s: row %v; want bench_nps %d and time scale 2, what the worker played at", when, row, DefaultReferenceNPS/2)
		}
	}
	check("at the end")
	e.Worker("w", 3*DefaultReferenceNPS) // the same worker, faster now
	check("after the worker registered again")
	e.Restart()
	check("after a restart")
	e.Worker("w", 3*DefaultReferenceNPS)
	check("after a restart and a new registration")
}
