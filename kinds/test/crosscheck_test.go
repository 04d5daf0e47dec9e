package test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// crossWorker is a game-pair worker of identity id, with what it needs to
// lease and submit as that identity.
type crossWorker struct {
	id identity.Identity
	w  *core.Worker
}

func (e *env) crossWorker(owner, name string) crossWorker {
	e.T.Helper()
	id := identity.Identity{Name: owner, Role: identity.Worker}
	return crossWorker{id, e.WorkerOf(id, name, 1_000_000)}
}

func (e *env) crossLease(cw crossWorker) (core.Grant, bool) {
	e.T.Helper()
	return e.LeaseOf(cw.id, cw.w)
}

func (e *env) crossSubmit(cw crossWorker, g core.Grant, res *arbiterv1.GamePairBatchResult, want core.Verdict) {
	e.T.Helper()
	e.MustSubmitOf(cw.id, cw.w, g, res, want)
}

// fixedNodes is a match of games games in batches of one pair between two
// single-threaded embedded engines at 1,000 nodes: a test whose batches
// another identity can replay move for move.
func fixedNodes(games uint64) *arbiterv1.MatchSpec {
	s := matchSpec(games, 1, 8)
	s.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}}
	return s
}

// With --replay-fraction 1 a batch counts only once a second identity's
// result agrees with the first, and another worker of the same identity
// never replays it. (Mismatches are settled by trust, without a third
// identity: gamepair's trust tests.)
func TestCrossCheckHoldsUntilAnotherIdentityAgrees(t *testing.T) {
	e := newEnv(t, Config{})
	e.WL.ReplayFraction = 1
	id := e.create(fixedNodes(8))
	a1, a2 := e.crossWorker("alice", "a1"), e.crossWorker("alice", "a2")
	b1 := e.crossWorker("bob", "b1")
	crossChecks := func(outcome string) float64 {
		return testutil.ToFloat64(e.WL.metrics.crossChecks.Vec().WithLabelValues(outcome))
	}
	games := func() uint64 { return e.Job(id).GetMatchProgress().GetGames() }

	g0, _ := e.crossLease(a1)
	e.crossSubmit(a1, g0, wins(1), core.Accepted)
	if n, _ := e.storedBatches(id); n != 0 || games() != 0 || crossChecks("held") != 1 {
		t.Fatalf("a held batch counted: %d stored, %d games, %v held", n, games(), crossChecks("held"))
	}
	// Alice's other worker gets the next fresh batch, never the replay of
	// her own; Bob gets the replay.
	if g, _ := e.crossLease(a2); g.Lease.UnitID == g0.Lease.UnitID {
		t.Fatal("a worker of the same identity replays the held batch")
	}
	g, ok := e.crossLease(b1)
	if !ok || g.Lease.UnitID != g0.Lease.UnitID {
		t.Fatalf("bob leased %q, want the replay of %s", g.Lease.UnitID, g0.Lease.UnitID)
	}
	e.crossSubmit(b1, g, wins(1), core.Accepted)
	if n, _ := e.storedBatches(id); n != 1 || games() != 2 || crossChecks("agreed") != 1 {
		t.Fatalf("after agreement: %d stored, %d games, %v agreed", n, games(), crossChecks("agreed"))
	}
	// Bob's worker keeps the games of batch 0, which its replay completed
	// (a batch counts from the result that completes its check).
	if row := workerRow(e.Job(id), b1.w.ID); row.GetExcluded() || row.GetGames() != 2 {
		t.Fatalf("bob's worker: %v", row)
	}
}

// Held results are in memory: a restarted coordinator plays a held batch
// afresh, and never counts it without its check.
func TestCrossCheckHeldBatchAfterRestart(t *testing.T) {
	e := newEnv(t, Config{})
	e.WL.ReplayFraction = 1
	id := e.create(fixedNodes(2))
	a1 := e.crossWorker("alice", "a1")
	e.crossWorker("bob", "b1")
	g, _ := e.crossLease(a1)
	e.crossSubmit(a1, g, wins(1), core.Accepted)
	e.Restart()
	e.WL.ReplayFraction = 1
	a1 = e.crossWorker("alice", "a1")
	again, ok := e.crossLease(a1)
	if !ok || again.Lease.UnitID != g.Lease.UnitID {
		t.Fatalf("after a restart alice leased %q %v, want %s afresh", again.Lease.UnitID, ok, g.Lease.UnitID)
	}
	if n, _ := e.storedBatches(id); n != 0 {
		t.Fatalf("%d batches stored", n)
	}
}

