// Package test is the test kind (family test): match and SPRT tests
// between two engines, played by workers in batches of game pairs. Its
// init registers the coordinator's workload (workload.Register, kind
// testview.Kind) and what clients know of its jobs (jobkind.Register, the
// stored kinds jobkind.SPRT and jobkind.Match); kinds/install imports it,
// and nothing else does. The doors below kinds/ (pages, gRPC) reach the
// workload through testview.Tests (docs/kinds.md).
//
// A test is a job (stored kind "sprt" or "match") whose units are batches of
// game pairs. Batch i holds pairs [i×B, i×B+B), and pair k plays opening k
// mod n of the book in the order fixed by the test's book order, seed and
// start (match.OrderOpenings), so which games a batch holds is a function of
// the test alone: a test is reproducible and a batch re-issued after a lost
// lease plays the same openings with the same seed.
//
// Invariants:
//   - A batch is counted once: the store's batches table has the unit id as
//     primary key; a second result for a counted batch is answered
//     DUPLICATE and never added (two plays of a batch legitimately differ
//     when clocks are involved, so the counts are not compared). A result
//     (counts, PGNs, the new SPRT state, events and, when it ends the test,
//     the job's final state) is committed in one transaction before the
//     worker is acknowledged (gamepair.Set's commit step, with the SPRT
//     update as its next-state hook, decided on copies: memory changes only
//     once the store has it).
//   - The SPRT (sprt.Sequential, batch size B pairs) sees the cumulative
//     results after every accepted batch, in acceptance order; its state is
//     stored with each batch, so a restarted coordinator resumes it exactly.
//   - Nothing a peer sends is a loop bound (gamepair.Batches): a batch
//     index is only looked up, never counted up to; the next fresh batch
//     moves forward over batches already stored or leased, and those are
//     bounded by the batches really issued. Batch indexes are capped by the
//     test (its games, or MaxPairs worth of batches for an SPRT without a
//     cap: the tracker's range is fixed at creation and never grows), and a
//     stored batch outside them is skipped at load (LoadProblems).
//   - What status shows of a worker (games, incidents, lost leases,
//     refusals, exclusion) is rebuilt from the store on Load: batches carry
//     their incidents, and lost leases, refusals and exclusions are stored
//     as events.
//   - A finished test keeps only what its snapshot needs.
//
// The skeleton every game workload shares (scheduling, the commit step of
// a result, Load, Create, Cancel, locking) is gamepair.Set, which the
// workload embeds; what is a test's own (its SPRT, its spec) is here, and
// reaches the Set through gamepair.Hooks.
package test

import (
	"encoding/json"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Kind is the workload's kind (core.Create's kind argument).
const Kind = testview.Kind

// Stored job kinds of tests.
const (
	KindSPRT  = "sprt"
	KindMatch = "match"
)

func init() {
	// Its tables (store.go), their games' retention and a liar's purge.
	store.RegisterSchema(schema)
	store.RegisterGameTable(GameTable)
	store.RegisterPurge([]string{KindSPRT, KindMatch}, purgeRows)
	workload.Register(workload.Kind{
		Name:    Kind,
		Spec:    func() proto.Message { return &arbiterv1.MatchSpec{} },
		New:     workload.WithSettings(fromDeps),
		Runs:    workload.SubmittedPrograms, // a test plays engines its submitter may have uploaded
		Order:   20,
		Example: example,
		Flags:   flags,
	})
	// What clients know of its jobs: an SPRT test or a match, shown alike,
	// kept by lists filtered by this kind.
	jobkind.Register(jobkind.Kind{Name: KindSPRT, Family: jobkind.FamilyTest, Path: "/tests/", Noun: "test", Workload: Kind})
	jobkind.Register(jobkind.Kind{Name: KindMatch, Family: jobkind.FamilyTest, Path: "/tests/", Noun: "test", Workload: Kind})
}

// fromDeps builds the workload as the coordinator does: the settings are
// the command's (coordinator.Config.Games), and the rest comes from d: the
// games counter and activity every game workload shares, and the lookups
// of other kinds' jobs.
func fromDeps(s gamepair.Settings, d workload.Deps) *Workload {
	cfg := Config{Settings: s}
	cfg.Store, cfg.Logger, cfg.Now, cfg.Registerer = d.Store, d.Logger, d.Now, d.Registerer
	cfg.Games, cfg.Activity, cfg.ResolveArtifact, cfg.JobExists = d.Games, d.Activity, d.ResolveArtifact, d.JobExists
	cfg.Trust = d.Trust
	if d.Workload != nil {
		cfg.TuneExists = func(id string) bool {
			tunes, ok := d.Workload(jobkind.SPSA)
			if !ok {
				return false
			}
			desc, ok := tunes.(core.Describer)
			if !ok {
				return false
			}
			_, ok = desc.Describe(id)
			return ok
		}
	}
	return New(cfg)
}

// DefaultReferenceNPS is the speed tests that name no reference speed are
// scaled to (gamepair.DefaultReferenceNPS).
const DefaultReferenceNPS = gamepair.DefaultReferenceNPS

