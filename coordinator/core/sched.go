package core

import (
	"context"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
)

// Grant is a lease and the unit it is for.
type Grant struct {
	Lease   Lease
	Payload any
}

// Lease gives worker workerID of caller a unit, waiting up to wait (at most
// MaxLeaseWait) for one to appear. ok is false when none did.
//
// Scheduling between jobs, whatever their kind: the highest priority with a
// unit for this worker wins; among equal priorities, the job furthest below
// its throughput share, where a job's share is its weight over the weights
// of all running jobs of that priority and its use is its leases out over
// all their leases out. A lease is one core's work (a perft unit or a
// game-pair batch slot), so shares are shares of the farm's cores: a short
// perft job next to a long SPRT gets its share at once and finishes in the
// time it takes alone on that share.
func (c *Core) Lease(ctx context.Context, caller identity.Identity, workerID string, wait time.Duration) (Grant, bool, error) {
	wait = min(wait, MaxLeaseWait)
	var deadline <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		deadline = t.C
	}
	var held *Worker // counted as waiting while the call is held open
	defer func() {
		if held != nil {
			c.mu.Lock()
			held.waiting--
			c.mu.Unlock()
		}
	}()
	for {
		woken := c.wake.wait()
		c.mu.Lock()
		w, err := c.callerWorker(caller, workerID)
		if err == nil && c.closed {
			err = errShuttingDown
		}
		if err != nil {
			c.mu.Unlock()
			return Grant{}, false, err
		}
		var g Grant
		ok := false
		if _, blocked := c.blockOf(w); !blocked && c.mayLease(caller) {
			g, ok = c.pick(w)
		}
		if !ok && deadline != nil && held == nil {
			held = w
			w.waiting++
		}
		c.mu.Unlock()
		if ok {
			return g, true, nil
		}
		if deadline == nil {
			return Grant{}, false, nil
		}
		select {
		case <-woken:
		case <-deadline:
			return Grant{}, false, nil
		case <-ctx.Done():
			return Grant{}, false, ctx.Err()
		}
	}
}

// pick chooses a job and a unit for w and grants the lease, unless w
// holds a lease per core it declared already (MaxLeases). Caller holds mu.
func (c *Core) pick(w *Worker) (Grant, bool) {
	if c.leases.CountWorker(w.ID) >= MaxLeases(w.Caps) {
		return Grant{}, false
	}
	cands := c.cands[:0]
	for _, wl := range c.workloads {
		n := len(cands)
		cands = wl.Candidates(w, cands)
		for i := n; i < len(cands); i++ {
			cands[i].wl = wl
		}
	}
	c.cands = cands[:0]
	order := rank(cands)
	now := c.cfg.Now()
	for _, i := range order {
		cd := &cands[i]
		if !c.mayOffer(cd.JobID) {
			continue
		}
		unitID, payload, ok := cd.wl.Take(cd.JobID, w, now)
		if !ok {
			continue
		}
		l := c.leases.Grant(unitID, cd.JobID, w.ID, now)
		c.metrics.leasesGranted.Inc()
		c.log.Debug("lease granted", zap.String(logging.JobID, cd.JobID), zap.String(logging.UnitID, unitID),
			zap.String(logging.WorkerID, w.ID), zap.String(logging.LeaseID, l.ID))
		return Grant{Lease: toLease(l), Payload: payload}, true
	}
	return Grant{}, false
}

// mayLease reports whether caller's workers, all together, hold fewer
// leases than the identity's limit (quota.Limits.Leases). Over it, a
// worker waits as if there were no work: a pool that big is either a
// mistake or an attempt to sit on the farm's units. Caller holds mu.
func (c *Core) mayLease(caller identity.Identity) bool {
	if c.cfg.Quota == nil || !quota.Limited(caller) {
		return true
	}
	lim := c.cfg.Quota.Limits().Leases
	if lim == 0 {
		return true
	}
	held := 0
	for _, w := range c.byOwner[caller.Name] {
		held += c.leases.CountWorker(w.ID)
	}
	return held < lim
}

// MaxLeases is how many leases a worker may hold at once: one per core it
// declared. A worker runs a unit per core (a slot per thread), so an
// honest one never needs more; a result waiting to be delivered keeps its
// lease, so its slot may wait a moment for the next. Nothing else a worker
// says (its bench is of one thread) measures its cores.
func MaxLeases(caps Caps) int { return max(int(caps.Cores), 1) }

// rank returns the indexes of the ready candidates, best first.
func rank(cands []Candidate) []int {
	type tally struct {
		share    float64
		inflight int
	}
	byPrio := map[int32]*tally{}
	for _, cd := range cands {
		t := byPrio[cd.Priority]
		if t == nil {
			t = &tally{}
			byPrio[cd.Priority] = t
		}
		t.share += max(cd.Share, 0)
		t.inflight += cd.InFlight
	}
	deficit := func(cd Candidate) float64 {
		t := byPrio[cd.Priority]
		if t.share <= 0 {
			return 0
		}
		return max(cd.Share, 0)/t.share - float64(cd.InFlight)/float64(max(t.inflight, 1))
	}
	var idx []int
	for i, cd := range cands {
		if cd.Ready {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := cands[idx[a]], cands[idx[b]]
		if x.Priority != y.Priority {
			return x.Priority > y.Priority
		}
		return deficit(x) > deficit(y)+1e-12
	})
	return idx
}
