package gamejob

import (
	"context"
	"encoding/json"
	"fmt"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// LoadProblem is a stored record that Load skipped: a test that cannot be
// loaded (its row missing or undecodable, its spec no longer valid) is not
// served; a batch that does not fit its test (an index outside the test's
// batches, a unit id that does not name it, counts that do not add up) is
// not counted, and while its row holds the batch's unit id the batch is not
// leased again either (a new result would fail on the primary key). Either
// way the rest loads. The caller decides what to do with them (quarantine
// them in the store, report them); once such a row is gone, the next Load
// offers the batch again.
type LoadProblem struct {
	Kind  string // "test" or "batch"
	ID    string // the job id, or the batch's unit id
	JobID string
	Err   error
}

func (p LoadProblem) Error() string { return fmt.Sprintf("%s %s: %v", p.Kind, p.ID, p.Err) }

// LoadProblems returns what the last Load skipped.
func (w *Workload) LoadProblems() []LoadProblem {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]LoadProblem(nil), w.problems...)
}

// Load implements core.Workload: every test, finished ones with only what
// their snapshots need. Running tests resume: counted batches stay
// counted, every other batch is open again.
func (w *Workload) Load(ctx context.Context) ([]core.JobRef, error) {
	recs, err := w.store.Jobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("test: load jobs: %w", err)
	}
	ws, err := gamepair.StoredWorkers(ctx, w.store)
	if err != nil {
		return nil, fmt.Errorf("test: load workers: %w", err)
	}
	w.mu.Lock()
	w.problems = nil
	for _, sw := range ws {
		w.workers[sw.ID] = workerInfo{name: sw.Name, benchNPS: sw.BenchNPS}
	}
	w.mu.Unlock()
	var refs []core.JobRef
	for _, rec := range recs {
		if rec.Kind != KindSPRT && rec.Kind != KindMatch {
			continue
		}
		t, err := w.loadTest(ctx, rec)
		if err != nil {
			if fatal := gamepair.LoadFailure(ctx, err); fatal != nil {
				return nil, fatal
			}
			w.problem(LoadProblem{Kind: "test", ID: rec.ID, JobID: rec.ID, Err: err})
			continue
		}
		w.mu.Lock()
		w.tests[rec.ID] = t
		if t.running() {
			w.running = append(w.running, t)
		}
		w.mu.Unlock()
		refs = append(refs, core.JobRef{ID: rec.ID, Seq: rec.Seq, Submitter: rec.Submitter})
	}
	return refs, nil
}

func (w *Workload) problem(p LoadProblem) {
	w.log.Error("stored record skipped", zap.String("kind", p.Kind), zap.String("id", p.ID),
		zap.String(logging.JobID, p.JobID), zap.Error(p.Err))
	w.mu.Lock()
	w.problems = append(w.problems, p)
	w.mu.Unlock()
}

// loadTest rebuilds one test from the store: spec, SPRT state, counted
// batches and the events of its workers.
func (w *Workload) loadTest(ctx context.Context, rec *store.Job) (*test, error) {
	id := rec.ID
	row, err := w.store.Test(ctx, id)
	if err != nil {
		return nil, err
	}
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
		if games%2 != 0 || games > MaxGames {
			return nil, fmt.Errorf("games %d: want an even number up to %d", games, MaxGames)
		}
		t = &test{spec: withoutOpenings(spec), batchPairs: row.BatchPairs, totalPairs: int(games / 2),
			workers: w.newWorkers()}
		t.nBatches = batchCount(t.totalPairs, t.batchPairs)
	}
	t.rec = rec
	if row.SPRT != "" {
		var seq sprt.Sequential
		if err := json.Unmarshal([]byte(row.SPRT), &seq); err != nil {
			return nil, fmt.Errorf("sprt state: %w", err)
		}
		t.seq = &seq
	}
	batches, err := w.store.Batches(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("batches: %w", err)
	}
	events, err := w.store.Events(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	w.replay(t, batches, events)
	if !row.PGNsExpired.IsZero() {
		t.pgns = 0 // deleted by the retention setting
	}
	if !t.running() {
		t.workers.DropWindows()
		return t, nil
	}
	decided := t.seq != nil && t.seq.State != sprt.Continue
	if decided || (t.totalPairs > 0 && t.done == t.nBatches) {
		// Decided or complete but not closed: close it now.
		change := &store.JobChange{State: store.StateDone, FinishedAt: w.cfg.Now()}
		if err := w.store.SetJobState(ctx, id, change); err != nil {
			return nil, gamepair.NewCloseError(fmt.Errorf("test: close %s: %w", id, err))
		}
		w.finish(t, change)
		return t, nil
	}
	w.log.Info("test resumed", zap.String(logging.JobID, id), zap.Int("batches", t.done), zap.Int64("games", t.results.Games()))
	return t, nil
}

