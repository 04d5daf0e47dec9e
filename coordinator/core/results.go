package core

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Held names a lease a worker says it holds.
type Held struct {
	LeaseID string
	UnitID  string
}

// HeldState is the core's answer for one held lease.
type HeldState int

const (
	// HeldActive: the lease is valid; its deadline was extended.
	HeldActive HeldState = iota + 1
	// HeldLost: the lease is not valid; a result may still be submitted.
	HeldLost
	// HeldCancelled: the job is over or the unit settled; stop.
	HeldCancelled
)

// HeldStatus answers one held lease.
type HeldStatus struct {
	LeaseID  string
	State    HeldState
	Deadline time.Time // for HeldActive
}

// Heartbeat extends the leases worker workerID holds and says what became
// of the others. Each held lease costs O(1).
func (c *Core) Heartbeat(ctx context.Context, caller identity.Identity, workerID string, held []Held) ([]HeldStatus, error) {
	if len(held) > MaxHeldLeases {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "heartbeat names %d leases, at most %d", len(held), MaxHeldLeases)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w, err := c.callerWorker(caller, workerID)
	if err != nil {
		return nil, err
	}
	now := c.cfg.Now()
	out := make([]HeldStatus, len(held))
	_, blocked := c.blockOf(w)
	for i, h := range held {
		st := &out[i]
		st.LeaseID = h.LeaseID
		if blocked {
			// An admin blocked it: its leases ended, and none is adopted.
			st.State = HeldCancelled
			continue
		}
		if l, ok := c.leases.Get(h.LeaseID); ok && l.WorkerID == w.ID && l.UnitID == h.UnitID {
			l, _ = c.leases.Extend(h.LeaseID, w.ID, now)
			st.State, st.Deadline = HeldActive, l.Deadline
			continue
		}
		if !c.leases.Signed(h.LeaseID, h.UnitID, w.ID) {
			// Not a lease this coordinator gave this worker for this unit.
			st.State = HeldLost
			continue
		}
		wl, jobID := c.locate(h.UnitID)
		if wl == nil {
			st.State = HeldCancelled
			continue
		}
		switch wl.Adopt(Lease{ID: h.LeaseID, UnitID: h.UnitID, JobID: jobID, WorkerID: w.ID}, w) {
		case AdoptActive:
			l := c.leases.Adopt(h.LeaseID, h.UnitID, jobID, w.ID, now)
			st.State, st.Deadline = HeldActive, l.Deadline
			c.log.Info("lease adopted", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, l.UnitID),
				zap.String(logging.JobID, jobID), zap.String(logging.WorkerID, w.ID))
		case AdoptCancelled:
			st.State = HeldCancelled
		default:
			st.State = HeldLost
		}
	}
	return out, nil
}

// locate finds the workload and job of a unit id by asking each workload.
// Caller holds mu.
func (c *Core) locate(unitID string) (Workload, string) {
	for _, wl := range c.workloads {
		if jobID, ok := wl.Locate(unitID); ok {
			return wl, jobID
		}
	}
	return nil, ""
}

// Release gives a lease back without a result. A lease the worker does not
// hold is ignored (already expired, submitted or ended).
func (c *Core) Release(ctx context.Context, caller identity.Identity, workerID, leaseID, reason string, cannotRun bool) error {
	if len(reason) > MaxNameBytes {
		reason = reason[:MaxNameBytes]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w, err := c.callerWorker(caller, workerID)
	if err != nil {
		return err
	}
	l, ok := c.leases.Get(leaseID)
	if !ok || l.WorkerID != w.ID {
		return nil
	}
	c.leases.End(l.ID)
	c.log.Info("lease released", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, l.UnitID),
		zap.String(logging.WorkerID, l.WorkerID), zap.String("reason", reason), zap.Bool("cannot_run", cannotRun))
	if wl := c.workloadOf(l); wl != nil {
		wl.Ended(toLease(l), End{Reason: reason, CannotRun: cannotRun})
	}
	c.wake.signal()
	return nil
}

