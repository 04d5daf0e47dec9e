package core

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// clock is a fake clock the tests step by hand.
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

// fakeWork is a workload of jobs with numbered units "JOB.i"; each unit
// wants one result.
type fakeWork struct {
	mu      sync.Mutex
	jobs    map[string]*fakeJob
	order   []string
	ended   []End
	results []ResultCall
}

type fakeJob struct {
	id       string
	prio     int32
	share    float64
	units    int
	next     int
	open     map[int]string // unit → worker holding it
	done     map[int]bool
	retry    []int
	only     string // when set, only this worker may take units
	finished bool
}

func newFakeWork() *fakeWork { return &fakeWork{jobs: map[string]*fakeJob{}} }

func (f *fakeWork) add(id string, units int, prio int32, share float64) *fakeJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := &fakeJob{id: id, prio: prio, share: share, units: units, open: map[int]string{}, done: map[int]bool{}}
	f.jobs[id] = j
	f.order = append(f.order, id)
	return j
}

func (f *fakeWork) Kind() string { return "fake" }

func (f *fakeWork) Load(ctx context.Context) ([]JobRef, error) {
	var out []JobRef
	for i, id := range f.order {
		out = append(out, JobRef{ID: id, Seq: int64(i + 1), Submitter: "alice"})
	}
	return out, nil
}

func (f *fakeWork) Create(ctx context.Context, spec any, submitter string) (JobRef, error) {
	n, ok := spec.(int)
	if !ok || n <= 0 {
		return JobRef{}, apierr.Invalid("units: want a positive number")
	}
	id := fmt.Sprintf("j%d", len(f.order)+1)
	f.add(id, n, 0, 1)
	return JobRef{ID: id, Seq: int64(len(f.order)), Submitter: submitter}, nil
}

func (j *fakeJob) nextUnit() (int, bool) {
	for len(j.retry) > 0 {
		u := j.retry[0]
		j.retry = j.retry[1:]
		if !j.done[u] {
			if _, leased := j.open[u]; !leased {
				return u, true
			}
		}
	}
	if j.next < j.units {
		j.next++
		return j.next - 1, true
	}
	return 0, false
}

func (f *fakeWork) Candidates(w *Worker, out []Candidate) []Candidate {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range f.order {
		j := f.jobs[id]
		if j.finished {
			continue
		}
		ready := (j.next < j.units || len(j.retry) > 0) && (j.only == "" || j.only == w.ID)
		out = append(out, Candidate{JobID: id, Priority: j.prio, Share: j.share, InFlight: len(j.open), Ready: ready})
	}
	return out
}

func (f *fakeWork) Take(jobID string, w *Worker, now time.Time) (string, any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[jobID]
	u, ok := j.nextUnit()
	if !ok {
		return "", nil, false
	}
	j.open[u] = w.ID
	id := jobID + "." + strconv.Itoa(u)
	return id, "payload " + id, true
}

func (f *fakeWork) unit(id string) (*fakeJob, int, bool) {
	job, idx, ok := strings.Cut(id, ".")
	if !ok {
		return nil, 0, false
	}
	j := f.jobs[job]
	n, err := strconv.Atoi(idx)
	if j == nil || err != nil || n < 0 || n >= j.units {
		return nil, 0, false
	}
	return j, n, true
}

func (f *fakeWork) Ended(l Lease, why End) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = append(f.ended, why)
	if j, u, ok := f.unit(l.UnitID); ok && j.open[u] == l.WorkerID {
		delete(j.open, u)
		if !j.done[u] && !j.finished {
			j.retry = append(j.retry, u)
		}
	}
}

func (f *fakeWork) Locate(unitID string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j, _, ok := f.unit(unitID); ok {
		return j.id, true
	}
	return "", false
}

func (f *fakeWork) Adopt(l Lease, w *Worker) Adoption {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, u, _ := f.unit(l.UnitID)
	if j.finished || j.done[u] {
		return AdoptCancelled
	}
	if _, leased := j.open[u]; leased {
		return AdoptLost
	}
	j.open[u] = w.ID
	if u >= j.next {
		j.next = u + 1
	}
	return AdoptActive
}

