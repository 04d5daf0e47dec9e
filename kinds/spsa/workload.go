// Package spsa is the SPSA kind of job, its coordinator side: tunes of an
// engine's parameters (package spsa, Fishtest's classic SPSA), played by
// workers in batches of game pairs, behind core.Workload.
//
// A tune is a job (stored kind "spsa") whose units are the batches of the
// tune. Batch b is one perturbation: engine A is the tuned engine with
// θ + c_k·Δ set over its options, engine B the same with θ − c_k·Δ, where
// k and Δ come from the tune's seed and b alone (spsa.Tune.Perturbation);
// the openings are those of its pairs in the order fixed by the book, as in
// a test (gamepair). The worker plays it like any batch of game pairs.
//
// Invariants:
//   - One update per accepted batch, none twice: an update is stored (a
//     row of tune_updates, unique by batch index, with the batch's counts,
//     games and θ after the update) in one transaction before the worker is
//     acknowledged (gamepair.Set's commit step, with the update as its
//     next-state hook, computed on a copy of θ); a second result for a
//     stored batch is answered DUPLICATE and never applied.
//   - Updates are numbered in the order they were applied (seq), and θ
//     after each is stored: the record replays to θ exactly (spsa.Replay),
//     and Load resumes θ, the trajectory and every count where they stood.
//   - A batch played again (a lost lease, a killed worker, a restart) plays
//     the same perturbation; its engines' values are θ ± c_k·Δ from θ when
//     it is handed out.
//   - Nothing a peer sends is a loop bound (gamepair.Batches): a batch index
//     is only looked up, and bounded by the tune's batches.
//   - A finished tune keeps only what its snapshot needs.
//
// The skeleton every game workload shares (scheduling, the commit step of
// a result, Load, Create, Cancel, locking) is gamepair.Set, which the
// workload embeds; what is a tune's own (θ and its update, the
// perturbation of each batch) is here, and reaches the Set through
// gamepair.Hooks.
package spsa

