package perft

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var (
	alice  = identity.Identity{Name: "alice", Role: identity.Worker}
	bob    = identity.Identity{Name: "bob", Role: identity.Worker}
	carol  = identity.Identity{Name: "carol", Role: identity.Worker}
	client = identity.Identity{Name: "dave", Role: identity.Client}
)

// cluster is a core with the perft workload on a real store in a temp dir,
// driven by a fake clock.
type cluster struct {
	t     *testing.T
	dir   string
	st    *store.Store
	clk   *clock
	core  *core.Core
	perft *Workload
}

func newCluster(t *testing.T, dir string, clk *clock) *cluster {
	return newClusterWith(t, dir, clk, Config{})
}

// newClusterWith is newCluster with cfg's settings (its store, clock and
// MinUnits are the cluster's).
func newClusterWith(t *testing.T, dir string, clk *clock, cfg Config) *cluster {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store, cfg.Now, cfg.MinUnits = st, clk.Now, 8
	wl := New(cfg)
	c := core.New(core.Config{Store: st, Now: clk.Now, LeaseDuration: 10 * time.Second, LeaseKey: []byte("test key")}, wl)
	wl.SetHost(c.Host())
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &cluster{t: t, dir: dir, st: st, clk: clk, core: c, perft: wl}
}

func (cl *cluster) worker(id identity.Identity, name string) *core.Worker {
	cl.t.Helper()
	w, err := cl.core.Register(context.Background(), id, name, core.Caps{Cores: 1, Tags: []string{capability.Perft, capability.Perft960}})
	if err != nil {
		cl.t.Fatal(err)
	}
	return w
}

func (cl *cluster) submit(spec *arbiterv1.PerftSpec) string {
	cl.t.Helper()
	ref, err := cl.core.Create(context.Background(), client, Kind, spec)
	if err != nil {
		cl.t.Fatal(err)
	}
	return ref.ID
}

func (cl *cluster) lease(id identity.Identity, w *core.Worker) (core.Grant, bool) {
	cl.t.Helper()
	g, ok, err := cl.core.Lease(context.Background(), id, w.ID, 0)
	if err != nil {
		cl.t.Fatal(err)
	}
	return g, ok
}

// compute answers a unit with true counts, or with counts altered by bad.
func compute(t *testing.T, g core.Grant, bad func(i int, n uint64) uint64) *arbiterv1.PerftBatchResult {
	t.Helper()
	b := g.Payload.(*arbiterv1.WorkUnit).GetPerft()
	res := &arbiterv1.PerftBatchResult{}
	for i, fen := range b.GetFens() {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		n := engine.Perft(&p, int(b.GetDepth()))
		if bad != nil {
			n = bad(i, n)
		}
		res.Counts = append(res.Counts, n)
	}
	return res
}

func (cl *cluster) job(id string) *arbiterv1.Job {
	cl.t.Helper()
	snap, err := cl.core.Job(id, true)
	if err != nil {
		cl.t.Fatal(err)
	}
	return snap.(*arbiterv1.Job)
}

// run has the workers take and answer units until none is left for them.
func (cl *cluster) run(ws map[*core.Worker]identity.Identity, bad func(w *core.Worker, i int, n uint64) uint64) {
	cl.t.Helper()
	for progress := true; progress; {
		progress = false
		for w, id := range ws {
			g, ok := cl.lease(id, w)
			if !ok {
				continue
			}
			progress = true
			var alter func(int, uint64) uint64
			if bad != nil {
				alter = func(i int, n uint64) uint64 { return bad(w, i, n) }
			}
			if _, err := cl.core.Submit(context.Background(), id, w.ID, g.Lease.ID, g.Lease.UnitID, compute(cl.t, g, alter), time.Millisecond); err != nil {
				cl.t.Fatal(err)
			}
		}
	}
}

func TestExactTotalsAndDivide(t *testing.T) {
	cl := newCluster(t, t.TempDir(), &clock{now: time.Unix(1e9, 0)})
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 4})
	a, b := cl.worker(alice, "a"), cl.worker(bob, "b")
	cl.run(map[*core.Worker]identity.Identity{a: alice, b: bob}, nil)
	j := cl.job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetNodes() != "197281" {
		t.Fatalf("perft 4: %v %s", j.GetState(), j.GetNodes())
	}
	start := engine.StartPosition()
	for _, d := range j.GetDivide() {
		m, err := start.ParseUCIMove(d.GetMove())
		if err != nil {
			t.Fatal(err)
		}
		c := start
		c.MakeMove(m)
		if want := fmt.Sprint(engine.Perft(&c, 3)); d.GetNodes() != want {
			t.Errorf("divide %s: %s, want %s", d.GetMove(), d.GetNodes(), want)
		}
	}
}