func (f *fakeWork) Result(ctx context.Context, r ResultCall) (Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, r)
	if s, _ := r.Result.(string); s == "bad" {
		return Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "bad result")
	}
	j, u, _ := f.unit(r.Lease.UnitID)
	if j.done[u] {
		return Outcome{Verdict: Duplicate}, nil
	}
	j.done[u] = true
	delete(j.open, u)
	over := len(j.done) == j.units
	j.finished = over
	return Outcome{Verdict: Accepted, JobOver: over}, nil
}

func (f *fakeWork) Cancel(ctx context.Context, jobID, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs[jobID].finished = true
	return nil
}

func (f *fakeWork) Snapshot(jobID string, full bool) (any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[jobID]
	if j == nil {
		return nil, false
	}
	return fmt.Sprintf("%s %d/%d", j.id, len(j.done), j.units), true
}

func (f *fakeWork) Stats() Stats { return Stats{} }

var (
	alice  = identity.Identity{Name: "alice", Role: identity.Worker}
	bob    = identity.Identity{Name: "bob", Role: identity.Worker}
	client = identity.Identity{Name: "carol", Role: identity.Client}
	t0     = time.Unix(1_700_000_000, 0)
)

func newTestCore(t *testing.T, wl *fakeWork, key string) (*Core, *clock) {
	t.Helper()
	clk := &clock{now: t0}
	c := New(Config{Now: clk.Now, LeaseDuration: 10 * time.Second, LeaseKey: []byte(key)}, wl)
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, clk
}

// register registers a worker of 64 cores: the tests take many leases
// with one worker.
func register(t *testing.T, c *Core, id identity.Identity, name string) *Worker {
	t.Helper()
	w, err := c.Register(context.Background(), id, name, Caps{Cores: 64})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func takeLease(t *testing.T, c *Core, id identity.Identity, w *Worker) Grant {
	t.Helper()
	g, ok, err := c.Lease(context.Background(), id, w.ID, 0)
	if err != nil || !ok {
		t.Fatalf("lease for %s: ok=%v err=%v", w.ID, ok, err)
	}
	return g
}

func TestRegisterRolesAndStableIDs(t *testing.T) {
	c, _ := newTestCore(t, newFakeWork(), "k")
	ctx := context.Background()
	if _, err := c.Register(ctx, client, "x", Caps{Cores: 1}); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("a client credential registered a worker: %v", err)
	}
	a1 := register(t, c, alice, "box")
	a2 := register(t, c, alice, "box")
	b1 := register(t, c, bob, "box")
	if a1.ID != a2.ID {
		t.Fatalf("same identity and name got ids %s and %s", a1.ID, a2.ID)
	}
	if a1.ID == b1.ID {
		t.Fatal("two identities share a worker id")
	}
	if _, err := c.Register(ctx, alice, "y", Caps{Cores: 0}); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("zero cores: %v", err)
	}
	if _, err := c.Register(ctx, alice, strings.Repeat("n", 300), Caps{Cores: 1}); err == nil {
		t.Fatal("a 300-byte name was accepted")
	}
	// Another identity may not use alice's worker id.
	if _, _, err := c.Lease(ctx, bob, a1.ID, 0); apierr.ReasonOf(err) != apierr.ReasonNotLeaseHolder {
		t.Fatalf("bob leased as alice's worker: %v", err)
	}
	clk := &clock{now: t0}
	c2 := New(Config{LeaseKey: []byte("k"), MaxWorkersPerIdentity: 2, Now: clk.Now, LeaseDuration: 10 * time.Second})
	register(t, c2, alice, "a")
	register(t, c2, alice, "b")
	register(t, c2, alice, "a")
	if _, err := c2.Register(ctx, alice, "c", Caps{Cores: 1}); apierr.ReasonOf(err) != apierr.ReasonTooLarge {
		t.Fatalf("third worker of a capped identity, both active: %v", err)
	}
	// Once one is idle past a lease duration, a new name takes its place
	// (a replaced pod); the active one stays.
	clk.Advance(11 * time.Second)
	b := register(t, c2, alice, "b") // seen again
	cw := register(t, c2, alice, "c")
	if _, ok := c2.Worker(b.ID); !ok {
		t.Fatal("the active worker was forgotten")
	}
	if _, ok := c2.Worker(cw.ID); !ok {
		t.Fatal("the new worker is not registered")
	}
}

