package gamejob

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

var (
	alice = gamepairtest.Alice
	carol = gamepairtest.Carol
	admin = identity.Bootstrap
)

// env is a workload in a core with a fake clock and a real SQLite store in
// a temporary directory.
type env struct {
	// Driver holds the core (C) and its fake clock (Clk).
	*gamepairtest.Driver

	t   *testing.T
	dir string
	cfg Config
	st  *store.Store
	wl  *Workload
	reg *prometheus.Registry
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{Driver: gamepairtest.NewDriver(t), t: t, dir: t.TempDir(), cfg: cfg}
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
	// These tests submit made-up games to test scheduling and counting;
	// gamepair's replay tests and the e2e tests submit real ones.
	cfg.SkipGameReplay = true
	cfg.Store, cfg.Now, cfg.Registerer = st, e.Clk.Now, e.reg
	e.wl = New(cfg)
	e.Start(st, e.wl, e.reg)
}

// restart stops the coordinator (events flushed) and starts it again on
// the same store file.
func (e *env) restart() {
	e.t.Helper()
	if err := e.wl.Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.C.Close()
	e.st.Close()
	e.open()
}

func (e *env) create(spec *arbiterv1.MatchSpec) string {
	e.t.Helper()
	return e.Create(Kind, spec)
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
