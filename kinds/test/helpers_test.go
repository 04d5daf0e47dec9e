package test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

var (
	alice = gamepairtest.Alice
	carol = gamepairtest.Carol
	admin = identity.Bootstrap
)

// env is a test workload in a core with a fake clock and a real SQLite
// store in a temporary directory.
type env struct {
	*gamepairtest.Env[Config, *Workload]
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	return &env{gamepairtest.NewEnv(t, cfg, func(cfg Config, st *store.Store, now func() time.Time, reg *prometheus.Registry) *Workload {
		cfg.Store, cfg.Now, cfg.Registerer = st, now, reg
		// These tests submit made-up games to test scheduling and
		// counting; gamepair's replay tests and the e2e tests submit real
		// ones.
		cfg.SkipGameReplay = true
		return New(cfg)
	})}
}

func (e *env) create(spec *arbiterv1.MatchSpec) string {
	e.T.Helper()
	return e.Create(Kind, spec)
}

// matchSpec is a match of games games in batches of batchPairs pairs (0:
// sized by the workload) over n openings, at 10+0.1.
func matchSpec(games uint64, batchPairs uint32, n int) *arbiterv1.MatchSpec {
	ops := make([]*arbiterv1.Opening, n)
	for i := range ops {
		ops[i] = &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{gamepairtest.BookMoves[i%len(gamepairtest.BookMoves)]}}
	}
	return &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "new", Command: "embedded"},
		EngineB:     &arbiterv1.EngineSpec{Name: "base", Command: "embedded"},
		TimeControl: gamepairtest.BaseInc(10*time.Second, 100*time.Millisecond),
		Openings:    ops, BookName: "test book", BookOrder: "sequential", Seed: 7, Games: games, BatchPairs: batchPairs,
	}
}

// sprtSpec is an SPRT without a cap on games.
func sprtSpec(batchPairs uint32) *arbiterv1.MatchSpec {
	s := matchSpec(0, batchPairs, 8)
	s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 10, Model: "logistic"}
	return s
}

// pairsResult is a consistent result of a batch of len(ps) pairs with engine
// A's outcomes ps[k] in pair k.
func pairsResult(ps ...[2]sprt.Outcome) *arbiterv1.GamePairBatchResult {
	return gamepairtest.PairResult(len(ps), func(k int) (sprt.Outcome, sprt.Outcome) { return ps[k][0], ps[k][1] })
}

func draws(pairs int) *arbiterv1.GamePairBatchResult {
	return gamepairtest.PairResult(pairs, func(int) (sprt.Outcome, sprt.Outcome) { return sprt.Draw, sprt.Draw })
}

func wins(pairs int) *arbiterv1.GamePairBatchResult {
	return gamepairtest.PairResult(pairs, func(int) (sprt.Outcome, sprt.Outcome) { return sprt.Win, sprt.Win })
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
	e.T.Helper()
	bs, err := StoredBatches(context.Background(), e.St, id)
	if err != nil {
		e.T.Fatal(err)
	}
	n, err := e.St.CountPGNs(context.Background(), id)
	if err != nil {
		e.T.Fatal(err)
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