func TestResultOnlyFromLeaseHolder(t *testing.T) {
	wl := newFakeWork()
	wl.add("j1", 3, 0, 1)
	c, _ := newTestCore(t, wl, "k")
	ctx := context.Background()
	wa := register(t, c, alice, "a")
	wb := register(t, c, bob, "b")
	ga := takeLease(t, c, alice, wa)
	gb := takeLease(t, c, bob, wb)

	// Bob submits for alice's unit: with alice's lease id, with his own
	// lease id, and with a made-up one. All refused; nothing reaches the
	// workload.
	for _, lid := range []string{ga.Lease.ID, gb.Lease.ID, "l0-1-00000000000000000000000000000000", ""} {
		_, err := c.Submit(ctx, bob, wb.ID, lid, ga.Lease.UnitID, "ok", 0)
		if apierr.ReasonOf(err) != apierr.ReasonNotLeaseHolder {
			t.Fatalf("bob's result for alice's unit under lease %q: %v", lid, err)
		}
	}
	// Bob names alice's worker id: refused before any lease check.
	if _, err := c.Submit(ctx, bob, wa.ID, ga.Lease.ID, ga.Lease.UnitID, "ok", 0); apierr.ReasonOf(err) != apierr.ReasonNotLeaseHolder {
		t.Fatalf("bob submitting as alice's worker: %v", err)
	}
	// A unit that was never leased, in or out of range.
	for _, u := range []string{"j1.2", "j1.17179869184", "nope"} {
		if _, err := c.Submit(ctx, bob, wb.ID, gb.Lease.ID, u, "ok", 0); apierr.ReasonOf(err) != apierr.ReasonNotLeaseHolder {
			t.Fatalf("result for never-leased unit %s: %v", u, err)
		}
	}
	if len(wl.results) != 0 {
		t.Fatalf("%d forged results reached the workload", len(wl.results))
	}
	// A client credential cannot submit at all.
	if _, err := c.Submit(ctx, client, wa.ID, ga.Lease.ID, ga.Lease.UnitID, "ok", 0); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("client submitted a result: %v", err)
	}
	// The holder's result counts.
	v, err := c.Submit(ctx, alice, wa.ID, ga.Lease.ID, ga.Lease.UnitID, "ok", 0)
	if err != nil || v != Accepted {
		t.Fatalf("holder's result: %v %v", v, err)
	}
	if len(wl.results) != 1 || !wl.results[0].Live {
		t.Fatalf("results %+v", wl.results)
	}
	// A malformed result is refused with the workload's reason and the
	// lease stays.
	if _, err := c.Submit(ctx, bob, wb.ID, gb.Lease.ID, gb.Lease.UnitID, "bad", 0); apierr.ReasonOf(err) != apierr.ReasonMalformedResult {
		t.Fatalf("bad result: %v", err)
	}
	if _, ok := c.leases.Get(gb.Lease.ID); !ok {
		t.Fatal("a refused result ended the lease")
	}
}

