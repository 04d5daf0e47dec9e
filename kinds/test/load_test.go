package test

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A restart reproduces every test's whole snapshot: counts, SPRT state,
// and each worker's games, incidents, lost leases, refusal and exclusion.
func TestLoadReproducesSnapshots(t *testing.T) {
	e := newEnv(t, Config{Settings: gamepair.Settings{IncidentWindow: 8}})
	ctx := context.Background()
	a, b, c, d := e.Worker("a", DefaultReferenceNPS/2), e.Worker("b", DefaultReferenceNPS), e.Worker("c", 0), e.Worker("d", 0)

	// A finished match and a cancelled one.
	done := e.create(matchSpec(8, 2, 4))
	e.MustSubmit(a, e.MustLease(a), draws(2), core.Accepted)
	e.MustSubmit(b, e.MustLease(b), wins(2), core.Accepted)
	cancelled := e.create(matchSpec(8, 2, 4))
	e.MustSubmit(a, e.MustLease(a), wins(2), core.Accepted)
	e.MustLease(b)
	if err := e.C.Cancel(ctx, carol, cancelled, "enough"); err != nil {
		t.Fatal(err)
	}

	// A running SPRT with every kind of worker fact.
	running := e.create(sprtSpec(2))
	e.MustSubmit(a, e.MustLease(a), wins(2), core.Accepted)
	e.MustSubmit(a, e.MustLease(a), withIncidents(draws(2), arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS, 1), core.Accepted)
	e.MustLease(b)
	e.ExpireAll() // b loses a lease
	r := withIncidents(draws(2), arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, 1)
	r.Overruns = 3
	e.MustSubmit(b, e.MustLease(b), r, core.Accepted)
	g := e.MustLease(c)
	if err := e.C.Release(ctx, alice, c.ID, g.Lease.ID, "no such engine", true); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ { // d loses 4 leases: excluded
		e.MustLease(d)
		e.ExpireAll()
	}
	g = e.MustLease(a)
	if err := e.C.Release(ctx, alice, a.ID, g.Lease.ID, "stopping", false); err != nil {
		t.Fatal(err)
	}

	ids := []string{done, cancelled, running}
	before := map[string]*arbiterv1.Job{}
	for _, id := range ids {
		before[id] = e.Job(id)
	}
	mp := before[running].GetMatchProgress()
	if rd := workerRow(before[running], d.ID); !rd.GetExcluded() || rd.GetDisconnects() != 4 {
		t.Fatalf("d before the restart: %v", rd)
	}
	if rb := workerRow(before[running], b.ID); rb.GetDisconnects() != 1 || rb.GetCrashes() != 1 || rb.GetGames() != 4 {
		t.Fatalf("b before the restart: %v", rb)
	}
	if ra := workerRow(before[running], a.ID); ra.GetTimeScale() != 2 || ra.GetTimeLosses() != 1 || ra.GetName() != "a" {
		t.Fatalf("a before the restart: %v", ra)
	}
	if mp.GetBatchesDone() != 3 || mp.GetLlr() == 0 || before[done].GetState() != arbiterv1.JobState_JOB_STATE_DONE ||
		before[cancelled].GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED {
		t.Fatalf("before the restart: %v / %v / %v", mp, before[done].GetState(), before[cancelled].GetState())
	}
	states, stats := e.WL.SPRTStates(), e.WL.Stats()

	e.Restart()
	for _, id := range ids {
		if after := e.Job(id); !proto.Equal(before[id], after) {
			t.Errorf("test %s changed across a restart:\nbefore %v\nafter  %v", id, before[id], after)
		}
	}
	if got := e.WL.SPRTStates(); !reflect.DeepEqual(got, states) {
		t.Errorf("SPRT states: before %+v, after %+v", states, got)
	}
	if got := e.WL.Stats(); !reflect.DeepEqual(got, stats) {
		t.Errorf("stats: before %+v, after %+v", stats, got)
	}
	if p := e.WL.LoadProblems(); len(p) != 0 {
		t.Errorf("load problems: %v", p)
	}
	// The test goes on where it stood: excluded and refusing workers get
	// nothing, the lowest open batch goes out first.
	for _, w := range []*core.Worker{c, d} {
		if g, ok := e.Lease(w); ok {
			t.Errorf("%s got %s after the restart", w.Name, g.Lease.UnitID)
		}
	}
	if g := e.MustLease(a); g.Lease.UnitID != unitID(running, 3) {
		t.Errorf("first lease after the restart: %s, want the lowest open batch %s", g.Lease.UnitID, unitID(running, 3))
	}
}

// A finished test keeps its snapshot and nothing else: no openings, no
// batch maps, no retry list, no windows; before and after a restart.
func TestFinishedTestsLeaveMemory(t *testing.T) {
	e := newEnv(t, Config{})
	a := e.Worker("a", 0)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := heap()
	id := e.create(bigBook(20_000))
	grown := heap()
	e.MustSubmit(a, e.MustLease(a), draws(2), core.Accepted)
	e.MustLease(a)
	if err := e.C.Cancel(context.Background(), carol, id, "memory"); err != nil {
		t.Fatal(err)
	}
	shrunk := heap()
	t.Logf("heap: %d before, %d with 20,000 openings, %d after cancel", base, grown, shrunk)
	if grown < base || shrunk > base+(grown-base)/2 {
		t.Errorf("a cancelled test kept its book: heap %d → %d → %d", base, grown, shrunk)
	}
	check := func(when string) {
		e.WL.Mu.Lock()
		defer e.WL.Mu.Unlock()
		tt := e.WL.Jobs[id]
		if tt.Openings != nil || tt.Batches != nil || len(e.WL.Running) != 0 {
			t.Errorf("%s: a finished test keeps openings %d, its batches %v; %d running",
				when, len(tt.Openings), tt.Batches != nil, len(e.WL.Running))
		}
		if wid := tt.Workers.WithWindow(); wid != "" {
			t.Errorf("%s: worker %s keeps its window", when, wid)
		}
		if tt.spec.GetOpenings() != nil || tt.spec.GetOpeningsCount() != 20_000 {
			t.Errorf("%s: spec keeps %d openings (count %d)", when, len(tt.spec.GetOpenings()), tt.spec.GetOpeningsCount())
		}
	}
	check("after cancel")
	before := e.Job(id)
	e.Restart()
	check("after a restart")
	if after := e.Job(id); !proto.Equal(before, after) {
		t.Errorf("snapshot changed:\n%v\n%v", before, after)
	}
}

// bigBook is a match over n distinct openings.
func bigBook(n int) *arbiterv1.MatchSpec {
	s := matchSpec(1000, 2, 1)
	s.Openings = make([]*arbiterv1.Opening, n)
	for i := range s.Openings {
		s.Openings[i] = &arbiterv1.Opening{Index: uint32(i), Fen: fmt.Sprintf("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - %d %d", i%50, i/50+1)}
	}
	return s
}
