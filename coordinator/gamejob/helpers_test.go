package gamejob

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
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

var (
	alice  = identity.Identity{Name: "alice", Role: identity.Worker}
	carol  = identity.Identity{Name: "carol", Role: identity.Client}
	admin  = identity.Bootstrap
	t0     = time.Unix(1_700_000_000, 0)
	leaseD = 10 * time.Second
)

// env is a workload in a core with a fake clock and a real SQLite store in
// a temporary directory.
type env struct {
	t   *testing.T
	dir string
	cfg Config
	clk *clock
	st  *store.Store
	wl  *Workload
	c   *core.Core
	reg *prometheus.Registry
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), cfg: cfg, clk: &clock{now: t0}}
	e.open()
	return e
}

// open (re)starts the store, the workload and the core from the directory.
func (e *env) open() {
	e.t.Helper()
	st, err := store.Open(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	e.st = st
	e.reg = prometheus.NewRegistry()
	cfg := e.cfg
	cfg.Store, cfg.Now, cfg.Registerer = st, e.clk.Now, e.reg
	e.wl = New(cfg)
	e.c = core.New(core.Config{Store: st, Now: e.clk.Now, LeaseDuration: leaseD, LeaseKey: []byte("test key"), Registerer: e.reg}, e.wl)
	e.wl.SetHost(e.c.Host())
	if err := e.c.Load(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// restart stops the coordinator (events flushed) and starts it again on
// the same store file.
func (e *env) restart() {
	e.t.Helper()
	if err := e.wl.Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.c.Close()
	e.st.Close()
	e.open()
}

func (e *env) worker(name string, bench uint64) *core.Worker {
	e.t.Helper()
	w, err := e.c.Register(context.Background(), alice, name, core.Caps{Cores: 1, Tags: []string{CapGamePair}, BenchNPS: bench})
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func (e *env) create(spec *arbiterv1.MatchSpec) string {
	e.t.Helper()
	ref, err := e.c.Create(context.Background(), carol, Kind, spec)
	if err != nil {
		e.t.Fatal(err)
	}
	return ref.ID
}

// lease asks for a unit for w; ok is false when there is none.
func (e *env) lease(w *core.Worker) (core.Grant, bool) {
	e.t.Helper()
	g, ok, err := e.c.Lease(context.Background(), alice, w.ID, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return g, ok
}

func (e *env) mustLease(w *core.Worker) core.Grant {
	e.t.Helper()
	g, ok := e.lease(w)
	if !ok {
		e.t.Fatalf("no lease for %s", w.Name)
	}
	return g
}

func (e *env) submit(w *core.Worker, g core.Grant, res any) (core.Verdict, error) {
	return e.c.Submit(context.Background(), alice, w.ID, g.Lease.ID, g.Lease.UnitID, res, time.Second)
}

func (e *env) mustSubmit(w *core.Worker, g core.Grant, res any, want core.Verdict) {
	e.t.Helper()
	v, err := e.submit(w, g, res)
	if err != nil || v != want {
		e.t.Fatalf("submit %s by %s: %v %v, want %v", g.Lease.UnitID, w.Name, v, err, want)
	}
}

func (e *env) job(id string) *arbiterv1.Job {
	e.t.Helper()
	snap, err := e.c.Job(id, true)
	if err != nil {
		e.t.Fatal(err)
	}
	return snap.(*arbiterv1.Job)
}

func (e *env) expireAll() {
	e.clk.Advance(leaseD + time.Second)
	e.c.Tick()
}

func batchOf(g core.Grant) *arbiterv1.GamePairBatch {
	return g.Payload.(*arbiterv1.WorkUnit).GetGamePairs()
}

var bookMoves = []string{"e2e4", "d2d4", "c2c4", "g1f3", "b2b3", "f2f4", "b1c3", "g2g3"}

// matchSpec is a match of games games in batches of batchPairs pairs (0:
// sized by the workload) over n openings, at 10+0.1.
func matchSpec(games uint64, batchPairs uint32, n int) *arbiterv1.MatchSpec {
	ops := make([]*arbiterv1.Opening, n)
	for i := range ops {
		ops[i] = &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{bookMoves[i%len(bookMoves)]}}
	}
	return &arbiterv1.MatchSpec{
		EngineA: &arbiterv1.EngineSpec{Name: "new", Command: "embedded"},
		EngineB: &arbiterv1.EngineSpec{Name: "base", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{
			Base: durationpb.New(10 * time.Second), Increment: durationpb.New(100 * time.Millisecond)}}},
		Openings: ops, BookName: "test book", BookOrder: "sequential", Seed: 7, Games: games, BatchPairs: batchPairs,
	}
}

// sprtSpec is an SPRT without a cap on games.
func sprtSpec(batchPairs uint32) *arbiterv1.MatchSpec {
	s := matchSpec(0, batchPairs, 8)
	s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 10, Model: "logistic"}
	return s
}

const pgn = "[Event \"t\"]\n[Result \"*\"]\n\n1. e4 *\n"

// pairResult is a consistent result of a batch whose pair k ends with
// engine A's outcomes outcomes(k) (A is White in the first game).
func pairResult(pairs int, outcomes func(k int) (sprt.Outcome, sprt.Outcome)) *arbiterv1.GamePairBatchResult {
	var res sprt.Results
	out := &arbiterv1.GamePairBatchResult{}
	for k := 0; k < pairs; k++ {
		a1, a2 := outcomes(k)
		_ = res.AddPair(a1, a2)
		out.Games = append(out.Games, outcome(2*k, a1, true), outcome(2*k+1, a2, false))
		out.Pgns = append(out.Pgns, pgn, pgn)
	}
	p := res.Pentanomial
	out.Pentanomial = &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])}
	out.Wins, out.Draws, out.Losses = uint64(res.Wins), uint64(res.Draws), uint64(res.Losses)
	return out
}

