// Package gamepairtest drives a coordinator core for the tests of the game
// workloads (kinds/test, kinds/spsa): a fake clock, workers of one worker
// identity that lease and submit batches, a client that submits jobs and
// reads their snapshots. Only tests import it.
package gamepairtest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
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
	Flush(context.Context) error
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
	return d.WorkerOf(Alice, name, bench)
}

// WorkerOf is Worker for identity id.
func (d *Driver) WorkerOf(id identity.Identity, name string, bench uint64) *core.Worker {
	d.T.Helper()
	w, err := d.C.Register(context.Background(), id, name, core.Caps{Cores: 64, Tags: []string{capability.GamePair}, BenchNPS: bench})
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
func (d *Driver) Lease(w *core.Worker) (core.Grant, bool) { return d.LeaseOf(Alice, w) }

// LeaseOf is Lease for a worker of identity id.
func (d *Driver) LeaseOf(id identity.Identity, w *core.Worker) (core.Grant, bool) {
	d.T.Helper()
	g, ok, err := d.C.Lease(context.Background(), id, w.ID, 0)
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
	return d.SubmitOf(Alice, w, g, res)
}

// SubmitOf is Submit for a worker of identity id.
func (d *Driver) SubmitOf(id identity.Identity, w *core.Worker, g core.Grant, res any) (core.Verdict, error) {
	return d.C.Submit(context.Background(), id, w.ID, g.Lease.ID, g.Lease.UnitID, res, time.Second)
}

// MustSubmit sends res and fails the test unless the verdict is want.
func (d *Driver) MustSubmit(w *core.Worker, g core.Grant, res any, want core.Verdict) {
	d.T.Helper()
	d.MustSubmitOf(Alice, w, g, res, want)
}

// MustSubmitOf is MustSubmit for a worker of identity id.
func (d *Driver) MustSubmitOf(id identity.Identity, w *core.Worker, g core.Grant, res any, want core.Verdict) {
	d.T.Helper()
	v, err := d.SubmitOf(id, w, g, res)
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

// Env is a game workload W, made from its config C, in a core on the
// driver's fake clock, over a real SQLite store in a temporary directory.
type Env[C any, W Workload] struct {
	*Driver
	Dir string
	Cfg C
	St  *store.Store
	WL  W
	Reg *prometheus.Registry // the metrics of the workload and the core
	mk  func(cfg C, st *store.Store, now func() time.Time, reg *prometheus.Registry) W
}

// NewEnv starts the workload mk makes from cfg (with the store, the clock
// and the registry to use) in a new directory.
func NewEnv[C any, W Workload](t testing.TB, cfg C, mk func(cfg C, st *store.Store, now func() time.Time, reg *prometheus.Registry) W) *Env[C, W] {
	t.Helper()
	e := &Env[C, W]{Driver: NewDriver(t), Dir: t.TempDir(), Cfg: cfg, mk: mk}
	e.Open()
	return e
}

// Open (re)opens the store, the workload and the core from the directory
// (after Restart, or after the test closed C and St to edit the file); the
// store is closed when the test ends.
func (e *Env[C, W]) Open() {
	e.T.Helper()
	st, err := store.Open(e.Dir)
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { st.Close() })
	e.St, e.Reg = st, prometheus.NewRegistry()
	e.WL = e.mk(e.Cfg, st, e.Clk.Now, e.Reg)
	e.Start(st, e.WL, e.Reg)
}

// Restart stops the coordinator as a graceful shutdown does (events
// flushed) and starts it again on the same store file.
func (e *Env[C, W]) Restart() {
	e.T.Helper()
	if err := e.WL.Flush(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	e.C.Close()
	e.St.Close()
	e.Open()
}

// Refused submits spec of kind as Carol and fails the test unless it is
// refused as bad input with a short error (at most 400 bytes) that
// contains want.
func (d *Driver) Refused(kind string, spec any, want string) {
	d.T.Helper()
	_, err := d.C.Create(context.Background(), Carol, kind, spec)
	if apierr.ReasonOf(err) != apierr.ReasonBadInput || !strings.Contains(err.Error(), want) {
		d.T.Errorf("%s: %v", want, err)
	} else if len(err.Error()) > 400 {
		d.T.Errorf("%s: a %d-byte error", want, len(err.Error()))
	}
}

// NoneStored fails the test unless a job of kind without a spec is refused
// as bad input and st holds no job: what refusals leave.
func (d *Driver) NoneStored(kind string, st *store.Store) {
	d.T.Helper()
	if _, err := d.C.Create(context.Background(), Carol, kind, nil); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		d.T.Errorf("no spec: %v", err)
	}
	if jobs, _ := st.Jobs(context.Background()); len(jobs) != 0 {
		d.T.Fatalf("%d jobs stored after refusals", len(jobs))
	}
}

// BatchOf is the batch of a grant.
func BatchOf(g core.Grant) *arbiterv1.GamePairBatch {
	return g.Payload.(*arbiterv1.WorkUnit).GetGamePairs()
}

// BookMoves are the first moves of the tests' books.
var BookMoves = []string{"e2e4", "d2d4", "c2c4", "g1f3", "b2b3", "f2f4", "b1c3", "g2g3"}

// PGN is the PGN of every game of the tests' results.
const PGN = "[Event \"t\"]\n[Result \"*\"]\n\n1. e4 *\n"

// PairResult is a consistent result of a batch whose pair k ends with
// engine A's outcomes outcomes(k) (A is White in the first game).
func PairResult(pairs int, outcomes func(k int) (sprt.Outcome, sprt.Outcome)) *arbiterv1.GamePairBatchResult {
	var res sprt.Results
	out := &arbiterv1.GamePairBatchResult{}
	for k := 0; k < pairs; k++ {
		a1, a2 := outcomes(k)
		_ = res.AddPair(a1, a2)
		out.Games = append(out.Games, Outcome(2*k, a1, true), Outcome(2*k+1, a2, false))
		out.Pgns = append(out.Pgns, PGN, PGN)
	}
	p := res.Pentanomial
	out.Pentanomial = &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])}
	out.Wins, out.Draws, out.Losses = uint64(res.Wins), uint64(res.Draws), uint64(res.Losses)
	return out
}

