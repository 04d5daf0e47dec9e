package test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Batches go out in order, each with its own pairs, openings and seed; a
// lost lease re-issues the same batch (same openings, same seed), and the
// worker that lost it has a disconnect.
func TestBatchesInOrderAndReissued(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(matchSpec(12, 2, 3)) // 6 pairs in 3 batches over 3 openings
	a, b := e.Worker("a", DefaultReferenceNPS), e.Worker("b", DefaultReferenceNPS)
	first := map[string]*arbiterv1.WorkUnit{}
	for i := 0; i < 3; i++ {
		g := e.MustLease(a)
		if want := fmt.Sprintf("%s.%d", id, i); g.Lease.UnitID != want {
			t.Fatalf("lease %d is %s, want %s", i, g.Lease.UnitID, want)
		}
		gp := gamepairtest.BatchOf(g)
		if gp.GetFirstPair() != uint32(2*i) || gp.GetSeed() != 7*1_000_003+uint64(i) || len(gp.GetOpenings()) != 2 {
			t.Fatalf("batch %d: first pair %d, seed %d, %d openings", i, gp.GetFirstPair(), gp.GetSeed(), len(gp.GetOpenings()))
		}
		for k, op := range gp.GetOpenings() {
			if want := uint32((2*i + k) % 3); op.GetIndex() != want {
				t.Fatalf("batch %d pair %d plays opening %d, want %d", i, k, op.GetIndex(), want)
			}
		}
		first[g.Lease.UnitID] = g.Payload.(*arbiterv1.WorkUnit)
	}
	if g, ok := e.Lease(b); ok {
		t.Fatalf("a fourth batch of a 3-batch test: %s", g.Lease.UnitID)
	}
	e.ExpireAll()
	for i := 0; i < 3; i++ {
		g := e.MustLease(b)
		if !proto.Equal(g.Payload.(*arbiterv1.WorkUnit), first[g.Lease.UnitID]) {
			t.Fatalf("re-issued %s differs from its first issue", g.Lease.UnitID)
		}
		delete(first, g.Lease.UnitID)
	}
	if len(first) != 0 {
		t.Fatalf("not re-issued: %v", first)
	}
	if err := e.WL.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := workerRow(e.Job(id), a.ID); w == nil || w.GetDisconnects() != 3 || w.GetName() != "a" {
		t.Fatalf("worker a after 3 lost leases: %v", w)
	}
	evs, _ := e.St.Events(context.Background(), id)
	if len(evs) != 3 || evs[0].Kind != gamepair.EvDisconnect || evs[0].WorkerID != a.ID {
		t.Fatalf("stored events: %+v", evs)
	}
}

// Clocks and move times are scaled by reference / worker speed, clamped to
// [0.1, 10]; nodes and depth never are.
func TestTimeScaling(t *testing.T) {
	e := newEnv(t, Config{})
	clockTest := e.create(matchSpec(100, 1, 4))
	cases := []struct {
		bench uint64
		scale float64
	}{{DefaultReferenceNPS / 2, 2}, {DefaultReferenceNPS * 2, 0.5}, {DefaultReferenceNPS / 1000, 10}, {DefaultReferenceNPS * 1000, 0.1}, {0, 1}}
	for i, c := range cases {
		w := e.Worker(fmt.Sprintf("w%d", i), c.bench)
		gp := gamepairtest.BatchOf(e.MustLease(w))
		clk := gp.GetTimeControl().GetClock()
		if gp.GetTimeScale() != c.scale || clk.GetBase().AsDuration() != time.Duration(c.scale*float64(10*time.Second)) ||
			clk.GetIncrement().AsDuration() != time.Duration(c.scale*float64(100*time.Millisecond)) {
			t.Errorf("bench %d: scale %v, clock %v+%v; want ×%v", c.bench, gp.GetTimeScale(), clk.GetBase().AsDuration(), clk.GetIncrement().AsDuration(), c.scale)
		}
	}
	e.C.Cancel(context.Background(), admin, clockTest, "next")

	mt := matchSpec(100, 1, 4)
	mt.TimeControl = gamepairtest.MoveTime(100 * time.Millisecond)
	e.create(mt)
	slow := e.Worker("slow", DefaultReferenceNPS/4)
	if gp := gamepairtest.BatchOf(e.MustLease(slow)); gp.GetTimeControl().GetMoveTime().AsDuration() != 400*time.Millisecond || gp.GetTimeScale() != 4 {
		t.Errorf("move time for a worker at a quarter speed: %v (scale %v)", gp.GetTimeControl().GetMoveTime().AsDuration(), gp.GetTimeScale())
	}
	for _, tc := range []*arbiterv1.TimeControl{
		{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 5000}},
		{Kind: &arbiterv1.TimeControl_Depth{Depth: 6}},
	} {
		for _, j := range e.WL.SPRTStates() {
			e.C.Cancel(context.Background(), admin, j.TestID, "next")
		}
		s := matchSpec(100, 1, 4)
		s.TimeControl = tc
		e.create(s)
		gp := gamepairtest.BatchOf(e.MustLease(slow))
		if gp.GetTimeScale() != 1 || !proto.Equal(gp.GetTimeControl(), tc) {
			t.Errorf("%v scaled for a slow worker: %v (scale %v)", tc, gp.GetTimeControl(), gp.GetTimeScale())
		}
	}
}