// Submit hands a result to its workload after the one check of a result
// against its lease (invariant 1 of the package).
func (c *Core) Submit(ctx context.Context, caller identity.Identity, workerID, leaseID, unitID string, result any, elapsed time.Duration) (Verdict, error) {
	c.mu.Lock()
	w, err := c.callerWorker(caller, workerID)
	if err != nil {
		c.mu.Unlock()
		if apierr.ReasonOf(err) == apierr.ReasonNotLeaseHolder {
			c.metrics.reject(RejectNotLeaseHolder)
		}
		return 0, err
	}
	if _, blocked := c.blockOf(w); blocked {
		// Blocked by an admin: nothing it sends counts any more (its
		// leases ended when it was blocked).
		c.mu.Unlock()
		c.metrics.results.WithLabelValues(Discarded.String()).Inc()
		return Discarded, nil
	}
	var l Lease
	var wl Workload
	live := false
	if cur, ok := c.leases.Get(leaseID); ok && cur.WorkerID == w.ID && cur.UnitID == unitID {
		l, wl, live = toLease(cur), c.workloadOf(cur), true
	} else if c.leases.Signed(leaseID, unitID, w.ID) {
		var jobID string
		if wl, jobID = c.locate(unitID); wl == nil {
			c.mu.Unlock()
			c.metrics.results.WithLabelValues(Discarded.String()).Inc()
			return Discarded, nil
		}
		l = Lease{ID: leaseID, UnitID: unitID, JobID: jobID, WorkerID: w.ID}
	}
	c.mu.Unlock()
	if wl == nil {
		c.metrics.reject(RejectNotLeaseHolder)
		c.incident(ctx, w, unitID, "result refused: not the lease holder", "lease "+apierr.Q(leaseID))
		return 0, apierr.New(apierr.PermissionDenied, apierr.ReasonNotLeaseHolder,
			"worker %s holds no lease %s on unit %s", w.ID, apierr.Q(leaseID), apierr.Q(unitID))
	}

	out, err := wl.Result(ctx, ResultCall{Lease: l, Worker: w, Live: live, Result: result, Elapsed: elapsed})
	if err != nil {
		if reason := rejectReason(err); reason != "" {
			c.metrics.reject(reason)
			c.incident(ctx, w, unitID, "result refused: "+reason, err.Error())
		}
		return 0, err
	}
	c.metrics.results.WithLabelValues(out.Verdict.String()).Inc()
	c.mu.Lock()
	if live {
		c.leases.End(l.ID)
	}
	if out.EndUnitLeases {
		for _, other := range c.leases.ForUnit(unitID) {
			c.leases.End(other.ID)
			wl.Ended(toLease(other), End{JobOver: out.JobOver})
		}
	}
	if out.JobOver {
		c.endJobLeases(l.JobID)
	}
	c.mu.Unlock()
	c.wake.signal()
	c.reg.changed(l.JobID)
	return out.Verdict, nil
}

// Reasons a result is refused before it counts
// (arbiter_results_rejected_total{reason}).
const (
	RejectMalformed       = "malformed"
	RejectImplausible     = "implausible"
	RejectUnknownUnit     = "unknown_unit"
	RejectStaleLease      = "stale_lease"
	RejectUnauthenticated = "unauthenticated"
	RejectNotLeaseHolder  = "not_lease_holder"
	RejectConflicting     = "conflicting"
	// RejectInvalidGame: a game of a batch does not replay (gamepair.ReplayBatch).
	RejectInvalidGame = "invalid_game"
)

// RejectReasons are every value of the reason label, exported at 0 from
// start-up.
var RejectReasons = []string{RejectMalformed, RejectImplausible, RejectUnknownUnit, RejectStaleLease,
	RejectUnauthenticated, RejectNotLeaseHolder, RejectConflicting, RejectInvalidGame}

func rejectReason(err error) string {
	switch apierr.ReasonOf(err) {
	case apierr.ReasonMalformedResult, apierr.ReasonTooLarge:
		return RejectMalformed
	case apierr.ReasonImplausibleResult:
		return RejectImplausible
	case apierr.ReasonUnknownUnit:
		return RejectUnknownUnit
	case apierr.ReasonNotLeaseHolder:
		return RejectNotLeaseHolder
	case apierr.ReasonConflictingResult:
		return RejectConflicting
	case apierr.ReasonInvalidGame:
		return RejectInvalidGame
	}
	return ""
}

// incidentBurst bounds the incidents stored per worker per incidentWindow,
// so a worker spamming refused results cannot grow the store.
const (
	incidentBurst  = 20
	incidentWindow = time.Hour
)

// incident records a refused result as an event of the worker (bounded per
// worker) and logs it.
func (c *Core) incident(ctx context.Context, w *Worker, unitID, kind, detail string) {
	c.log.Warn(kind, zap.String(logging.WorkerID, w.ID), zap.String(logging.UnitID, apierr.Quote(unitID, 100)),
		zap.String("owner", w.Owner), zap.String("detail", apierr.Quote(detail, 300)))
	if c.store == nil || !c.incidents.allow(w.ID, c.cfg.Now()) {
		return
	}
	ev := store.Event{UnitID: apierr.Quote(unitID, 100), WorkerID: w.ID, Kind: "incident", Detail: kind + ": " + apierr.Quote(detail, 300), At: c.cfg.Now()}
	if err := c.store.AddEvents(ctx, []store.Event{ev}); err != nil {
		c.log.Warn("incident not stored", zap.Error(err))
	}
}