// A batch is checked only while another identity is there to replay it,
// and only in a test whose engines are deterministic at fixed nodes.
func TestCrossCheckNeedsTwoIdentitiesAndFixedNodes(t *testing.T) {
	e := newEnv(t, Config{})
	e.WL.ReplayFraction = 1
	alone := e.create(fixedNodes(2))
	a1 := e.crossWorker("alice", "a1")
	g, _ := e.crossLease(a1)
	e.crossSubmit(a1, g, wins(1), core.Accepted)
	if n, _ := e.storedBatches(alone); n != 1 {
		t.Fatalf("one identity live: %d batches stored, want the batch counted", n)
	}
	clock := e.create(matchSpec(2, 1, 8)) // 10+0.1: times are not reproducible
	e.crossWorker("bob", "b1")
	g, _ = e.crossLease(a1)
	if !strings.HasPrefix(g.Lease.UnitID, clock) {
		t.Fatalf("leased %s", g.Lease.UnitID)
	}
	e.crossSubmit(a1, g, wins(1), core.Accepted)
	if n, _ := e.storedBatches(clock); n != 1 {
		t.Fatalf("a test under a clock: %d batches stored, want the batch counted", n)
	}
}

// A batch is held only while an identity that could replay it is live: a
// live identity whose workers cannot play the test (here, without
// per-engine limits) is no witness, so the batch counts at once rather
// than wait for a replay nobody can lease; the control, the same
// identity with workers that can play it, gets the batch held.
func TestCrossCheckWaitsOnlyForIdentitiesThatCanReplay(t *testing.T) {
	for _, bobCanPlay := range []bool{false, true} {
		e := newEnv(t, Config{})
		e.WL.ReplayFraction = 1
		spec := fixedNodes(2)
		spec.EngineA.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}}
		id := e.create(spec)
		register := func(owner, name string, limits bool) crossWorker {
			tags := []string{capability.GamePair}
			if limits {
				tags = append(tags, capability.EngineLimits)
			}
			who := identity.Identity{Name: owner, Role: identity.Worker}
			w, err := e.C.Register(context.Background(), who, name, core.Caps{Cores: 64, Tags: tags, BenchNPS: 1_000_000})
			if err != nil {
				t.Fatal(err)
			}
			return crossWorker{who, w}
		}
		a1 := register("alice", "a1", true)
		register("bob", "b1", bobCanPlay)
		g, ok := e.crossLease(a1)
		if !ok {
			t.Fatal("alice leased nothing")
		}
		e.crossSubmit(a1, g, wins(1), core.Accepted)
		want := 1 // counted at once
		if bobCanPlay {
			want = 0 // held for bob's replay
		}
		if n, _ := e.storedBatches(id); n != want {
			t.Fatalf("bob's workers can play the test: %v; %d batches stored, want %d", bobCanPlay, n, want)
		}
	}
}

// A replay lease that expires is a lost lease of its worker, and the
// batch stays held for the next replay.
func TestCrossCheckReplayLeaseExpires(t *testing.T) {
	e := newEnv(t, Config{})
	e.WL.ReplayFraction = 1
	id := e.create(fixedNodes(2))
	a1, b1 := e.crossWorker("alice", "a1"), e.crossWorker("bob", "b1")
	g, _ := e.crossLease(a1)
	e.crossSubmit(a1, g, wins(1), core.Accepted)
	if r, ok := e.crossLease(b1); !ok || r.Lease.UnitID != g.Lease.UnitID {
		t.Fatalf("bob leased %q %v, want the replay of %s", r.Lease.UnitID, ok, g.Lease.UnitID)
	}
	e.ExpireAll()
	if err := e.WL.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if row := workerRow(e.Job(id), b1.w.ID); row.GetDisconnects() != 1 {
		t.Fatalf("bob's worker after its replay lease expired: %v", row)
	}
	if g, ok := e.crossLease(a1); ok {
		t.Fatalf("alice leased %s: the held batch went back to the fresh ones", g.Lease.UnitID)
	}
	r, ok := e.crossLease(b1)
	if !ok || r.Lease.UnitID != g.Lease.UnitID {
		t.Fatalf("bob leased %q %v, want the replay of %s again", r.Lease.UnitID, ok, g.Lease.UnitID)
	}
	e.crossSubmit(b1, r, wins(1), core.Accepted)
	if n, _ := e.storedBatches(id); n != 1 {
		t.Fatalf("%d batches stored after the replay agreed", n)
	}
}