// Two tests of equal priority share the workers by throughput; a higher
// priority goes first whatever its share. Through the core's scheduler.
func TestSharesByThroughput(t *testing.T) {
	e := newEnv(t, Config{})
	one := matchSpec(1000, 1, 4)
	one.Throughput = 1
	three := matchSpec(1000, 1, 4)
	three.Throughput = 3
	a, b := e.create(one), e.create(three)
	counts := map[string]int{}
	for i := 0; i < 8; i++ {
		g := e.MustLease(e.Worker(fmt.Sprintf("w%d", i), DefaultReferenceNPS))
		counts[g.Lease.JobID]++
	}
	if counts[a] != 2 || counts[b] != 6 {
		t.Fatalf("8 leases between throughput 1 and 3: %d and %d", counts[a], counts[b])
	}
	urgent := matchSpec(1000, 1, 4)
	urgent.Priority, urgent.Throughput = 1, 0.01
	u := e.create(urgent)
	for i := 0; i < 4; i++ {
		if g := e.MustLease(e.Worker(fmt.Sprintf("x%d", i), DefaultReferenceNPS)); g.Lease.JobID != u {
			t.Fatalf("lease %d went to %s before the priority-1 test", i, g.Lease.JobID)
		}
	}
}

// A worker that cannot run a test (cannot_run release) is not offered it
// again, status says why, and that survives a restart.
func TestCannotRun(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(matchSpec(8, 1, 4))
	a, b := e.Worker("a", 0), e.Worker("b", 0)
	g := e.MustLease(a)
	const why = `engine "new": command "/x/new" is not present or not executable on this worker`
	if err := e.C.Release(context.Background(), alice, a.ID, g.Lease.ID, why, true); err != nil {
		t.Fatal(err)
	}
	if g, ok := e.Lease(a); ok {
		t.Fatalf("a refused the test and got %s", g.Lease.UnitID)
	}
	if g2 := e.MustLease(b); g2.Lease.UnitID != g.Lease.UnitID {
		t.Fatalf("released batch %s not re-issued first (got %s)", g.Lease.UnitID, g2.Lease.UnitID)
	}
	r := workerRow(e.Job(id), a.ID)
	if r == nil || !r.GetExcluded() || r.GetReason() != "cannot run the test: "+why {
		t.Fatalf("status of the refusing worker: %v", r)
	}
	e.Restart()
	if r := workerRow(e.Job(id), a.ID); r == nil || !r.GetExcluded() || !strings.Contains(r.GetReason(), why) {
		t.Fatalf("after a restart: %v", r)
	}
	if g, ok := e.Lease(a); ok {
		t.Fatalf("after a restart a refused worker got %s", g.Lease.UnitID)
	}
}

