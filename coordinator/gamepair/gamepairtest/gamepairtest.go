// Package gamepairtest drives a coordinator core for the tests of the game
// workloads (gamejob, spsajob): a fake clock, workers of one worker
// identity that lease and submit batches, a client that submits jobs and
// reads their snapshots. Only tests import it.
package gamepairtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

var (
	// Alice is the workers' identity.
	Alice = identity.Identity{Name: "alice", Role: identity.Worker}
	// Carol is the client that submits jobs.
	Carol = identity.Identity{Name: "carol", Role: identity.Client}
	// T0 is when the fake clock starts.
	T0 = time.Unix(1_700_000_000, 0)
)

// LeaseDuration is the lease of the tests' cores.
const LeaseDuration = 10 * time.Second

// Clock is a fake clock the tests step by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Driver drives C as Alice's workers and Carol do; a failed call fails T.
// The test sets C again when it restarts the core.
type Driver struct {
	T   testing.TB
	C   *core.Core
	Clk *Clock
}

// NewDriver is a driver for t with its clock at T0; Start makes its core.
func NewDriver(t testing.TB) *Driver { return &Driver{T: t, Clk: NewClock(T0)} }

// Workload is a game workload as Start wires it.
type Workload interface {
	core.Workload
	SetHost(core.Host)
}

// Start (re)starts C over st with wl alone, on the fake clock, its
// metrics registered with reg, and loads what st holds.
func (d *Driver) Start(st *store.Store, wl Workload, reg prometheus.Registerer) {
	d.T.Helper()
	d.C = core.New(core.Config{Store: st, Now: d.Clk.Now, LeaseDuration: LeaseDuration, LeaseKey: []byte("test key"), Registerer: reg}, wl)
	wl.SetHost(d.C.Host())
	if err := d.C.Load(context.Background()); err != nil {
		d.T.Fatal(err)
	}
}

// Worker registers a game-pair worker of Alice with bench speed bench and
// 64 cores (the tests hold many batches with one worker).
func (d *Driver) Worker(name string, bench uint64) *core.Worker {
	d.T.Helper()
	w, err := d.C.Register(context.Background(), Alice, name, core.Caps{Cores: 64, Tags: []string{gamepair.Capability}, BenchNPS: bench})
	if err != nil {
		d.T.Fatal(err)
	}
	return w
}

// Create submits a job of kind as Carol and returns its id.
func (d *Driver) Create(kind string, spec any) string {
	d.T.Helper()
	ref, err := d.C.Create(context.Background(), Carol, kind, spec)
	if err != nil {
		d.T.Fatal(err)
	}
	return ref.ID
}

// Lease asks for a unit for w; ok is false when there is none.
func (d *Driver) Lease(w *core.Worker) (core.Grant, bool) {
	d.T.Helper()
	g, ok, err := d.C.Lease(context.Background(), Alice, w.ID, 0)
	if err != nil {
		d.T.Fatal(err)
	}
	return g, ok
}

// MustLease is a unit for w; none fails the test.
func (d *Driver) MustLease(w *core.Worker) core.Grant {
	d.T.Helper()
	g, ok := d.Lease(w)
	if !ok {
		d.T.Fatalf("no lease for %s", w.Name)
	}
	return g
}

// Submit sends res for g's unit as w, a second after the lease.
func (d *Driver) Submit(w *core.Worker, g core.Grant, res any) (core.Verdict, error) {
	return d.C.Submit(context.Background(), Alice, w.ID, g.Lease.ID, g.Lease.UnitID, res, time.Second)
}

// MustSubmit sends res and fails the test unless the verdict is want.
func (d *Driver) MustSubmit(w *core.Worker, g core.Grant, res any, want core.Verdict) {
	d.T.Helper()
	v, err := d.Submit(w, g, res)
	if err != nil || v != want {
		d.T.Fatalf("submit %s by %s: %v %v, want %v", g.Lease.UnitID, w.Name, v, err, want)
	}
}

// Job is job id's full snapshot.
func (d *Driver) Job(id string) *arbiterv1.Job {
	d.T.Helper()
	snap, err := d.C.Job(id, true)
	if err != nil {
		d.T.Fatal(err)
	}
	return snap.(*arbiterv1.Job)
}

// ExpireAll moves the clock past every lease and lets the core expire
// them.
func (d *Driver) ExpireAll() {
	d.Clk.Advance(LeaseDuration + time.Second)
	d.C.Tick()
}
