package spsa

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

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	sp "github.com/arbiter-chess/arbiter/spsa"
)

var (
	alice = gamepairtest.Alice
	carol = gamepairtest.Carol
)

// env is the workload in a core with a fake clock and a real SQLite store
// in a temporary directory; games is the arbiter_games_total it counts.
type env struct {
	*gamepairtest.Env[Config, *Workload]
	games *gamepair.GameCounter
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{}
	e.Env = gamepairtest.NewEnv(t, cfg, func(cfg Config, st *store.Store, now func() time.Time, reg *prometheus.Registry) *Workload {
		e.games = gamepair.NewGameCounter()
		reg.MustRegister(e.games.Vec())
		cfg.Store, cfg.Now, cfg.Games = st, now, e.games
		// These tests submit made-up games to test scheduling and
		// counting; gamepair's replay tests and the e2e tests submit real
		// ones.
		cfg.SkipGameReplay = true
		return New(cfg)
	})
	return e
}

func (e *env) create(spec *arbiterv1.SpsaSpec) string {
	e.T.Helper()
	return e.Create(Kind, spec)
}

func (e *env) updates(id string) []Update {
	e.T.Helper()
	us, err := Updates(context.Background(), e.St, id)
	if err != nil {
		e.T.Fatal(err)
	}
	return us
}

// tuneSpec tunes RFPMargin and FutMargin of the embedded engine over pairs
// pairs in batches of batchPairs, with 8 openings at 10+0.1.
func tuneSpec(pairs uint64, batchPairs uint32) *arbiterv1.SpsaSpec {
	ops := make([]*arbiterv1.Opening, 8)
	for i := range ops {
		ops[i] = &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{gamepairtest.BookMoves[i]}}
	}
	return &arbiterv1.SpsaSpec{
		Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded", Options: map[string]string{"Hash": "8"}},
		Params: []*arbiterv1.SpsaParam{
			{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002},
			{Name: "FutMargin", Start: 90, Min: 20, Max: 400, CEnd: 10, REnd: 0.002},
		},
		Pairs: pairs, BatchPairs: batchPairs,
		TimeControl: gamepairtest.BaseInc(10*time.Second, 100*time.Millisecond),
		Openings:    ops, BookName: "test book", BookOrder: "random", Seed: 7,
	}
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
	return gamepairtest.PairResult(pairs, func(k int) (sprt.Outcome, sprt.Outcome) { return games[2*k], games[2*k+1] })
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
	return gamepairtest.PairResult(len(b.GetOpenings()), func(int) (sprt.Outcome, sprt.Outcome) { return draw(), draw() })
}

// configOfSpec is the design a stored tune runs (defaults as the workload
// fills them in).
func configOfSpec(spec *arbiterv1.SpsaSpec) sp.Config {
	s := proto.Clone(spec).(*arbiterv1.SpsaSpec)
	return configOf(s)
}

// testutilCount is arbiter_games_total{result, termination}.
func testutilCount(e *env, result, term string) float64 {
	return testutil.ToFloat64(e.games.Vec().WithLabelValues(result, term))
}