// A worker whose time losses, hangs or lost leases pass the rate in its
// window is excluded and not offered the test again; crashes (the engine's
// fault) do not exclude.
func TestExclusion(t *testing.T) {
	e := newEnv(t, Config{Settings: gamepair.Settings{IncidentWindow: 8, IncidentMaxRate: 0.2}})
	id := e.create(matchSpec(200, 2, 4)) // 4 games a batch
	slow, lossy, crashy := e.Worker("slow", 0), e.Worker("lossy", 0), e.Worker("crashy", 0)

	// 4 clean games, then 4 with a time loss and a hang: 2 of 8 = 25%.
	e.MustSubmit(slow, e.MustLease(slow), draws(2), core.Accepted)
	if r := workerRow(e.Job(id), slow.ID); r.GetExcluded() {
		t.Fatalf("excluded after a clean batch: %v", r)
	}
	r2 := withIncidents(draws(2), arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS, 1)
	r2.Incidents = append(r2.Incidents, &arbiterv1.Incident{Kind: arbiterv1.IncidentKind_INCIDENT_KIND_HANG, GameIndex: 3})
	e.MustSubmit(slow, e.MustLease(slow), r2, core.Accepted)
	r := workerRow(e.Job(id), slow.ID)
	if !r.GetExcluded() || !strings.Contains(r.GetReason(), "2 worker-caused incidents") || r.GetTimeLosses() != 1 || r.GetOther() != 1 {
		t.Fatalf("after 2 bad games in 8: %v", r)
	}
	if g, ok := e.Lease(slow); ok {
		t.Fatalf("an excluded worker got %s", g.Lease.UnitID)
	}

	// Lost leases: each one bad game; excluded once half the window (4) is
	// reached.
	for i := 1; i <= 4; i++ {
		e.MustLease(lossy)
		e.ExpireAll()
		r := workerRow(e.Job(id), lossy.ID)
		if r.GetDisconnects() != uint64(i) || r.GetExcluded() != (i == 4) {
			t.Fatalf("after %d lost leases: %v", i, r)
		}
	}
	if g, ok := e.Lease(lossy); ok {
		t.Fatalf("a worker excluded for lost leases got %s", g.Lease.UnitID)
	}

	// Crashes are the engine's: counted, never excluding.
	for i := 0; i < 3; i++ {
		e.MustSubmit(crashy, e.MustLease(crashy), withIncidents(draws(2), arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, 4), core.Accepted)
	}
	if r := workerRow(e.Job(id), crashy.ID); r.GetExcluded() || r.GetCrashes() != 12 {
		t.Fatalf("crashes: %v", r)
	}

	// Exclusions survive a restart, with their reasons.
	before := e.Job(id)
	e.Restart()
	if after := e.Job(id); !proto.Equal(before.GetMatchProgress(), after.GetMatchProgress()) {
		t.Fatalf("status changed across a restart:\nbefore %v\nafter  %v", before.GetMatchProgress(), after.GetMatchProgress())
	}
	if g, ok := e.Lease(lossy); ok {
		t.Fatalf("after a restart an excluded worker got %s", g.Lease.UnitID)
	}
}

// An exclusion decided with lost leases in the window keeps its reason
// across a restart (the batches alone would give another one).
func TestExclusionReasonSurvivesRestart(t *testing.T) {
	e := newEnv(t, Config{Settings: gamepair.Settings{IncidentWindow: 8, IncidentMaxRate: 0.2}})
	id := e.create(matchSpec(100, 1, 4)) // 2 games a batch
	w := e.Worker("w", 0)
	e.MustSubmit(w, e.MustLease(w), withIncidents(draws(1), arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS, 1), core.Accepted)
	e.MustLease(w)
	e.ExpireAll()
	e.MustSubmit(w, e.MustLease(w), draws(1), core.Accepted)
	r := workerRow(e.Job(id), w.ID)
	if !r.GetExcluded() || !strings.Contains(r.GetReason(), "2 worker-caused incidents (time losses, hangs, lost leases) in its last 5 games") {
		t.Fatalf("after a time loss, a lost lease and a clean batch: %v", r)
	}
	e.Restart()
	if after := workerRow(e.Job(id), w.ID); !proto.Equal(r, after) {
		t.Fatalf("across a restart:\nbefore %v\nafter  %v", r, after)
	}
}

