package gamejob

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
)

// Judging workers (gamepair.Workers): each test keeps, per worker, its
// games and incidents and a window of its recent games; a worker whose
// rate of worker-caused incidents (time losses, hangs, lost leases) in the
// window exceeds Config.IncidentMaxRate gets no more batches of the test.
// Lost leases, refusals and exclusions are stored as events and replayed
// on Load with the batches, so status is the same before and after a
// restart.

// Event kinds the workload stores (store.Event.Kind).
const (
	evDisconnect = gamepair.EvDisconnect
	evRefused    = gamepair.EvRefused
	evExcluded   = gamepair.EvExcluded
	evIncident   = gamepair.EvIncident
)

// newWorkers is a test's empty record of workers.
func (w *Workload) newWorkers() *gamepair.Workers { return w.cfg.NewWorkers() }

func (w *Workload) logExcluded(t *test, workerID, reason string) {
	w.log.Warn("worker excluded from test", zap.String(logging.JobID, t.rec.ID), zap.String(logging.WorkerID, workerID),
		zap.String("reason", reason))
}

// lostLease counts a lost lease against its worker and stores it. Caller
// holds mu.
func (w *Workload) lostLease(t *test, l core.Lease) {
	now := w.cfg.Now()
	w.cfg.Activity.Note(l.WorkerID, now, 0, 1)
	evs := []store.Event{eventOf(t, l.UnitID, l.WorkerID, evDisconnect, "lease "+l.ID+" expired", now)}
	if reason := t.workers.LostLease(l.WorkerID); reason != "" {
		w.logExcluded(t, l.WorkerID, reason)
		evs = append(evs, eventOf(t, l.UnitID, l.WorkerID, evExcluded, reason, now))
	}
	w.events.Add(evs...)
}

func eventOf(t *test, unitID, workerID, kind, detail string, at time.Time) store.Event {
	return store.Event{JobID: t.rec.ID, UnitID: unitID, WorkerID: workerID, Kind: kind, Detail: detail, At: at}
}

// Flush writes every queued event; when it returns, every event queued
// before the call is stored (or its error is returned).
func (w *Workload) Flush(ctx context.Context) error { return w.events.Flush(ctx) }
