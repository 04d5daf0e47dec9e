package web_test

// The perft, SPSA and test kinds register their pages here (kinds/perft,
// kinds/spsa and kinds/test import this package), so the package's own
// tests cannot import them: this external test file does, and the kinds
// then register, pages and workloads, in the test binary that runs them
// all (pages_test.go, browser_test.go and bench_test.go show perft jobs
// and tunes; cluster_test.go, pages_test.go, charts_test.go,
// find_test.go, anytime_test.go and browser_test.go run tests and read
// their pages; pages_test.go, formsources_test.go, formuploads_test.go
// and the browser tests post the kinds' submit forms, and read the
// tests' and perft's tables of the list).
import (
	"context"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	_ "github.com/arbiter-chess/arbiter/kinds/perft"
	"github.com/arbiter-chess/arbiter/kinds/spsa"
	testkind "github.com/arbiter-chess/arbiter/kinds/test"
	_ "github.com/arbiter-chess/arbiter/kinds/verify"
)

// The page benchmark's tune and tests are written to the SPSA and test
// kinds' tables with the kinds' functions.
func init() {
	web.CreateBenchTest = func(ctx context.Context, st *store.Store, j *store.Job, spec []byte, batchPairs int, sprt string) error {
		return testkind.CreateTest(ctx, st, j, &testkind.StoredTest{JobID: j.ID, Spec: spec, BatchPairs: batchPairs, SPRT: sprt})
	}
	web.CommitBenchBatch = func(ctx context.Context, st *store.Store, b web.BenchBatch, pgns []string, sprt string, events []store.Event) error {
		return testkind.CommitBatch(ctx, st, &testkind.Batch{UnitID: b.UnitID, JobID: b.JobID, Idx: b.Idx, WorkerID: b.WorkerID, Pairs: b.Pairs,
			Penta: b.Penta, Wins: b.Wins, Draws: b.Draws, Losses: b.Losses, Incidents: b.Incidents, At: b.At}, pgns, sprt, nil, events)
	}
	web.CreateBenchTune = func(ctx context.Context, st *store.Store, j *store.Job, spec []byte, batchPairs int) error {
		return spsa.CreateTune(ctx, st, j, &spsa.StoredTune{JobID: j.ID, Spec: spec, BatchPairs: batchPairs})
	}
	web.CommitBenchTuneUpdate = func(ctx context.Context, st *store.Store, jobID string, seq int, u web.BenchTuneUpdate) error {
		return spsa.CommitUpdate(ctx, st, &spsa.Update{JobID: jobID, Seq: seq, Batch: seq, UnitID: u.UnitID, WorkerID: u.WorkerID, Pairs: u.Pairs,
			Penta: u.Penta, Wins: u.Wins, Draws: u.Draws, Losses: u.Loss, Theta: u.Theta, LeasedAt: u.LeasedAt, At: u.At, ElapsedMS: 1000},
			nil, nil, nil)
	}
}