// An engine's own time control (time odds) replaces the test's for it: it
// is checked at submit naming the engine, scaled per worker by the same
// factor as the test's clock, and sent only to workers that play it.
func TestPerEngineTimeControls(t *testing.T) {
	e := newEnv(t, Config{})
	clock := gamepairtest.BaseInc
	for _, c := range []struct {
		want   string
		mutate func(s *arbiterv1.MatchSpec)
	}{
		{`engine_b "base": time control: tc=0.01: a base time under 0.05 s cannot be played`, func(s *arbiterv1.MatchSpec) {
			s.EngineB.TimeControl = clock(10*time.Millisecond, 0)
		}},
		{`engine_a "new": time control: depth=200: beyond 128 plies`, func(s *arbiterv1.MatchSpec) {
			s.EngineA.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Depth{Depth: 200}}
		}},
		{`engine_b "base": time control: time control missing`, func(s *arbiterv1.MatchSpec) {
			s.EngineB.TimeControl = &arbiterv1.TimeControl{}
		}},
		// The test's own may be missing only when both engines have theirs.
		{"time control: time control missing", func(s *arbiterv1.MatchSpec) {
			s.TimeControl, s.EngineB.TimeControl = nil, clock(time.Second, 0)
		}},
	} {
		s := matchSpec(100, 2, 4)
		c.mutate(s)
		if _, err := e.C.Create(context.Background(), carol, Kind, s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
	if jobs, _ := e.St.Jobs(context.Background()); len(jobs) != 0 {
		t.Fatalf("%d jobs stored after refusals", len(jobs))
	}

	// Test 10+0.1, base at 5+0.05; a worker at half the reference speed
	// gets both doubled.
	s := matchSpec(100, 1, 4)
	s.EngineB.TimeControl = clock(5*time.Second, 50*time.Millisecond)
	id := e.create(s)
	old := e.Worker("old", DefaultReferenceNPS/2)
	if g, ok := e.Lease(old); ok {
		t.Fatalf("a worker without %s got %v", capability.EngineLimits, g.Payload)
	}
	w, err := e.C.Register(context.Background(), alice, "new", core.Caps{Cores: 1, BenchNPS: DefaultReferenceNPS / 2,
		Tags: []string{capability.GamePair, capability.EngineLimits}})
	if err != nil {
		t.Fatal(err)
	}
	gp := gamepairtest.BatchOf(e.MustLease(w))
	a, b := gp.GetEngineA().GetTimeControl(), gp.GetEngineB().GetTimeControl().GetClock()
	if gp.GetTimeScale() != 2 || gp.GetTimeControl().GetClock().GetBase().AsDuration() != 20*time.Second || a != nil ||
		b.GetBase().AsDuration() != 10*time.Second || b.GetIncrement().AsDuration() != 100*time.Millisecond {
		t.Errorf("scaled ×%v: test %v, a %v, b %v", gp.GetTimeScale(), gp.GetTimeControl(), a, b)
	}
	if own := e.Job(id).GetMatch().GetEngineB().GetTimeControl().GetClock(); own.GetBase().AsDuration() != 5*time.Second {
		t.Errorf("the stored engine's clock changed: %v", own)
	}
	e.C.Cancel(context.Background(), admin, id, "next")

	// Fixed nodes for the test, a move time for base: only base's time is
	// scaled, and the batch is sized for base's longer games.
	s = matchSpec(1000, 0, 4)
	s.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}}
	s.EngineB.TimeControl = gamepairtest.MoveTime(100 * time.Millisecond)
	id = e.create(s)
	gp = gamepairtest.BatchOf(e.MustLease(w))
	if gp.GetTimeScale() != 2 || gp.GetTimeControl().GetNodes() != 1000 || gp.GetEngineB().GetTimeControl().GetMoveTime().AsDuration() != 200*time.Millisecond {
		t.Errorf("nodes vs move time, ×%v: test %v, b %v", gp.GetTimeScale(), gp.GetTimeControl(), gp.GetEngineB().GetTimeControl())
	}
	j := e.Job(id)
	// 120 plies at 0.1 s: 12 s a game, so a 30 s batch holds one pair
	// (at nodes=1000 alone it would be the cap of 32).
	if j.GetMatch().GetBatchPairs() != 1 {
		t.Errorf("batch of %d pairs for nodes=1000 vs movetime=100", j.GetMatch().GetBatchPairs())
	}
	e.C.Cancel(context.Background(), admin, id, "next")

	// Both engines timed: the test needs no time control of its own.
	s = matchSpec(100, 1, 4)
	s.TimeControl, s.EngineA.TimeControl, s.EngineB.TimeControl = nil, clock(2*time.Second, 20*time.Millisecond), clock(time.Second, 10*time.Millisecond)
	e.create(s)
	gp = gamepairtest.BatchOf(e.MustLease(w))
	if gp.GetTimeControl() != nil || gp.GetEngineA().GetTimeControl().GetClock().GetBase().AsDuration() != 4*time.Second ||
		gp.GetEngineB().GetTimeControl().GetClock().GetBase().AsDuration() != 2*time.Second {
		t.Errorf("time odds without a test clock: %v", gp)
	}
}
