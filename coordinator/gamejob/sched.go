package gamejob

import (
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Scheduling. The core picks between jobs of every kind by priority and
// throughput share; this file answers for tests: which running tests a
// worker may play now (Candidates), the next batch of one (Take), and what
// becomes of a lease that ended without a result (Ended) or that the core
// no longer tracks (Adopt). Each batch lease is one core of the worker's
// budget: a worker asks for as many leases as it has free cores.
// Batches go out in order (gamepair.Batches).

// Candidates implements core.Workload.
func (w *Workload) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	playsGames := wk.Has(CapGamePair)
	for _, t := range w.running {
		out = append(out, core.Candidate{
			JobID:    t.rec.ID,
			Priority: t.spec.GetPriority(),
			Share:    t.spec.GetThroughput(),
			InFlight: t.batches.Leased(),
			Ready:    playsGames && t.mayPlay(wk.ID) && gamepair.Fits(t.spec.GetEngineA(), t.spec.GetEngineB(), wk) == "" && t.batches.Available(),
		})
	}
	return out
}

// mayPlay reports whether worker id may get batches of t: it has not said
// it cannot run the test and was not excluded from it. Caller holds mu.
func (t *test) mayPlay(id string) bool { return t.workers.MayPlay(id) }

// Take implements core.Workload.
func (w *Workload) Take(jobID string, wk *core.Worker, now time.Time) (string, any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tests[jobID]
	if t == nil || !t.running() || !wk.Has(CapGamePair) || !t.mayPlay(wk.ID) || gamepair.Fits(t.spec.GetEngineA(), t.spec.GetEngineB(), wk) != "" {
		return "", nil, false
	}
	idx, ok := t.batches.Take(wk.ID, now)
	if !ok {
		return "", nil, false
	}
	w.seen(wk)
	return unitID(jobID, idx), w.batchProto(t, idx, wk.Caps.BenchNPS), true
}

// referenceNPS is the speed t's clock is meant for.
func (w *Workload) referenceNPS(t *test) uint64 { return w.cfg.Reference(t.spec.GetReferenceNps()) }

// timeScale is the test's reference speed over the worker's
// (gamepair.TimeScale).
func (w *Workload) timeScale(t *test, benchNPS uint64) float64 {
	return gamepair.TimeScale(w.referenceNPS(t), benchNPS)
}

// batchProto renders batch idx of t for a worker of speed benchNPS: its
// openings, its seed, and the test's clock scaled to the worker. Caller
// holds mu.
func (w *Workload) batchProto(t *test, idx int, benchNPS uint64) *arbiterv1.WorkUnit {
	first, n := t.pairsOf(idx)
	s := t.spec
	b := gamepair.Batch{JobID: t.rec.ID, Idx: idx, FirstPair: first, Pairs: n, Openings: t.openings,
		EngineA: s.GetEngineA(), EngineB: s.GetEngineB(), TimeControl: s.GetTimeControl(), Adjudication: s.GetAdjudication(),
		Seed: s.GetSeed(), Chess960: s.GetChess960(), TimeMargin: s.GetTimeMargin(), HangTimeout: s.GetHangTimeout(),
		Event: s.GetEvent(), ReferenceNPS: w.referenceNPS(t)}
	return b.WorkUnit(benchNPS)
}

// Ended implements core.Workload. A lost lease (expired: the worker
// vanished mid-batch) is a disconnect incident of the worker; a cannot_run
// release marks the worker as unable to run the test. Both are stored as
// events (written after the core's lock is released, see eventQueue). The
// batch is open again unless the test is over.
func (w *Workload) Ended(l core.Lease, why core.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, idx, ok := parseUnit(l.UnitID)
	t := w.tests[jobID]
	if !ok || t == nil || !t.running() || !t.batches.Drop(idx, l.WorkerID) {
		return // not this lease's batch any more
	}
	switch {
	case why.JobOver:
		return
	case why.Expired:
		w.lostLease(t, l)
	case why.CannotRun:
		if t.workers.Refuse(l.WorkerID, why.Reason) {
			w.log.Warn("worker cannot run test; not offering it again", zap.String(logging.JobID, jobID),
				zap.String(logging.WorkerID, l.WorkerID), zap.String("reason", why.Reason))
		}
		w.events.Add(eventOf(t, l.UnitID, l.WorkerID, evRefused, why.Reason, w.cfg.Now()))
	}
	w.reopen(t, idx)
}

// reopen puts batch idx back in line. Caller holds mu.
func (w *Workload) reopen(t *test, idx int) {
	if t.running() && t.batches.Reopen(idx) && w.host != nil {
		w.host.WorkAvailable()
	}
}

// Locate implements core.Workload: any batch id of a known test, whatever
// its index (Result and Adopt check the range).
func (w *Workload) Locate(unitID string) (string, bool) {
	jobID, _, ok := parseUnit(unitID)
	if !ok {
		return "", false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, known := w.tests[jobID]; !known {
		return "", false
	}
	return jobID, true
}

// Adopt implements core.Workload: a lease from before a restart (or that
// expired a moment ago) on a batch nobody else plays goes back to its
// worker, rather than the batch being played twice. It costs O(1) whatever
// the index (gamepair.Batches.Hold).
func (w *Workload) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, idx, ok := parseUnit(l.UnitID)
	t := w.tests[jobID]
	switch {
	case !ok || t == nil || !t.running() || !t.batches.InRange(idx) || t.batches.Stored(idx):
		return core.AdoptCancelled
	case !t.batches.Free(idx) || !wk.Has(CapGamePair) || !t.mayPlay(wk.ID) || gamepair.Fits(t.spec.GetEngineA(), t.spec.GetEngineB(), wk) != "":
		return core.AdoptLost
	}
	t.batches.Hold(idx, wk.ID, w.cfg.Now())
	w.seen(wk)
	w.log.Info("batch lease adopted", zap.String(logging.JobID, jobID), zap.String(logging.UnitID, l.UnitID),
		zap.String(logging.WorkerID, wk.ID))
	return core.AdoptActive
}