func TestHeartbeatExpiryAndAdoption(t *testing.T) {
	wl := newFakeWork()
	wl.add("j1", 4, 0, 1)
	c, clk := newTestCore(t, wl, "shared key")
	ctx := context.Background()
	wa := register(t, c, alice, "a")
	wb := register(t, c, bob, "b")
	g := takeLease(t, c, alice, wa)

	clk.Advance(8 * time.Second)
	st, err := c.Heartbeat(ctx, alice, wa.ID, []Held{{g.Lease.ID, g.Lease.UnitID}, {"made-up", "j1.3"}, {g.Lease.ID, "j1.2"}})
	if err != nil {
		t.Fatal(err)
	}
	if st[0].State != HeldActive || !st[0].Deadline.Equal(t0.Add(18*time.Second)) {
		t.Fatalf("held lease: %+v", st[0])
	}
	if st[1].State != HeldLost || st[2].State != HeldLost {
		t.Fatalf("made-up leases: %+v", st[1:])
	}
	// Bob heartbeating alice's lease does not extend it.
	if st, _ := c.Heartbeat(ctx, bob, wb.ID, []Held{{g.Lease.ID, g.Lease.UnitID}}); st[0].State != HeldLost {
		t.Fatalf("bob extended alice's lease: %+v", st[0])
	}
	clk.Advance(10 * time.Second)
	c.Tick()
	if len(wl.ended) != 1 || !wl.ended[0].Expired {
		t.Fatalf("ended %+v", wl.ended)
	}
	if _, ok := c.leases.Get(g.Lease.ID); ok {
		t.Fatal("expired lease still live")
	}
	// The expired lease is still alice's by signature: her heartbeat gets it
	// back (the unit is open), and her late result reaches the workload.
	st, _ = c.Heartbeat(ctx, alice, wa.ID, []Held{{g.Lease.ID, g.Lease.UnitID}})
	if st[0].State != HeldActive {
		t.Fatalf("adoption: %+v", st[0])
	}

	// A restarted coordinator with the same key recognises the lease.
	c2 := New(Config{Now: clk.Now, LeaseDuration: 10 * time.Second, LeaseKey: []byte("shared key")}, wl)
	c2.workers[wa.ID] = wa
	c2.byOwner["alice"] = map[string]*Worker{"a": wa}
	c2.reg.add(JobRef{ID: "j1", Seq: 1}, wl)
	wl.mu.Lock()
	delete(wl.jobs["j1"].open, 0) // memory lost in the restart
	wl.mu.Unlock()
	v, err := c2.Submit(ctx, alice, wa.ID, g.Lease.ID, g.Lease.UnitID, "ok", 0)
	if err != nil || v != Accepted {
		t.Fatalf("result after restart: %v %v", v, err)
	}
	if last := wl.results[len(wl.results)-1]; last.Live {
		t.Fatal("a result under a lease from before the restart was marked live")
	}
	// With another key, the same lease is nobody's.
	c3 := New(Config{Now: clk.Now, LeaseKey: []byte("other key")}, wl)
	c3.workers[wa.ID] = wa
	if _, err := c3.Submit(ctx, alice, wa.ID, g.Lease.ID, g.Lease.UnitID, "ok", 0); apierr.ReasonOf(err) != apierr.ReasonNotLeaseHolder {
		t.Fatalf("lease signed by another key accepted: %v", err)
	}
}