func TestVerificationNeedsAnotherIdentity(t *testing.T) {
	cl := newCluster(t, t.TempDir(), &clock{now: time.Unix(1e9, 0)})
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 3, VerifyFraction: 1})
	// Two workers of one identity compute everything they can: each unit
	// once, never verified.
	m1, m2 := cl.worker(alice, "m1"), cl.worker(alice, "m2")
	cl.run(map[*core.Worker]identity.Identity{m1: alice, m2: alice}, nil)
	j := cl.job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || j.GetProgress().GetUnitsVerified() != 0 || j.GetProgress().GetUnitsDone() != 0 {
		t.Fatalf("one identity verified its own work: %v", j.GetProgress())
	}
	if !strings.Contains(j.GetProgress().GetBlocked(), "second identity") {
		t.Fatalf("blocked reason %q", j.GetProgress().GetBlocked())
	}
	// A second identity verifies every unit.
	b := cl.worker(bob, "b")
	cl.run(map[*core.Worker]identity.Identity{b: bob}, nil)
	j = cl.job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetNodes() != "8902" ||
		j.GetProgress().GetUnitsVerified() != j.GetProgress().GetUnitsTotal() {
		t.Fatalf("after a second identity: %v %s %v", j.GetState(), j.GetNodes(), j.GetProgress())
	}
}

func TestMismatchSettledByThirdIdentity(t *testing.T) {
	cl := newCluster(t, t.TempDir(), &clock{now: time.Unix(1e9, 0)})
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 4, VerifyFraction: 1})
	a, b, c := cl.worker(alice, "a"), cl.worker(bob, "b"), cl.worker(carol, "c")
	liar := func(w *core.Worker, i int, n uint64) uint64 {
		if w == a && i == 0 {
			return n + 1
		}
		return n
	}
	cl.run(map[*core.Worker]identity.Identity{a: alice, b: bob}, liar)
	if j := cl.job(id); j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || j.GetProgress().GetMismatches() == 0 {
		t.Fatalf("mismatches not detected: %v", j.GetProgress())
	}
	cl.run(map[*core.Worker]identity.Identity{c: carol}, nil)
	j := cl.job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetNodes() != "197281" ||
		j.GetProgress().GetMismatchesSettled() != j.GetProgress().GetMismatches() {
		t.Fatalf("after settlement: %v %s %v", j.GetState(), j.GetNodes(), j.GetProgress())
	}
}

func TestExpiryReissueAndLateResult(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	cl := newCluster(t, t.TempDir(), clk)
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 3})
	a, b := cl.worker(alice, "a"), cl.worker(bob, "b")
	g, _ := cl.lease(alice, a)
	clk.Advance(11 * time.Second)
	cl.core.Tick()
	// The unit is open again and goes to bob first (re-opened units first).
	g2, _ := cl.lease(bob, b)
	if g2.Lease.UnitID != g.Lease.UnitID {
		t.Fatalf("re-issued %s, want %s", g2.Lease.UnitID, g.Lease.UnitID)
	}
	// Alice's late result is still hers by signature: accepted as the
	// unit's run; bob's copy then agrees and is a duplicate.
	v, err := cl.core.Submit(context.Background(), alice, a.ID, g.Lease.ID, g.Lease.UnitID, compute(t, g, nil), 0)
	if err != nil || v != core.Accepted {
		t.Fatalf("late result: %v %v", v, err)
	}
	v, err = cl.core.Submit(context.Background(), bob, b.ID, g2.Lease.ID, g2.Lease.UnitID, compute(t, g2, nil), 0)
	if err != nil || v != core.Duplicate {
		t.Fatalf("second copy: %v %v", v, err)
	}
	cl.run(map[*core.Worker]identity.Identity{a: alice, b: bob}, nil)
	if j := cl.job(id); j.GetNodes() != "8902" {
		t.Fatalf("total %s", j.GetNodes())
	}
}

