// Package spsajob is the SPSA workload of the coordinator: tunes of an
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
//     acknowledged; a second result for a stored batch is answered
//     DUPLICATE and never applied.
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
// Locking follows core.Workload: mu guards memory and is never held across
// a store write; commitMu serialises decisions that end in a store write,
// so that leases and heartbeats go on while an update is committed.
package spsajob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/spsa"
)

// Kind is the workload's kind (core.Create's kind argument) and the stored
// job kind of a tune.
const Kind = "spsa"

// Config tunes the workload. Zero values take the defaults.
type Config struct {
	Store  *store.Store
	Host   core.Host
	Logger *zap.Logger
	Now    func() time.Time
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
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Settings.Defaults()
	if c.TrajectoryPoints <= 0 {
		c.TrajectoryPoints = 100
	}
}

// Workload is the SPSA workload.
type Workload struct {
	cfg   Config
	log   *zap.Logger
	store *store.Store
	host  core.Host

	commitMu sync.Mutex
	mu       sync.Mutex
	tunes    map[string]*tune // every tune, finished ones included
	running  []*tune          // by submission
	workers  map[string]workerInfo
	problems []LoadProblem

	events gamepair.EventQueue
	// builtinOptions are the embedded engine's options, read once: a tune
	// of it is checked against them at submit.
	builtinOptions func() ([]spsa.OptionDecl, error)
}

// workerInfo is what snapshots show of a worker (the core's registry is
// behind the core's lock, which a workload may not take under its own).
type workerInfo struct {
	name     string
	benchNPS uint64
}

// tune is one tune in memory. Fields marked "running" are nil once it has
// finished.
type tune struct {
	rec  *store.Job
	spec *arbiterv1.SpsaSpec // as stored, without openings (OpeningsCount set)
	st   *spsa.Tune          // θ now and the schedule
	// engineA and engineB are the tuned engine's spec renamed for each side
	// (options are filled in per batch).
	engineA, engineB *arbiterv1.EngineSpec

	results sprt.Results // engine A's games over every update
	penta   sprt.Pentanomial
	pgns    int64
	workers *gamepair.Workers
	traj    trajectory

	// running
	openings []*arbiterv1.Opening // in the order of play
	batches  *gamepair.Batches
}

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
	w := &Workload{cfg: cfg, log: cfg.Logger, store: cfg.Store, host: cfg.Host,
		tunes: make(map[string]*tune), workers: make(map[string]workerInfo), builtinOptions: sync.OnceValues(spsa.BuiltinOptions)}
	w.events.Init(cfg.Store, cfg.Logger)
	return w
}

// SetHost gives the workload the core to signal (when the core is built
// after the workload).
func (w *Workload) SetHost(h core.Host) { w.host = h }

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

func (t *tune) running() bool { return t.rec.State == store.StateRunning }

// newTune is a tune's memory for a validated spec at its start (rec is the
// caller's).
func (w *Workload) newTune(c *checked) *tune {
	t := &tune{spec: withoutOpenings(c.spec), st: c.tune, workers: w.newWorkers(), openings: c.openings,
		batches: gamepair.NewBatches(c.tune.Config().Batches())}
	t.engineA, t.engineB = sides(c.spec.GetEngine())
	t.traj.every = max(1, c.tune.Config().Batches()/w.cfg.TrajectoryPoints)
	return t
}

func (w *Workload) newWorkers() *gamepair.Workers { return w.cfg.NewWorkers() }

// seen records what snapshots show of a worker. Caller holds mu.
func (w *Workload) seen(wk *core.Worker) {
	w.workers[wk.ID] = workerInfo{name: wk.Name, benchNPS: wk.Caps.BenchNPS}
}

// referenceNPS is the speed t's clock is meant for.
func (w *Workload) referenceNPS(t *tune) uint64 { return w.cfg.Reference(t.spec.GetReferenceNps()) }

// optionsWith is an engine's options with every tuned parameter set to its
// value (a parameter replaces an option of its name in any letter case).
func optionsWith(base map[string]string, ps []spsa.Param, values []float64) map[string]string {
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
	for k, v := range spsa.OptionMap(ps, values) {
		out[k] = v
	}
	return out
}

func eventOf(t *tune, unitID, workerID, kind, detail string, at time.Time) store.Event {
	return store.Event{JobID: t.rec.ID, UnitID: unitID, WorkerID: workerID, Kind: kind, Detail: detail, At: at}
}

func (w *Workload) logExcluded(t *tune, workerID, reason string) {
	w.log.Warn("worker excluded from tune", zap.String(logging.JobID, t.rec.ID), zap.String(logging.WorkerID, workerID),
		zap.String("reason", reason))
}

// finish ends t in memory after the store has its final state: the tune
// leaves the running list and keeps only what its snapshot needs. Caller
// holds mu (or is loading).
func (w *Workload) finish(t *tune, ch *store.JobChange) {
	t.rec.State, t.rec.Error, t.rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	if i := slices.Index(w.running, t); i >= 0 {
		w.running = slices.Delete(w.running, i, i+1)
	}
	t.openings, t.batches = nil, nil
	t.workers.DropWindows()
	w.log.Info("tune finished", zap.String(logging.JobID, t.rec.ID), zap.String("state", ch.State), zap.String("error", ch.Error),
		zap.Int("updates", t.st.Updates()), zap.Int64("games", t.results.Games()))
}

// Cancel implements core.Workload. Applied updates and their games stay.
func (w *Workload) Cancel(ctx context.Context, jobID, reason string) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	change := &store.JobChange{State: store.StateCancelled, Error: reason, FinishedAt: w.cfg.Now()}
	return gamepair.Cancel(ctx, w.store, &w.mu, w.tunes, func(t *tune) *store.Job { return t.rec }, jobID, change, w.finish)
}

// Flush writes every queued event; when it returns, every event queued
// before the call is stored (or its error is returned).
func (w *Workload) Flush(ctx context.Context) error { return w.events.Flush(ctx) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

var _ core.Workload = (*Workload)(nil)