func TestHeartbeatLimits(t *testing.T) {
	c, _ := newTestCore(t, newFakeWork(), "k")
	wa := register(t, c, alice, "a")
	held := make([]Held, MaxHeldLeases+1)
	if _, err := c.Heartbeat(context.Background(), alice, wa.ID, held); apierr.ReasonOf(err) != apierr.ReasonTooLarge {
		t.Fatalf("oversized heartbeat: %v", err)
	}
	// A made-up unit at a huge index costs nothing: one signature check.
	start := time.Now()
	st, err := c.Heartbeat(context.Background(), alice, wa.ID, []Held{{"l1-1-" + strings.Repeat("0", 32), "j1.17179869184"}})
	if err != nil || st[0].State != HeldLost {
		t.Fatalf("made-up heartbeat: %+v %v", st, err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("made-up heartbeat took %v", d)
	}
}

func TestSchedulingByPriorityAndShare(t *testing.T) {
	wl := newFakeWork()
	long := wl.add("long", 1000, 0, 1)
	c, _ := newTestCore(t, wl, "k")
	ctx := context.Background()
	var ws []*Worker
	for i := 0; i < 10; i++ {
		ws = append(ws, register(t, c, alice, fmt.Sprint("w", i)))
	}
	// Six leases of the long job out, then a short job of equal share
	// arrives: the next leases go to it until the shares are even.
	for i := 0; i < 6; i++ {
		if g := takeLease(t, c, alice, ws[i]); !strings.HasPrefix(g.Lease.UnitID, "long.") {
			t.Fatalf("lease %d: %s", i, g.Lease.UnitID)
		}
	}
	wl.add("short", 10, 0, 1)
	c.reg.add(JobRef{ID: "short", Seq: 2}, wl)
	got := map[string]int{}
	for i := 6; i < 10; i++ {
		g := takeLease(t, c, alice, ws[i])
		got[strings.Split(g.Lease.UnitID, ".")[0]]++
	}
	if got["short"] < 3 {
		t.Fatalf("the short job got %v of 4 new leases with 6 of the long job's out", got)
	}
	// A higher priority wins whatever the shares.
	wl.add("urgent", 5, 10, 0.01)
	c.reg.add(JobRef{ID: "urgent", Seq: 3}, wl)
	w := register(t, c, alice, "late")
	if g := takeLease(t, c, alice, w); !strings.HasPrefix(g.Lease.UnitID, "urgent.") {
		t.Fatalf("priority job not first: %s", g.Lease.UnitID)
	}
	_ = long
	// A job only one worker may run is not offered to another.
	wl.add("pinned", 5, 100, 1).only = ws[0].ID
	c.reg.add(JobRef{ID: "pinned", Seq: 4}, wl)
	if g := takeLease(t, c, alice, ws[1]); strings.HasPrefix(g.Lease.UnitID, "pinned.") {
		t.Fatal("pinned job offered to another worker")
	}
	if g := takeLease(t, c, alice, ws[0]); !strings.HasPrefix(g.Lease.UnitID, "pinned.") {
		t.Fatalf("pinned job not offered to its worker: %s", g.Lease.UnitID)
	}
	_ = ctx
}

func TestShareOverTime(t *testing.T) {
	// Two jobs with shares 3:1 and plenty of units, 8 workers leasing and
	// submitting in turn: leases in flight settle at about 6:2.
	wl := newFakeWork()
	wl.add("a", 100000, 0, 3)
	wl.add("b", 100000, 0, 1)
	c, _ := newTestCore(t, wl, "k")
	ctx := context.Background()
	var ws []*Worker
	var held []Grant
	for i := 0; i < 8; i++ {
		w := register(t, c, alice, fmt.Sprint("w", i))
		ws = append(ws, w)
		held = append(held, takeLease(t, c, alice, w))
	}
	for round := 0; round < 200; round++ {
		i := round % 8
		if _, err := c.Submit(ctx, alice, ws[i].ID, held[i].Lease.ID, held[i].Lease.UnitID, "ok", 0); err != nil {
			t.Fatal(err)
		}
		held[i] = takeLease(t, c, alice, ws[i])
	}
	inA := 0
	for _, g := range held {
		if strings.HasPrefix(g.Lease.UnitID, "a.") {
			inA++
		}
	}
	if inA != 6 {
		t.Fatalf("job a holds %d of 8 leases with a 3:1 share, want 6", inA)
	}
}

func TestLongPollWakesOnWork(t *testing.T) {
	wl := newFakeWork()
	c, _ := newTestCore(t, wl, "k")
	w := register(t, c, alice, "a")
	done := make(chan Grant, 1)
	go func() {
		g, ok, err := c.Lease(context.Background(), alice, w.ID, 5*time.Second)
		if err != nil || !ok {
			t.Errorf("long poll: ok=%v err=%v", ok, err)
		}
		done <- g
	}()
	time.Sleep(50 * time.Millisecond)
	ref, err := c.Create(context.Background(), identity.Identity{Name: "carol", Role: identity.Client}, "fake", 2)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-done:
		if !strings.HasPrefix(g.Lease.UnitID, ref.ID+".") {
			t.Fatalf("got %s", g.Lease.UnitID)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("long poll not woken by new work")
	}
	// A worker credential may not create jobs; bad specs are the workload's.
	if _, err := c.Create(context.Background(), alice, "fake", 1); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("worker created a job: %v", err)
	}
	if _, err := c.Create(context.Background(), client, "fake", -1); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("bad spec: %v", err)
	}
	if _, err := c.Create(context.Background(), client, "nope", 1); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("unknown kind: %v", err)
	}
}