// Config tunes the workload. Zero values take the defaults.
type Config struct {
	// Deps are the store, the core, the logger and the clock.
	gamepair.Deps
	// Settings size batches and judge workers (gamepair.Settings: a test
	// is the job).
	gamepair.Settings
	// JobExists reports whether another workload has a job of this id, so
	// that PGNs can tell "not a test" from "unknown". Nil: every id that is
	// not a test is unknown.
	JobExists func(jobID string) bool
	// ResolveArtifact completes an uploaded engine's artifact from the
	// coordinator's store when a test is submitted (which names the field);
	// nil: tests with uploaded engines are refused.
	ResolveArtifact func(which string, e *arbiterv1.EngineSpec) error
	// TuneExists reports whether an SPSA tune of this id exists: a test
	// that verifies a tune (MatchSpec.verifies_tune) must name one. Nil:
	// every such test is refused.
	TuneExists func(jobID string) bool
	// Registerer receives the workload's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Games counts the games of accepted batches (arbiter_games_total).
	// Nil: the workload makes its own and registers it with Registerer;
	// given: its maker registers it (it is shared with other workloads).
	Games *gamepair.GameCounter
	// Activity counts each worker's recent games and incidents, shared
	// with the other game workloads. Nil: the workload keeps its own.
	Activity *gamepair.Activity
}

func (c *Config) defaults() {
	c.Deps.Defaults()
	if c.Activity == nil {
		c.Activity = gamepair.NewActivity(c.Now)
	}
	c.Settings.Defaults()
}

// Workload is the game-pair workload. Its embedded Set holds the tests
// and implements most of core.Workload.
type Workload struct {
	gamepair.Set[*test]
	cfg     Config
	log     *zap.Logger
	store   *store.Store
	metrics *metrics
	// copies lists, by test id, the tests rescheduled from it, in
	// submission order (find.go). Mu guards it.
	copies map[string][]string
}

// test is one match or SPRT test in memory: a gamepair.Job (records,
// counts, workers, batches) and what a test adds.
type test struct {
	gamepair.Job
	spec *arbiterv1.MatchSpec // as stored, without openings (OpeningsCount set)

	batchPairs int
	totalPairs int // 0: an SPRT without a cap on games
	nBatches   int // batch indexes are [0, nBatches)
	seq        *sprt.Sequential
	hist       *history   // built on first request (history.go)
	find       *findCache // what lists find it by, made on first use (find.go)
	// anytimeCache is the anytime interval at a pair count (anytime.go).
	anytimeCache *anytimeAt
}

// Base implements gamepair.Entry.
func (t *test) Base() *gamepair.Job { return &t.Job }

// New returns the workload; the core calls Load.
func New(cfg Config) *Workload {
	cfg.defaults()
	w := &Workload{
		cfg:     cfg,
		log:     cfg.Logger,
		store:   cfg.Store,
		metrics: newMetrics(cfg.Games),
	}
	w.Set = gamepair.Set[*test]{Deps: cfg.Deps, What: "test", Kinds: []string{KindSPRT, KindMatch}, GameTable: GameTable,
		Activity: cfg.Activity, Games: w.metrics.games, Replay: w.cfg.Replay,
		CrossCheckable: func(t *test) bool {
			return w.cfg.CrossCheckable(t.spec.GetTimeControl(), t.spec.GetEngineA(), t.spec.GetEngineB())
		},
		ReplayFraction: cfg.ReplayFraction, CrossChecks: w.metrics.crossChecks, Hooks: gamepair.Hooks[*test]{
			Engines:      func(t *test) (a, b *arbiterv1.EngineSpec) { return t.spec.GetEngineA(), t.spec.GetEngineB() },
			Adjudication: func(t *test) *arbiterv1.Adjudication { return t.spec.GetAdjudication() },
			Schedule:     func(t *test) (int32, float64) { return t.spec.GetPriority(), t.spec.GetThroughput() },
			Unit:         w.batchProto,
			Pairs:        func(t *test, idx int) int { _, n := t.pairsOf(idx); return n },
			Next:         w.next,
			Summary: func(t *test) []zap.Field {
				return []zap.Field{zap.Int64("games", t.Results.Games()), zap.Int("batches", t.Done)}
			},
			Load:     w.loadTest,
			Over:     (*test).over,
			Snapshot: w.snapshot,
			Submit:   w.submit,
			Describe: w.describe,
			Counted:  w.counted,
			Recount:  w.recount,
		}}
	w.Init()
	w.metrics.register(cfg.Registerer, cfg.Games == nil, w)
	return w
}

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

// pairsOf is the first pair and the pair count of batch idx.
func (t *test) pairsOf(idx int) (first, n int) {
	first = idx * t.batchPairs
	n = t.batchPairs
	if t.totalPairs > 0 {
		n = min(n, t.totalPairs-first)
	}
	return first, n
}

func unitID(jobID string, idx int) string { return gamepair.UnitID(jobID, idx) }

// seqJSON is the stored form of an SPRT state ("" without SPRT).
func seqJSON(s *sprt.Sequential) (string, error) {
	if s == nil {
		return "", nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode SPRT state: %w", err)
	}
	return string(b), nil
}

var (
	_ core.Workload = (*Workload)(nil)
	_ core.Failer   = (*Workload)(nil)
)

// example is a match of four games at 500 nodes a move between engine
// and the embedded engine (workload.Kind.Example).
func example(engine, dir string) []string {
	return []string{"match", "--engine", engine, "--engine", "name=base,builtin", "--each", "nodes=500",
		"--openings", "file=" + gamepair.ExampleBook(dir) + ",order=random,seed=5", "--games", "4", "--batch-pairs", "1"}
}