// An identity whose held results reach the cap gets no fresh batch until
// another identity's replays catch up: its batches wait, never counted
// unchecked.
func TestCrossCheckHeldCapPerIdentity(t *testing.T) {
	e := newEnv(t, Config{})
	e.WL.ReplayFraction = 1
	const held = 256 // gamepair's maxHeldPerIdentity
	id := e.create(fixedNodes(2 * (held + 4)))
	a1, b1 := e.crossWorker("alice", "a1"), e.crossWorker("bob", "b1")
	for range held {
		g, ok := e.crossLease(a1)
		if !ok {
			t.Fatal("no lease under the cap")
		}
		e.crossSubmit(a1, g, wins(1), core.Accepted)
	}
	if g, ok := e.crossLease(a1); ok {
		t.Fatalf("alice leased %s with %d results held", g.Lease.UnitID, held)
	}
	r, ok := e.crossLease(b1)
	if !ok {
		t.Fatal("bob has no replay to play")
	}
	e.crossSubmit(b1, r, wins(1), core.Accepted)
	if _, ok := e.crossLease(a1); !ok {
		t.Fatal("alice gets no fresh batch once a replay agreed")
	}
	if n, _ := e.storedBatches(id); n != 1 {
		t.Fatalf("%d batches stored, want the one replayed", n)
	}
}

// lockCheckingHost fails the test when the set asks the core for its live
// identities while holding its own lock.
type lockCheckingHost struct {
	core.Host
	t     *testing.T
	wl    *Workload
	calls *int
}

func (h lockCheckingHost) LiveIdentitiesFit(tag string, fits func(core.Caps) bool) int {
	*h.calls++
	if !h.wl.Mu.TryLock() {
		h.t.Error("LiveIdentitiesFit called with the set's lock held")
	} else {
		h.wl.Mu.Unlock()
	}
	return h.Host.LiveIdentitiesFit(tag, fits)
}

// The set counts the live identities (which takes the core's lock) holding
// none of its own: the core calls the set under its lock (Lease → Take),
// so the other order deadlocks; it froze a farm in CI when a replay was
// drawn while a worker leased. Both places that ask: drawing a batch for
// a replay, and excluding a liar.
func TestLiveIdentitiesAskedWithoutTheSetLock(t *testing.T) {
	e := newEnv(t, Config{})
	e.WL.ReplayFraction = 1
	calls := 0
	e.WL.SetHost(lockCheckingHost{Host: e.C.Host(), t: t, wl: e.WL, calls: &calls})
	e.create(fixedNodes(8))
	a1, b1 := e.crossWorker("alice", "a1"), e.crossWorker("bob", "b1")
	g, _ := e.crossLease(a1)
	e.crossSubmit(a1, g, wins(1), core.Accepted)
	drawn := calls
	if drawn == 0 {
		t.Fatal("control: drawing a batch for a replay did not count the live identities")
	}
	if g, ok := e.crossLease(b1); ok {
		e.crossSubmit(b1, g, wins(1), core.Accepted) // the replay agrees: the batch counts, as bob's
	}
	drawn = calls
	if purged := e.WL.DeclareLiar(context.Background(), "bob", "test"); len(purged) != 1 {
		t.Fatalf("declaring bob a liar purged %v, want the test", purged)
	}
	if calls == drawn {
		t.Fatal("control: excluding a liar did not count the live identities")
	}
}
