package test

import (
	"context"
	"errors"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// What the web pages read besides snapshots: a worker's recent activity
// over all tests, a test's games and events, and the change of a running
// test's priority.

// WorkerActivity returns, by worker id, the games and incidents of the last
// gamepair.ActivityWindow (over every game workload sharing Config.Activity) and the
// running tests each worker is excluded from.
func (w *Workload) WorkerActivity() map[string]testview.Activity {
	recent := w.cfg.Activity.Recent()
	out := make(map[string]testview.Activity, len(recent))
	for id, r := range recent {
		out[id] = testview.Activity{Games: r.Games, Incidents: r.Incidents}
	}
	for id, ids := range w.Barred() {
		a := out[id]
		a.Excluded = ids
		out[id] = a
	}
	for id, ids := range w.FarOff() {
		a := out[id]
		a.FarOff = ids
		out[id] = a
	}
	return out
}

// knownTest refuses an id that is not a test.
func (w *Workload) knownTest(jobID string) error {
	if jobID == "" {
		return apierr.Invalid("job id missing")
	}
	w.Mu.Lock()
	_, known := w.Jobs[jobID]
	w.Mu.Unlock()
	if known {
		return nil
	}
	if w.cfg.JobExists != nil && w.cfg.JobExists(jobID) {
		return apierr.Invalid("job %s is not a match or SPRT test", apierr.Q(jobID))
	}
	return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
}

// PGN returns game game of batch batch of test jobID.
func (w *Workload) PGN(ctx context.Context, jobID string, batch, game int) (string, error) {
	if err := w.knownTest(jobID); err != nil {
		return "", err
	}
	if batch < 0 || batch >= testview.MaxPairs || game < 0 || game >= 2*maxStoredBatchPairs {
		return "", apierr.Invalid("game %d of batch %d: no such game", game, batch)
	}
	p, err := w.store.PGN(ctx, jobID, batch, game)
	if err != nil {
		if isNotFound(err) {
			return "", apierr.New(apierr.NotFound, apierr.ReasonUnknownUnit, "test %s has no game %d in batch %d", jobID, game, batch)
		}
		return "", apierr.Store(err)
	}
	return p, nil
}

// Batches returns a test's counted batches in acceptance order.
func (w *Workload) Batches(ctx context.Context, jobID string) ([]testview.BatchInfo, error) {
	if err := w.knownTest(jobID); err != nil {
		return nil, err
	}
	bs, err := StoredBatches(ctx, w.store, jobID)
	if err != nil {
		return nil, apierr.Store(err)
	}
	out := make([]testview.BatchInfo, len(bs))
	for i, b := range bs {
		out[i] = testview.BatchInfo{Index: b.Idx, WorkerID: b.WorkerID, Pairs: b.Pairs, Wins: b.Wins, Draws: b.Draws, Losses: b.Losses, At: b.At}
	}
	return out, nil
}

// Events returns a test's events, oldest first; events queued but not yet
// written are written first.
func (w *Workload) Events(ctx context.Context, jobID string) ([]testview.Event, error) {
	if err := w.knownTest(jobID); err != nil {
		return nil, err
	}
	if err := w.Flush(ctx); err != nil {
		return nil, apierr.Store(err)
	}
	evs, err := w.store.Events(ctx, jobID)
	if err != nil {
		return nil, apierr.Store(err)
	}
	out := make([]testview.Event, len(evs))
	for i, e := range evs {
		out[i] = testview.Event{Kind: e.Kind, UnitID: e.UnitID, WorkerID: e.WorkerID, Detail: e.Detail, At: e.At}
	}
	return out, nil
}

// SetPriority implements core.Prioritizer: the stored spec and job row
// change first, then the running test.
func (w *Workload) SetPriority(ctx context.Context, jobID string, priority int32, share float64) error {
	w.CommitMu.Lock()
	defer w.CommitMu.Unlock()
	w.Mu.Lock()
	t, err := w.runningTest(jobID)
	if err != nil {
		w.Mu.Unlock()
		return err
	}
	w.Mu.Unlock()
	edit := func(b []byte) ([]byte, error) {
		spec := &arbiterv1.MatchSpec{}
		if err := proto.Unmarshal(b, spec); err != nil {
			return nil, err
		}
		spec.Priority, spec.Throughput = priority, share
		return proto.Marshal(spec)
	}
	if err := SetTestPriority(ctx, w.store, jobID, priority, share, edit); err != nil {
		return apierr.Store(err)
	}
	w.Mu.Lock()
	defer w.Mu.Unlock()
	t.spec.Priority, t.spec.Throughput = priority, share
	t.Rec.Priority, t.Rec.Throughput = priority, share
	w.log.Info("test priority changed", zap.String(logging.JobID, jobID), zap.Int32("priority", priority), zap.Float64("throughput", share))
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

var (
	_ core.Prioritizer = (*Workload)(nil)
	_ testview.Tests   = (*Workload)(nil) // what the doors read of tests
)
