package test

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// loadTest rebuilds one test from the store (gamepair.Hooks.Load): spec,
// SPRT state, counted batches and the events of its workers. A test that
// cannot be loaded (its row missing or undecodable, its spec no longer
// valid) is not served; a batch that does not fit its test (an index
// outside the test's batches, a unit id that does not name it, counts that
// do not add up) is not counted, and while its row holds the batch's unit
// id the batch is not leased again either (a new result would fail on the
// primary key). Either way the rest loads, and LoadProblems lists what was
// skipped (Kind "test" or "batch"); once such a row is gone, the next Load
// offers the batch again. Running tests resume: counted batches stay
// counted, every other batch is open again.
func (w *Workload) loadTest(ctx context.Context, rec *store.Job) (*test, *gamepair.Stored, error) {
	row, err := LoadTest(ctx, w.store, rec.ID)
	if err != nil {
		return nil, nil, err
	}
	t, err := w.testOf(rec, row)
	if err != nil {
		return nil, nil, err
	}
	batches, err := StoredBatches(ctx, w.store, rec.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("batches: %w", err)
	}
	w.noteCopy(t.spec.GetRescheduledFrom(), rec.ID)
	return t, &gamepair.Stored{Counted: w.checkBatches(t, batches), PGNsExpired: !row.PGNsExpired.IsZero()}, nil
}

// testOf is a test in memory from its stored row: a running one's spec is
// checked again and its book read; a finished one only shows its snapshot.
func (w *Workload) testOf(rec *store.Job, row *StoredTest) (*test, error) {
	spec := &arbiterv1.MatchSpec{}
	if err := proto.Unmarshal(row.Spec, spec); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if row.BatchPairs < 1 || row.BatchPairs > maxStoredBatchPairs {
		return nil, fmt.Errorf("batch pairs %d: want 1 to %d", row.BatchPairs, maxStoredBatchPairs)
	}
	var t *test
	if rec.State == store.StateRunning {
		c, err := w.checkSpec(spec, maxStoredBatchPairs)
		if err != nil {
			return nil, fmt.Errorf("spec no longer valid: %w", err)
		}
		c.batchPairs = row.BatchPairs // the SPRT's batch size, as stored
		t = w.newTest(c)
	} else {
		// A finished test only shows its snapshot: its book is not read
		// again.
		games := spec.GetGames()
		if games%2 != 0 || games > testview.MaxGames {
			return nil, fmt.Errorf("games %d: want an even number up to %d", games, testview.MaxGames)
		}
		t = &test{Job: gamepair.Job{Workers: w.cfg.NewJudgedWorkers()}, spec: gamepair.WithoutOpenings(spec), batchPairs: row.BatchPairs,
			totalPairs: int(games / 2)}
		t.nBatches = batchCount(t.totalPairs, t.batchPairs)
	}
	t.Rec = rec
	if row.SPRT != "" {
		var seq sprt.Sequential
		if err := json.Unmarshal([]byte(row.SPRT), &seq); err != nil {
			return nil, fmt.Errorf("sprt state: %w", err)
		}
		t.seq = &seq
	}
	return t, nil
}

// over reports whether a loaded test is decided or complete.
func (t *test) over() bool {
	return (t.seq != nil && t.seq.State != sprt.Continue) || (t.totalPairs > 0 && t.Done == t.nBatches)
}

// checkBatches returns a test's stored batches (in the order they were
// counted) that fit the test; one that does not is skipped and reported.
func (w *Workload) checkBatches(t *test, batches []Batch) []gamepair.Counted {
	counted := make([]gamepair.Counted, 0, len(batches))
	for i := range batches {
		b := &batches[i]
		if err := t.checkStored(b); err != nil {
			w.Problem(gamepair.LoadProblem{Kind: "batch", ID: b.UnitID, JobID: t.Rec.ID, Err: err})
			if t.Batches != nil && t.Batches.InRange(b.Idx) && b.UnitID == unitID(t.Rec.ID, b.Idx) {
				t.Batches.Store(b.Idx) // not leased while its row is there
			}
			continue
		}
		if t.Batches != nil {
			t.Batches.Store(b.Idx)
		}
		counted = append(counted, countedOf(b))
	}
	return counted
}

// checkStored refuses a stored batch that does not fit the test, so that no
// stored row can make a loop long or a count wrong.
func (t *test) checkStored(b *Batch) error {
	if b.Idx < 0 || b.Idx >= t.nBatches {
		return fmt.Errorf("index %d is outside the test's %d batches", b.Idx, t.nBatches)
	}
	if b.UnitID != unitID(t.Rec.ID, b.Idx) {
		return fmt.Errorf("unit id does not name batch %d of test %s", b.Idx, t.Rec.ID)
	}
	if t.Batches != nil && t.Batches.Stored(b.Idx) {
		return fmt.Errorf("batch %d is stored twice", b.Idx)
	}
	if _, n := t.pairsOf(b.Idx); b.Pairs != n {
		return fmt.Errorf("%d pairs stored; batch %d has %d", b.Pairs, b.Idx, n)
	}
	c := countedOf(b)
	return c.CheckCounts()
}

// countedOf is a stored batch as gamepair counts it.
func countedOf(b *Batch) gamepair.Counted {
	return gamepair.Counted{UnitID: b.UnitID, WorkerID: b.WorkerID, Idx: b.Idx, Pairs: b.Pairs, Penta: b.Penta, Wins: b.Wins,
		Draws: b.Draws, Losses: b.Losses, Incidents: b.Incidents, LeasedAt: b.LeasedAt, At: b.At, ElapsedMS: b.ElapsedMS}
}