// Outcome is game k where engine A (White when aWhite) gets o: wins by
// mate, draws by repetition.
func Outcome(k int, o sprt.Outcome, aWhite bool) *arbiterv1.GameOutcome {
	g := &arbiterv1.GameOutcome{GameIndex: uint32(k), Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE}
	switch {
	case o == sprt.Draw:
		g.Result, g.Termination = arbiterv1.GameResult_GAME_RESULT_DRAW, arbiterv1.GameTermination_GAME_TERMINATION_REPETITION
	case (o == sprt.Win) == aWhite:
		g.Result = arbiterv1.GameResult_GAME_RESULT_WHITE_WINS
	default:
		g.Result = arbiterv1.GameResult_GAME_RESULT_BLACK_WINS
	}
	return g
}

// Huge is a string past every limit on what a spec may name.
var Huge = strings.Repeat("x", 1<<20)

// RefuseEach submits, for each refusal (by what the error must say, a
// change that gets a valid spec refused), a valid spec from valid changed
// by it, and fails the test unless each is refused (Refused); then checks
// that nothing was stored (NoneStored).
func RefuseEach[S any](d *Driver, kind string, st *store.Store, valid func() S, refusals map[string]func(S)) {
	d.T.Helper()
	for _, want := range slices.Sorted(maps.Keys(refusals)) {
		s := valid()
		refusals[want](s)
		d.Refused(kind, s, want)
	}
	d.NoneStored(kind, st)
}

// BaseInc is the time control base+inc (real clocks).
func BaseInc(base, inc time.Duration) *arbiterv1.TimeControl {
	return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{
		Base: durationpb.New(base), Increment: durationpb.New(inc)}}}
}

// MoveTime is the time control of d per move.
func MoveTime(d time.Duration) *arbiterv1.TimeControl {
	return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{MoveTime: durationpb.New(d)}}
}
