package spsajob

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/spsa"
)

var (
	alice = gamepairtest.Alice
	carol = gamepairtest.Carol
)

// env is the workload in a core with a fake clock and a real SQLite store
// in a temporary directory.
type env struct {
	// Driver holds the core (C) and its fake clock (Clk).
	*gamepairtest.Driver

	t     *testing.T
	dir   string
	cfg   Config
	st    *store.Store
	wl    *Workload
	games *gamepair.GameCounter
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
	reg := prometheus.NewRegistry()
	e.games = gamepair.NewGameCounter()
	reg.MustRegister(e.games.Vec())
	cfg := e.cfg
	// These tests submit made-up games to test scheduling and counting;
	// gamepair's replay tests and the e2e tests submit real ones.
	cfg.SkipGameReplay = true
	cfg.Store, cfg.Now, cfg.Games = st, e.Clk.Now, e.games
	e.wl = New(cfg)
	e.Start(st, e.wl, reg)
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

func (e *env) create(spec *arbiterv1.SpsaSpec) string {
	e.t.Helper()
	return e.Create(Kind, spec)
}

func (e *env) updates(id string) []store.TuneUpdate {
	e.t.Helper()
	us, err := e.st.TuneUpdates(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return us
}

func batchOf(g core.Grant) *arbiterv1.GamePairBatch {
	return g.Payload.(*arbiterv1.WorkUnit).GetGamePairs()
}

var bookMoves = []string{"e2e4", "d2d4", "c2c4", "g1f3", "b2b3", "f2f4", "b1c3", "g2g3"}

// tuneSpec tunes RFPMargin and FutMargin of the embedded engine over pairs
// pairs in batches of batchPairs, with 8 openings at 10+0.1.
func tuneSpec(pairs uint64, batchPairs uint32) *arbiterv1.SpsaSpec {
	ops := make([]*arbiterv1.Opening, 8)
	for i := range ops {
		ops[i] = &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{bookMoves[i]}}
	}
	return &arbiterv1.SpsaSpec{
		Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded", Options: map[string]string{"Hash": "8"}},
		Params: []*arbiterv1.SpsaParam{
			{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002},
			{Name: "FutMargin", Start: 90, Min: 20, Max: 400, CEnd: 10, REnd: 0.002},
		},
		Pairs: pairs, BatchPairs: batchPairs,
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{
			Base: durationpb.New(10 * time.Second), Increment: durationpb.New(100 * time.Millisecond)}}},
		Openings: ops, BookName: "test book", BookOrder: "random", Seed: 7,
	}
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

// outcome is game k where engine A (White when aWhite) gets o.
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

// score is a result of pairs pairs in which engine A wins w games, loses l
// and draws the rest (w + l ≤ 2 × pairs).
func score(pairs, w, l int) *arbiterv1.GamePairBatchResult {
	games := make([]sprt.Outcome, 0, 2*pairs)
	for range w {
		games = append(games, sprt.Win)
	}
	for range l {
		games = append(games, sprt.Loss)
	}
	for len(games) < 2*pairs {
		games = append(games, sprt.Draw)
	}
	return pairResult(pairs, func(k int) (sprt.Outcome, sprt.Outcome) { return games[2*k], games[2*k+1] })
}

// synthetic is a match whose expected score is a known smooth function of
// the parameters (as in package spsa's tests): strength −Σ s·(x_i − opt_i)²
// Elo, a logistic expected score, draws up to 40%, the games of a batch
// drawn from a stream fixed by the batch.
type synthetic struct {
	names []string
	opt   []float64
	s     float64
}

func (m *synthetic) elo(opts map[string]string) float64 {
	e := 0.0
	for i, n := range m.names {
		v, err := strconv.ParseFloat(opts[n], 64)
		if err != nil {
			panic("option " + n + " missing from the engine: " + opts[n])
		}
		e -= m.s * (v - m.opt[i]) * (v - m.opt[i])
	}
	return e
}

// play is a consistent result of batch b as its engines would score.
func (m *synthetic) play(b *arbiterv1.GamePairBatch, seed uint64) *arbiterv1.GamePairBatchResult {
	p := 1 / (1 + math.Pow(10, -(m.elo(b.GetEngineA().GetOptions())-m.elo(b.GetEngineB().GetOptions()))/400))
	d := min(0.4, 2*min(p, 1-p))
	rng := rand.New(rand.NewPCG(seed, b.GetSeed()))
	draw := func() sprt.Outcome {
		switch u := rng.Float64(); {
		case u < p-d/2:
			return sprt.Win
		case u < p+d/2:
			return sprt.Draw
		}
		return sprt.Loss
	}
	return pairResult(len(b.GetOpenings()), func(int) (sprt.Outcome, sprt.Outcome) { return draw(), draw() })
}

// configOfSpec is the design a stored tune runs (defaults as the workload
// fills them in).
func configOfSpec(spec *arbiterv1.SpsaSpec) spsa.Config {
	s := proto.Clone(spec).(*arbiterv1.SpsaSpec)
	return configOf(s)
}

// testutilCount is arbiter_games_total{result, termination}.
func testutilCount(e *env, result, term string) float64 {
	return testutil.ToFloat64(e.games.Vec().WithLabelValues(result, term))
}