// outcome is game k where engine A (White when aWhite) gets o: wins by
// mate, draws by repetition.
func outcome(k int, o sprt.Outcome, aWhite bool) *arbiterv1.GameOutcome {
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

// pairsResult is a consistent result of a batch of len(ps) pairs with engine
// A's outcomes ps[k] in pair k.
func pairsResult(ps ...[2]sprt.Outcome) *arbiterv1.GamePairBatchResult {
	return pairResult(len(ps), func(k int) (sprt.Outcome, sprt.Outcome) { return ps[k][0], ps[k][1] })
}

func draws(pairs int) *arbiterv1.GamePairBatchResult {
	return pairResult(pairs, func(int) (sprt.Outcome, sprt.Outcome) { return sprt.Draw, sprt.Draw })
}

func wins(pairs int) *arbiterv1.GamePairBatchResult {
	return pairResult(pairs, func(int) (sprt.Outcome, sprt.Outcome) { return sprt.Win, sprt.Win })
}

// withIncidents adds incidents of kind k to the first n games of r.
func withIncidents(r *arbiterv1.GamePairBatchResult, k arbiterv1.IncidentKind, n int) *arbiterv1.GamePairBatchResult {
	for i := 0; i < n; i++ {
		r.Incidents = append(r.Incidents, &arbiterv1.Incident{Kind: k, GameIndex: uint32(i), Engine: "new"})
	}
	return r
}

// storedBatches counts a test's stored batches and games.
func (e *env) storedBatches(id string) (batches, pgns int) {
	e.t.Helper()
	bs, err := e.st.Batches(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	n, err := e.st.CountPGNs(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(bs), int(n)
}

// workerRow is a worker's row in a test's snapshot.
func workerRow(j *arbiterv1.Job, id string) *arbiterv1.WorkerIncidents {
	for _, w := range j.GetMatchProgress().GetWorkers() {
		if w.GetWorkerId() == id {
			return w
		}
	}
	return nil
}
