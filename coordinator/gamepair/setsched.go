package gamepair

import (
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Scheduling. The core picks between jobs of every kind by priority and
// throughput share; a Set answers for its jobs: which running jobs a
// worker may play now (Candidates), the next batch of one (Take), and what
// becomes of a lease that ended without a result (Ended) or that the core
// no longer tracks (Adopt). Each batch lease is one core of the worker's
// budget: a worker asks for as many leases as it has free cores. Batches
// go out in order (Batches).

// mayRun reports whether worker wk may get batches of j: it plays game
// pairs, has not said it cannot run the job, was not excluded from it,
// can run its engines, and its identity is trusted or j's games can be
// checked by a replay (trust.go). Caller holds Mu.
func (s *Set[J]) mayRun(j J, wk *core.Worker) bool {
	a, b := s.Hooks.Engines(j)
	return wk.Has(capability.GamePair) && j.Base().Workers.MayPlay(wk.ID) && !j.Base().Cross.Distrusts(wk.Owner) && Fits(a, b, wk) == "" && FitsTablebase(s.Hooks.Adjudication(j), wk.Caps) == "" &&
		(s.Trust.Trusted(wk.Owner) || (s.CrossCheckable != nil && s.CrossCheckable(j)))
}

// mayTakeFresh reports whether wk may get a fresh batch of j: its
// identity's results held for replays are under maxHeldPerIdentity.
// Caller holds Mu.
func (s *Set[J]) mayTakeFresh(j J, wk *core.Worker) bool {
	return j.Base().Cross.heldBy(wk.Owner) < maxHeldPerIdentity
}

// replayFor reports whether j holds a batch wk's identity may replay.
// Caller holds Mu.
func (s *Set[J]) replayFor(j J, wk *core.Worker) bool {
	_, ok := j.Base().Cross.forIdentity(wk.Owner, s.Trust.Trusted)
	return ok
}

// Candidates is core.Workload's Candidates.
func (s *Set[J]) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, j := range s.Running {
		b := j.Base()
		priority, share := s.Hooks.Schedule(j)
		out = append(out, core.Candidate{
			JobID:    b.Rec.ID,
			Priority: priority,
			Share:    share,
			InFlight: b.Batches.Leased() + b.Cross.leased(),
			Ready:    s.mayRun(j, wk) && ((b.Batches.Available() && s.mayTakeFresh(j, wk)) || s.replayFor(j, wk)),
		})
	}
	return out
}

// Take is core.Workload's Take: the next batch of jobID, rendered for wk
// by Hooks.Unit.
func (s *Set[J]) Take(jobID string, wk *core.Worker, now time.Time) (string, any, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	j, ok := s.Jobs[jobID]
	if !ok || !j.Base().Running() || !s.mayRun(j, wk) {
		return "", nil, false
	}
	bs := j.Base().Batches
	// A held batch this identity may replay goes first: its result waits
	// for it (crosscheck.go).
	idx, replay := s.takeReplay(j, wk, now)
	if !replay {
		if !s.mayTakeFresh(j, wk) {
			return "", nil, false
		}
		if idx, ok = bs.Take(wk.ID, now); !ok {
			return "", nil, false
		}
	}
	unit, err := s.Hooks.Unit(j, idx, wk.Caps.BenchNPS)
	if err != nil {
		// Batch indexes come from the job, so this is a bug, not input.
		s.Logger.Error("batch not built", zap.String(logging.JobID, jobID), zap.Int("batch", idx), zap.Error(err))
		if replay {
			s.endReplay(j, idx, wk.ID)
		} else {
			bs.Drop(idx, wk.ID)
		}
		return "", nil, false
	}
	if replay {
		s.Logger.Info("held batch leased for a replay", zap.String(logging.JobID, jobID), zap.Int("batch", idx),
			zap.String(logging.WorkerID, wk.ID))
	}
	s.seen(wk)
	return UnitID(jobID, idx), unit, true
}

// Ended is core.Workload's Ended. A lost lease (expired: the worker
// vanished mid-batch) is a disconnect incident of the worker; a cannot_run
// release marks the worker as unable to run the job. Both are stored as
// events (written after the core's lock is released, see EventQueue). The
// batch is open again unless the job is over.
func (s *Set[J]) Ended(l core.Lease, why core.End) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	jobID, idx, ok := ParseUnit(l.UnitID)
	j, known := s.Jobs[jobID]
	if !ok || !known || !j.Base().Running() {
		return
	}
	// A replay lease (crosscheck.go) ends like any other, except that its
	// batch stays held for another replay rather than reopened.
	replay := s.endReplay(j, idx, l.WorkerID)
	if !replay && !j.Base().Batches.Drop(idx, l.WorkerID) {
		return // not this lease's batch any more
	}
	b := j.Base()
	now := s.Now()
	switch {
	case why.JobOver:
		return
	case why.Expired:
		s.Activity.Note(l.WorkerID, now, 0, 1)
		evs := []store.Event{b.Event(l.UnitID, l.WorkerID, EvDisconnect, "lease "+l.ID+" expired", now)}
		if reason := b.Workers.LostLease(l.WorkerID); reason != "" {
			s.logExcluded(b, l.WorkerID, reason)
			evs = append(evs, b.Event(l.UnitID, l.WorkerID, EvExcluded, reason, now))
		}
		s.queue.Add(evs...)
	case why.CannotRun:
		if b.Workers.Refuse(l.WorkerID, why.Reason) {
			s.Logger.Warn("worker cannot run "+s.What+"; not offering it again", zap.String(logging.JobID, jobID),
				zap.String(logging.WorkerID, l.WorkerID), zap.String("reason", why.Reason))
		}
		s.queue.Add(b.Event(l.UnitID, l.WorkerID, EvRefused, why.Reason, now))
	}
	if !replay && b.Batches.Reopen(idx) && s.Host != nil {
		s.Host.WorkAvailable()
	}
}

// Locate is core.Workload's Locate: any batch id of a known job, whatever
// its index (Result and Adopt check the range).
func (s *Set[J]) Locate(unitID string) (string, bool) {
	jobID, _, ok := ParseUnit(unitID)
	if !ok {
		return "", false
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if _, known := s.Jobs[jobID]; !known {
		return "", false
	}
	return jobID, true
}

// Adopt is core.Workload's Adopt: a lease from before a restart (or that
// expired a moment ago) on a batch nobody else plays goes back to its
// worker, rather than the batch being played twice. It costs O(1) whatever
// the index (Batches.Hold).
func (s *Set[J]) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	jobID, idx, ok := ParseUnit(l.UnitID)
	j, known := s.Jobs[jobID]
	switch {
	case !ok || !known || !j.Base().Running() || !j.Base().Batches.InRange(idx) || j.Base().Batches.Stored(idx):
		return core.AdoptCancelled
	case !j.Base().Batches.Free(idx) || !s.mayRun(j, wk):
		return core.AdoptLost
	}
	j.Base().Batches.Hold(idx, wk.ID, s.Now())
	s.seen(wk)
	s.Logger.Info("batch lease adopted", zap.String(logging.JobID, jobID), zap.String(logging.UnitID, l.UnitID),
		zap.String(logging.WorkerID, wk.ID))
	return core.AdoptActive
}