func TestRefusals(t *testing.T) {
	cl := newCluster(t, t.TempDir(), &clock{now: time.Unix(1e9, 0)})
	cl.submit(&arbiterv1.PerftSpec{Depth: 4})
	a := cl.worker(alice, "a")
	g, _ := cl.lease(alice, a)
	n := len(g.Payload.(*arbiterv1.WorkUnit).GetPerft().GetFens())
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		res    any
		reason string
	}{
		{"wrong kind", &arbiterv1.VerifyUnitResult{}, apierr.ReasonMalformedResult},
		{"too few counts", &arbiterv1.PerftBatchResult{Counts: make([]uint64, n-1)}, apierr.ReasonMalformedResult},
		{"impossible counts", &arbiterv1.PerftBatchResult{Counts: make([]uint64, n)}, apierr.ReasonImplausibleResult},
	} {
		if _, err := cl.core.Submit(ctx, alice, a.ID, g.Lease.ID, g.Lease.UnitID, c.res, 0); apierr.ReasonOf(err) != c.reason {
			t.Errorf("%s: %v, want %s", c.name, err, c.reason)
		}
	}
	good := compute(t, g, nil)
	if v, err := cl.core.Submit(ctx, alice, a.ID, g.Lease.ID, g.Lease.UnitID, good, 0); err != nil || v != core.Accepted {
		t.Fatalf("good result: %v %v", v, err)
	}
	// The same worker replays a different result under its signed lease.
	bad := proto.Clone(good).(*arbiterv1.PerftBatchResult)
	bad.Counts[0]++
	if _, err := cl.core.Submit(ctx, alice, a.ID, g.Lease.ID, g.Lease.UnitID, bad, 0); apierr.ReasonOf(err) != apierr.ReasonConflictingResult {
		t.Fatalf("conflicting replay: %v", err)
	}
	if v, _ := cl.core.Submit(ctx, alice, a.ID, g.Lease.ID, g.Lease.UnitID, good, 0); v != core.Duplicate {
		t.Fatalf("replay: %v", v)
	}
	// Bad specs are refused with the field named, and nothing is stored.
	for _, spec := range []*arbiterv1.PerftSpec{
		{Fen: "not a fen", Depth: 3},
		{Depth: 99},
		{Depth: 3, VerifyFraction: 2},
		{Depth: 3, SplitPly: 5},
		{Fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Depth: 6, SplitPly: 6},
		{Fen: strings.Repeat("x", 1<<20), Depth: 3},
	} {
		_, err := cl.core.Create(ctx, client, Kind, spec)
		if err == nil {
			t.Errorf("spec %v accepted", spec.GetDepth())
			continue
		}
		if len(err.Error()) > 400 {
			t.Errorf("error of %d bytes for spec depth %d", len(err.Error()), spec.GetDepth())
		}
	}
	jobs, _ := cl.st.Jobs(ctx)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs stored after refusals", len(jobs))
	}
}

func TestRestartKeepsEveryFigure(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Unix(1e9, 0)}
	cl := newCluster(t, dir, clk)
	done := cl.submit(&arbiterv1.PerftSpec{Depth: 4, VerifyFraction: 1})
	a, b, c := cl.worker(alice, "a"), cl.worker(bob, "b"), cl.worker(carol, "c")
	liar := func(w *core.Worker, i int, n uint64) uint64 {
		if w == a && i == 0 {
			return n + 1
		}
		return n
	}
	cl.run(map[*core.Worker]identity.Identity{a: alice, b: bob, c: carol}, liar)
	cancelled := cl.submit(&arbiterv1.PerftSpec{Depth: 4})
	g, _ := cl.lease(bob, b)
	cl.core.Submit(context.Background(), bob, b.ID, g.Lease.ID, g.Lease.UnitID, compute(t, g, nil), 0)
	if err := cl.core.Cancel(context.Background(), client, cancelled, "test"); err != nil {
		t.Fatal(err)
	}
	running := cl.submit(&arbiterv1.PerftSpec{Depth: 4, VerifyFraction: 1})
	for i := 0; i < 3; i++ {
		g, _ := cl.lease(carol, c)
		cl.core.Submit(context.Background(), carol, c.ID, g.Lease.ID, g.Lease.UnitID, compute(t, g, nil), 0)
	}
	before := map[string]*arbiterv1.Job{}
	for _, id := range []string{done, cancelled, running} {
		before[id] = cl.job(id)
	}
	if before[done].GetProgress().GetMismatches() == 0 || before[done].GetProgress().GetUnitsVerified() == 0 {
		t.Fatalf("the finished job should have verified units and mismatches: %v", before[done].GetProgress())
	}

	cl.st.Close()
	cl2 := newCluster(t, dir, clk)
	for id, want := range before {
		got := cl2.job(id)
		if !proto.Equal(got, want) {
			t.Errorf("job %s after restart:\n got %v\nwant %v", id, got, want)
		}
	}
	// The finished job's units left memory.
	cl2.perft.mu.Lock()
	if n := len(cl2.perft.jobs[done].units); n != 0 {
		t.Errorf("finished job keeps %d units in memory", n)
	}
	cl2.perft.mu.Unlock()
}