func TestCancelByOwnerOnlyAndLeasesEnd(t *testing.T) {
	wl := newFakeWork()
	c, _ := newTestCore(t, wl, "k")
	ctx := context.Background()
	ref, err := c.Create(ctx, client, "fake", 3)
	if err != nil {
		t.Fatal(err)
	}
	w := register(t, c, alice, "a")
	g := takeLease(t, c, alice, w)
	other := identity.Identity{Name: "dave", Role: identity.Client}
	if err := c.Cancel(ctx, other, ref.ID, "x"); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("another client cancelled: %v", err)
	}
	if err := c.Cancel(ctx, client, ref.ID, "x"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.leases.Get(g.Lease.ID); ok {
		t.Fatal("lease of a cancelled job still live")
	}
	st, _ := c.Heartbeat(ctx, alice, w.ID, []Held{{g.Lease.ID, g.Lease.UnitID}})
	if st[0].State != HeldCancelled {
		t.Fatalf("heartbeat after cancel: %+v", st[0])
	}
	if err := c.Cancel(ctx, client, "nope", "x"); apierr.ReasonOf(err) != apierr.ReasonUnknownJob {
		t.Fatalf("cancel unknown: %v", err)
	}
}

// TestLiveWorkers: the farm a new job is cut for counts the workers with
// the tag seen within a lease duration, holding a lease, or waiting in a
// long poll however long it has lasted; not the ones gone quiet.
func TestLiveWorkers(t *testing.T) {
	wl := newFakeWork()
	c, clk := newTestCore(t, wl, "k")
	h := host{c}
	reg := func(id identity.Identity, name string, tags ...string) *Worker {
		w, err := c.Register(context.Background(), id, name, Caps{Cores: 1, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	a, b := reg(alice, "a", "x"), reg(alice, "b", "x")
	reg(alice, "c", "y")
	if n := h.LiveWorkers("x"); n != 2 {
		t.Fatalf("%d live workers with x just registered, want 2", n)
	}
	if n := h.LiveIdentities("x"); n != 1 {
		t.Fatalf("%d live identities with x (two workers of alice), want 1", n)
	}
	reg(bob, "d", "x")
	if n := h.LiveIdentities("x"); n != 2 {
		t.Fatalf("%d live identities with x (alice's and bob's), want 2", n)
	}
	clk.Advance(11 * time.Second)
	if n, m := h.LiveWorkers("x"), h.LiveIdentities("x"); n != 0 || m != 0 {
		t.Fatalf("%d live workers, %d identities with x after a quiet lease duration, want 0", n, m)
	}
	wl.add("j", 1, 0, 1)
	takeLease(t, c, alice, a)
	clk.Advance(11 * time.Second)
	if n := h.LiveWorkers("x"); n != 1 {
		t.Fatalf("%d live workers with x, one holding a lease: want 1", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Lease(ctx, alice, b.ID, 5*time.Second) // no work left: waits
	}()
	deadline := time.Now().Add(3 * time.Second)
	for h.LiveWorkers("x") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("a worker waiting in Lease is not live (%d)", h.LiveWorkers("x"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	clk.Advance(11 * time.Second) // the wait outlasts a lease duration
	if n := h.LiveWorkers("x"); n < 2 {
		t.Fatalf("%d live workers with x while b waits, want 2", n)
	}
	cancel()
	<-done
	if n := h.LiveWorkers("x"); n != 1 {
		t.Fatalf("%d live workers with x after b stopped waiting, want 1", n)
	}
}

// TestLeasesCappedByCores: a worker holds at most a lease per core it
// declared, however often it asks; a lease ended frees its place.
func TestLeasesCappedByCores(t *testing.T) {
	wl := newFakeWork()
	c, _ := newTestCore(t, wl, "k")
	ctx := context.Background()
	wl.add("many", 5000, 0, 1)
	c.reg.add(JobRef{ID: "many", Seq: 1}, wl)
	w, err := c.Register(ctx, alice, "one-core", Caps{Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	first := takeLease(t, c, alice, w)
	takeLease(t, c, alice, w)
	for i := 0; i < 100; i++ {
		if g, ok, err := c.Lease(ctx, alice, w.ID, 0); ok || err != nil {
			t.Fatalf("lease %d beyond 2 cores: %v %v", i+3, g.Lease.UnitID, err)
		}
	}
	if n := len(c.Workers()[0].Units); n != 2 {
		t.Fatalf("the worker holds %d leases, want 2", n)
	}
	if err := c.Release(ctx, alice, w.ID, first.Lease.ID, "done", false); err != nil {
		t.Fatal(err)
	}
	takeLease(t, c, alice, w)
}
