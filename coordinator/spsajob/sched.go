package spsajob

import (
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Scheduling, as for tests: the core picks between jobs of every kind by
// priority and throughput share; this file answers which running tunes a
// worker may play now (Candidates), the next batch of one (Take), and what
// becomes of a lease that ended without a result (Ended) or that the core
// no longer tracks (Adopt). Batches go out in order (gamepair.Batches).

// Candidates implements core.Workload.
func (w *Workload) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	playsGames := wk.Has(gamepair.Capability)
	for _, t := range w.running {
		out = append(out, core.Candidate{
			JobID:    t.rec.ID,
			Priority: t.spec.GetPriority(),
			Share:    t.spec.GetThroughput(),
			InFlight: t.batches.Leased(),
			Ready:    playsGames && t.workers.MayPlay(wk.ID) && fits(t, wk) && t.batches.Available(),
		})
	}
	return out
}

// fits says whether worker wk can run t's engine: an uploaded one needs a
// worker that takes artifacts (and builds sources, or is of the binary's
// platform), as for tests.
func fits(t *tune, wk *core.Worker) bool { return gamepair.Fits(t.engineA, t.engineB, wk) == "" }

// Take implements core.Workload: the next batch, with its perturbation
// applied to θ as it stands now.
func (w *Workload) Take(jobID string, wk *core.Worker, now time.Time) (string, any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tunes[jobID]
	if t == nil || !t.running() || !wk.Has(gamepair.Capability) || !t.workers.MayPlay(wk.ID) || !fits(t, wk) {
		return "", nil, false
	}
	idx, ok := t.batches.Take(wk.ID, now)
	if !ok {
		return "", nil, false
	}
	unit, err := w.batchProto(t, idx, wk.Caps.BenchNPS)
	if err != nil {
		// Batch indexes come from the tune, so this is a bug, not input.
		w.log.Error("batch not built", zap.String(logging.JobID, jobID), zap.Int("batch", idx), zap.Error(err))
		t.batches.Drop(idx, wk.ID)
		return "", nil, false
	}
	w.seen(wk)
	return gamepair.UnitID(jobID, idx), unit, true
}

// batchProto renders batch idx of t for a worker of speed benchNPS: the
// engines with the batch's perturbation of θ, its openings and seed, the
// clock scaled to the worker. Caller holds mu.
func (w *Workload) batchProto(t *tune, idx int, benchNPS uint64) (*arbiterv1.WorkUnit, error) {
	p, err := t.st.Perturbation(idx)
	if err != nil {
		return nil, err
	}
	plus, minus, err := t.st.Sides(p)
	if err != nil {
		return nil, err
	}
	ps := t.st.Params()
	a, b := proto.Clone(t.engineA).(*arbiterv1.EngineSpec), proto.Clone(t.engineB).(*arbiterv1.EngineSpec)
	a.Options, b.Options = optionsWith(t.engineA.GetOptions(), ps, plus), optionsWith(t.engineB.GetOptions(), ps, minus)
	first, n := t.st.Config().BatchRange(idx)
	s := t.spec
	batch := gamepair.Batch{JobID: t.rec.ID, Idx: idx, FirstPair: first, Pairs: n, Openings: t.openings,
		EngineA: a, EngineB: b, TimeControl: s.GetTimeControl(), Adjudication: s.GetAdjudication(),
		Seed: s.GetSeed(), Chess960: s.GetChess960(), TimeMargin: s.GetTimeMargin(), HangTimeout: s.GetHangTimeout(),
		Event: s.GetEvent(), ReferenceNPS: w.referenceNPS(t)}
	for _, p := range ps {
		batch.PGNParams = append(batch.PGNParams, p.Name)
	}
	if batch.Event == "" {
		batch.Event = "Arbiter SPSA " + t.rec.ID
	}
	return batch.WorkUnit(benchNPS), nil
}

// Ended implements core.Workload. A lost lease (expired: the worker
// vanished mid-batch) is a disconnect incident of the worker; a cannot_run
// release marks the worker as unable to run the tune. Both are stored as
// events (written after the core's lock is released). The batch is open
// again unless the tune is over.
func (w *Workload) Ended(l core.Lease, why core.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, idx, ok := gamepair.ParseUnit(l.UnitID)
	t := w.tunes[jobID]
	if !ok || t == nil || !t.running() || !t.batches.Drop(idx, l.WorkerID) {
		return
	}
	now := w.cfg.Now()
	switch {
	case why.JobOver:
		return
	case why.Expired:
		w.cfg.Activity.Note(l.WorkerID, now, 0, 1)
		evs := []store.Event{eventOf(t, l.UnitID, l.WorkerID, gamepair.EvDisconnect, "lease "+l.ID+" expired", now)}
		if reason := t.workers.LostLease(l.WorkerID); reason != "" {
			w.logExcluded(t, l.WorkerID, reason)
			evs = append(evs, eventOf(t, l.UnitID, l.WorkerID, gamepair.EvExcluded, reason, now))
		}
		w.events.Add(evs...)
	case why.CannotRun:
		if t.workers.Refuse(l.WorkerID, why.Reason) {
			w.log.Warn("worker cannot run tune; not offering it again", zap.String(logging.JobID, jobID),
				zap.String(logging.WorkerID, l.WorkerID), zap.String("reason", why.Reason))
		}
		w.events.Add(eventOf(t, l.UnitID, l.WorkerID, gamepair.EvRefused, why.Reason, now))
	}
	if t.batches.Reopen(idx) && w.host != nil {
		w.host.WorkAvailable()
	}
}

// Locate implements core.Workload: any batch id of a known tune, whatever
// its index (Result and Adopt check the range).
func (w *Workload) Locate(unitID string) (string, bool) {
	jobID, _, ok := gamepair.ParseUnit(unitID)
	if !ok {
		return "", false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, known := w.tunes[jobID]; !known {
		return "", false
	}
	return jobID, true
}

// Adopt implements core.Workload: a lease from before a restart (or that
// expired a moment ago) on a batch nobody else plays goes back to its
// worker, rather than the batch being played twice.
func (w *Workload) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, idx, ok := gamepair.ParseUnit(l.UnitID)
	t := w.tunes[jobID]
	switch {
	case !ok || t == nil || !t.running() || !t.batches.InRange(idx) || t.batches.Stored(idx):
		return core.AdoptCancelled
	case !t.batches.Free(idx) || !wk.Has(gamepair.Capability) || !t.workers.MayPlay(wk.ID) || !fits(t, wk):
		return core.AdoptLost
	}
	t.batches.Hold(idx, wk.ID, w.cfg.Now())
	w.seen(wk)
	w.log.Info("batch lease adopted", zap.String(logging.JobID, jobID), zap.String(logging.UnitID, l.UnitID),
		zap.String(logging.WorkerID, wk.ID))
	return core.AdoptActive
}