// replay counts a test's stored batches (in the order they were counted)
// and rebuilds its workers from them and its events (gamepair.Workers'
// Replay). A batch that does not fit the test is skipped and reported.
func (w *Workload) replay(t *test, batches []store.Batch, events []store.Event) {
	var played []gamepair.Played
	for i := range batches {
		b := &batches[i]
		if err := t.checkStored(b); err != nil {
			w.problem(LoadProblem{Kind: "batch", ID: b.UnitID, JobID: t.rec.ID, Err: err})
			if t.batches != nil && t.batches.InRange(b.Idx) && b.UnitID == unitID(t.rec.ID, b.Idx) {
				t.batches.Store(b.Idx) // not leased while its row is there
			}
			continue
		}
		addCounts(&t.results, &t.penta, b)
		t.done++
		t.pgns += int64(2 * b.Pairs)
		if t.batches != nil {
			t.batches.Store(b.Idx)
		}
		inc := gamepair.DecodeIncidents(b.Incidents)
		played = append(played, gamepair.Played{WorkerID: b.WorkerID, Games: 2 * b.Pairs, Incidents: inc, At: b.At})
		w.cfg.Activity.Note(b.WorkerID, b.At, 2*b.Pairs, gamepair.IncidentCount(inc))
	}
	for _, e := range events {
		if e.Kind == evDisconnect {
			w.cfg.Activity.Note(e.WorkerID, e.At, 0, 1)
		}
	}
	t.workers.Replay(played, events)
}

// checkStored refuses a stored batch that does not fit the test, so that no
// stored row can make a loop long or a count wrong.
func (t *test) checkStored(b *store.Batch) error {
	if b.Idx < 0 || b.Idx >= t.nBatches {
		return fmt.Errorf("index %d is outside the test's %d batches", b.Idx, t.nBatches)
	}
	if b.UnitID != unitID(t.rec.ID, b.Idx) {
		return fmt.Errorf("unit id does not name batch %d of test %s", b.Idx, t.rec.ID)
	}
	if t.batches != nil && t.batches.Stored(b.Idx) {
		return fmt.Errorf("batch %d is stored twice", b.Idx)
	}
	if _, n := t.pairsOf(b.Idx); b.Pairs != n {
		return fmt.Errorf("%d pairs stored; batch %d has %d", b.Pairs, b.Idx, n)
	}
	penta := sprt.Pentanomial(b.Penta)
	res := sprt.Results{Wins: b.Wins, Draws: b.Draws, Losses: b.Losses, Pentanomial: &penta}
	if penta.Pairs() != int64(b.Pairs) || res.Wins+res.Draws+res.Losses != int64(2*b.Pairs) {
		return fmt.Errorf("counts %v, W/D/L %d/%d/%d do not make %d pairs", b.Penta, b.Wins, b.Draws, b.Losses, b.Pairs)
	}
	if err := res.Validate(); err != nil {
		return err
	}
	return nil
}