// TestFailedWriteReloads: memory applies a decision before its write
// reaches the disk; when the write fails, the job is rebuilt from the store
// and the result is refused as retryable, so nothing the store lacks is
// counted.
func TestFailedWriteReloads(t *testing.T) {
	dir := t.TempDir()
	cl := newCluster(t, dir, &clock{now: time.Unix(1e9, 0)})
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 3})
	a := cl.worker(alice, "a")
	g, _ := cl.lease(alice, a)
	// Someone else's hand in the file: a run of this unit by this worker
	// already exists, so the run's insert fails on the primary key.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO runs(unit_id,worker_id,owner,job_id,counts,at,elapsed_ms) VALUES(?,?,?,?,?,?,?)",
		g.Lease.UnitID, a.ID, "alice", id, "1", 1, 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = cl.core.Submit(context.Background(), alice, a.ID, g.Lease.ID, g.Lease.UnitID, compute(t, g, nil), 0)
	if apierr.ReasonOf(err) != apierr.ReasonStore {
		t.Fatalf("submit with a failing write: %v, want STORE", err)
	}
	// Memory is what the store holds: the foreign run (one run, count 1:
	// the unit settles on it as far as the judge is concerned).
	cl.perft.mu.Lock()
	u := cl.perft.units[g.Lease.UnitID]
	n := len(u.runs)
	cl.perft.mu.Unlock()
	if n != 1 || u.runs[0].Counts[0] != engine.CountOf(1) {
		t.Fatalf("after reload the unit has %d runs %v, want the stored one", n, u.runs)
	}
}

// TestOutvotedIdentityRecomputed: an identity that doubles every count is
// outvoted on a verified unit; from then on it is no witness for the job:
// the units only it ran are computed again by others (and survive a
// restart in that state), it is leased nothing more of the job, and the
// total is exact.
func TestOutvotedIdentityRecomputed(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Unix(1e9, 0)}
	cl := newCluster(t, dir, clk)
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 4, VerifyFraction: 0.25})
	a, b, c := cl.worker(alice, "a"), cl.worker(bob, "b"), cl.worker(carol, "c")
	double := func(_ *core.Worker, _ int, n uint64) uint64 { return 2 * n }
	cl.run(map[*core.Worker]identity.Identity{a: alice}, double)
	cl.run(map[*core.Worker]identity.Identity{b: bob}, nil)
	before := cl.job(id).GetProgress()
	if before.GetMismatches() == 0 {
		t.Fatalf("bob's verifications found no mismatch: %v", before)
	}
	// Carol's run settles one dispute against alice.
	g, ok := cl.lease(carol, c)
	if !ok {
		t.Fatal("nothing for carol to settle")
	}
	if _, err := cl.core.Submit(context.Background(), carol, c.ID, g.Lease.ID, g.Lease.UnitID, compute(t, g, nil), 0); err != nil {
		t.Fatal(err)
	}
	after := cl.job(id)
	if after.GetProgress().GetUnitsDone() >= before.GetUnitsDone() {
		t.Fatalf("units done %d after alice was outvoted, %d before: her units were not opened again",
			after.GetProgress().GetUnitsDone(), before.GetUnitsDone())
	}
	if _, ok := cl.lease(alice, a); ok {
		t.Fatal("an outvoted identity was leased a unit of the job")
	}
	// The same state after a restart (derived from the stored runs).
	cl.st.Close()
	cl = newCluster(t, dir, clk)
	if got := cl.job(id); !proto.Equal(got, after) {
		t.Fatalf("after restart:\n got %v\nwant %v", got.GetProgress(), after.GetProgress())
	}
	a, b, c = cl.worker(alice, "a"), cl.worker(bob, "b"), cl.worker(carol, "c")
	cl.run(map[*core.Worker]identity.Identity{a: alice, b: bob, c: carol}, func(w *core.Worker, i int, n uint64) uint64 {
		if w == a {
			return 2 * n
		}
		return n
	})
	j := cl.job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetNodes() != "197281" {
		t.Fatalf("perft 4 with a liar: %v %s %v", j.GetState(), j.GetNodes(), j.GetProgress())
	}
}

// TestVerifyDefaultNeedsTwoIdentities: a job that sets no verify fraction
// takes the coordinator's default where two identities can witness, and is
// computed unverified on a farm of one identity (however many workers)
// rather than wait for a witness; a fraction the job sets is kept.
func TestVerifyDefaultNeedsTwoIdentities(t *testing.T) {
	cl := newClusterWith(t, t.TempDir(), &clock{now: time.Unix(1e9, 0)}, Config{VerifyDefault: 0.1})
	fraction := func(spec *arbiterv1.PerftSpec) float64 {
		t.Helper()
		return cl.job(cl.submit(spec)).GetPerft().GetVerifyFraction()
	}
	cl.worker(alice, "a1")
	cl.worker(alice, "a2")
	if f := fraction(&arbiterv1.PerftSpec{Depth: 3}); f != 0 {
		t.Errorf("one identity, two workers: verify fraction %v, want 0", f)
	}
	if f := fraction(&arbiterv1.PerftSpec{Depth: 3, VerifyFraction: 0.5}); f != 0.5 {
		t.Errorf("one identity, a fraction set: %v, want 0.5", f)
	}
	cl.worker(bob, "b")
	if f := fraction(&arbiterv1.PerftSpec{Depth: 3}); f != 0.1 {
		t.Errorf("two identities: verify fraction %v, want the default 0.1", f)
	}
}