import (
	"strings"
	"sync"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	sp "github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Kind is the workload's kind (core.Create's kind argument) and the stored
// job kind of a tune.
const Kind = "spsa"

func init() {
	store.RegisterSchema(schema)
	store.RegisterGameTable(GameTable)
	workload.Register(workload.Kind{
		Name: Kind,
		Spec: func() proto.Message { return &arbiterv1.SpsaSpec{} },
		// The settings are the zero Config but for the reference speed,
		// the tests' (a test passes others as the coordinator's
		// KindSettings); the games counter and activity are shared with
		// every game workload.
		New: workload.WithSettings(func(cfg Config, d workload.Deps) *Workload {
			if cfg.ReferenceNPS == 0 {
				cfg.ReferenceNPS = d.ReferenceNPS // the tests'
			}
			cfg.Store, cfg.Logger, cfg.Now = d.Store, d.Logger, d.Now
			cfg.Games, cfg.Activity, cfg.ResolveArtifact = d.Games, d.Activity, d.ResolveArtifact
			// Trust: no replay checks a tune's batches, so an untrusted
			// identity gets none (gamepair/trust.go).
			cfg.Trust = d.Trust
			return New(cfg)
		}),
		// A tune plays an engine its submitter may have uploaded.
		Runs:  workload.SubmittedPrograms,
		Order: 30,
		// A tune of one of the embedded engine's search margins.
		Example: func(engine, dir string) []string {
			return []string{"spsa", "--engine", engine, "--params", "RFPMargin,75,20,300,5,0.002", "--each", "nodes=500",
				"--openings", "file=" + gamepair.ExampleBook(dir) + ",order=random,seed=5", "--pairs", "2", "--batch-pairs", "1"}
		},
	})
	jobkind.Register(jobkind.Kind{Name: Kind, Family: jobkind.FamilyTune, Path: "/tunes/", Noun: "tune"})
}

// Config tunes the workload. Zero values take the defaults.
type Config struct {
	// Deps are the store, the core, the logger and the clock.
	gamepair.Deps
	// Settings size batches and judge workers as for tests
	// (gamepair.Settings: a tune is the job).
	gamepair.Settings
	// TrajectoryPoints is about how many points of each parameter's
	// trajectory a tune keeps (100, Fishtest's samples).
	TrajectoryPoints int
	// Games counts the games of accepted batches (arbiter_games_total),
	// shared with the other game workloads; nil counts none.
	Games *gamepair.GameCounter
	// Activity counts each worker's recent games and incidents, shared
	// with the other game workloads; nil counts none.
	Activity *gamepair.Activity
	// ResolveArtifact completes an uploaded engine's artifact from the
	// coordinator's store when a tune is submitted; nil: tunes of uploaded
	// engines are refused.
	ResolveArtifact gamepair.ResolveFunc
}

func (c *Config) defaults() {
	c.Deps.Defaults()
	c.Settings.Defaults()
	if c.TrajectoryPoints <= 0 {
		c.TrajectoryPoints = 100
	}
}

// Workload is the SPSA workload. Its embedded Set holds the tunes and
// implements most of core.Workload.
type Workload struct {
	gamepair.Set[*tune]
	cfg   Config
	log   *zap.Logger
	store *store.Store

	// builtinOptions are the embedded engine's options, read once: a tune
	// of it is checked against them at submit.
	builtinOptions func() ([]sp.OptionDecl, error)
}

// tune is one tune in memory: a gamepair.Job (records, counts, workers,
// batches) and what a tune adds.
type tune struct {
	gamepair.Job
	spec *arbiterv1.SpsaSpec // as stored, without openings (OpeningsCount set)
	st   *sp.Tune            // θ now and the schedule
	// engineA and engineB are the tuned engine's spec renamed for each side
	// (options are filled in per batch).
	engineA, engineB *arbiterv1.EngineSpec
	traj             trajectory
}

// Base implements gamepair.Entry.
func (t *tune) Base() *gamepair.Job { return &t.Job }

// trajectory is θ at the start and every `every` updates.
type trajectory struct {
	every   int
	updates []uint64
	theta   [][]float64
}

func (tr *trajectory) add(updates int, theta []float64) {
	if updates != 0 && updates%tr.every != 0 {
		return
	}
	tr.updates = append(tr.updates, uint64(updates))
	tr.theta = append(tr.theta, theta)
}

// New returns the workload; the core calls Load.
func New(cfg Config) *Workload {
	cfg.defaults()
	w := &Workload{cfg: cfg, log: cfg.Logger, store: cfg.Store, builtinOptions: sync.OnceValues(sp.BuiltinOptions)}
	w.Set = gamepair.Set[*tune]{Deps: cfg.Deps, What: "tune", Kinds: []string{Kind}, Activity: cfg.Activity, Games: cfg.Games,
		GameTable: GameTable,
		Replay:    w.cfg.Replay, Hooks: gamepair.Hooks[*tune]{
			Engines:      func(t *tune) (a, b *arbiterv1.EngineSpec) { return t.engineA, t.engineB },
			Adjudication: func(t *tune) *arbiterv1.Adjudication { return t.spec.GetAdjudication() },
			Schedule:     func(t *tune) (int32, float64) { return t.spec.GetPriority(), t.spec.GetThroughput() },
			Unit:         w.batchProto,
			Pairs:        func(t *tune, idx int) int { _, n := t.st.Config().BatchRange(idx); return n },
			Next:         w.next,
			Summary: func(t *tune) []zap.Field {
				return []zap.Field{zap.Int("updates", t.st.Updates()), zap.Int64("games", t.Results.Games())}
			},
			Load:     w.loadTune,
			Over:     func(t *tune) bool { return t.st.Updates() == t.st.Config().Batches() },
			Snapshot: w.snapshot,
			Submit:   w.submit,
		}}
	w.Init()
	return w
}

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

// newTune is a tune's memory for a validated spec at its start (rec is the
// caller's).
func (w *Workload) newTune(c *checked) *tune {
	t := &tune{Job: gamepair.Job{Workers: w.cfg.NewWorkers(), Openings: c.openings, Batches: gamepair.NewBatches(c.tune.Config().Batches())},
		spec: gamepair.WithoutOpenings(c.spec), st: c.tune}
	t.engineA, t.engineB = sides(c.spec.GetEngine())
	t.traj.every = max(1, c.tune.Config().Batches()/w.cfg.TrajectoryPoints)
	return t
}

// referenceNPS is the speed t's clock is meant for.
func (w *Workload) referenceNPS(t *tune) uint64 { return w.cfg.Reference(t.spec.GetReferenceNps()) }

// optionsWith is an engine's options with every tuned parameter set to its
// value (a parameter replaces an option of its name in any letter case).
func optionsWith(base map[string]string, ps []sp.Param, values []float64) map[string]string {
	out := make(map[string]string, len(base)+len(ps))
	for k, v := range base {
		tuned := false
		for _, p := range ps {
			tuned = tuned || strings.EqualFold(p.Name, k)
		}
		if !tuned {
			out[k] = v
		}
	}
	for k, v := range sp.OptionMap(ps, values) {
		out[k] = v
	}
	return out
}

var (
	_ core.Workload = (*Workload)(nil)
	_ core.Failer   = (*Workload)(nil)
)
