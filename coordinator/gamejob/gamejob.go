// Package gamejob is the game-pair workload of the coordinator: match and
// SPRT tests between two engines, played by workers in batches of game
// pairs, behind core.Workload.
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
//     (counts, PGNs, the new SPRT
//     state, events and, when it ends the test, the job's final state) is
//     committed in one transaction before the worker is acknowledged.
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
// Locking follows core.Workload: mu guards memory and is never held across a
// store write; commitMu serialises decisions that end in a store write, so
// that leases and heartbeats go on while a batch is committed.
package gamejob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Kind is the workload's kind (core.Create's kind argument).
const Kind = "test"

// Stored job kinds of tests.
const (
	KindSPRT  = "sprt"
	KindMatch = "match"
)

// CapGamePair is the capability a worker advertises to get batches.
const CapGamePair = gamepair.Capability

// DefaultReferenceNPS is the speed tests that name no reference speed are
// scaled to (gamepair.DefaultReferenceNPS).
const DefaultReferenceNPS = gamepair.DefaultReferenceNPS

// Config tunes the workload. Zero values take the defaults.
type Config struct {
	Store  *store.Store
	Host   core.Host
	Logger *zap.Logger
	Now    func() time.Time
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
	ResolveArtifact func(which string, a *arbiterv1.EngineArtifact) error
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
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Activity == nil {
		c.Activity = gamepair.NewActivity(c.Now)
	}
	c.Settings.Defaults()
}

// Workload is the game-pair workload.
type Workload struct {
	cfg   Config
	log   *zap.Logger
	store *store.Store
	host  core.Host

	commitMu sync.Mutex
	mu       sync.Mutex
	tests    map[string]*test // every test, finished ones included
	running  []*test          // by submission
	workers  map[string]workerInfo
	problems []LoadProblem

	events  gamepair.EventQueue
	metrics *metrics
}

// workerInfo is what snapshots show of a worker: the core's registry is
// behind the core's lock, which a workload may not take under its own.
type workerInfo struct {
	name     string
	benchNPS uint64
}

// test is one match or SPRT test in memory. Fields marked "running" are
// nil once the test has finished.
type test struct {
	rec  *store.Job
	spec *arbiterv1.MatchSpec // as stored, without openings (OpeningsCount set)

	batchPairs int
	totalPairs int // 0: an SPRT without a cap on games
	nBatches   int // batch indexes are [0, nBatches)
	seq        *sprt.Sequential
	results    sprt.Results
	penta      sprt.Pentanomial
	pgns       int64
	done       int // counted batches
	workers    *gamepair.Workers
	hist       *history // built on first request (history.go)

	// running
	openings []*arbiterv1.Opening // in the order of play
	// batches are the batches stored and leased: stored ones are counted,
	// or skipped at load while their row still holds the unit id (a new
	// result would fail on the primary key until the row is removed).
	batches *gamepair.Batches
}

// New returns the workload; the core calls Load.
func New(cfg Config) *Workload {
	cfg.defaults()
	w := &Workload{
		cfg:     cfg,
		log:     cfg.Logger,
		store:   cfg.Store,
		host:    cfg.Host,
		tests:   make(map[string]*test),
		workers: make(map[string]workerInfo),
		metrics: newMetrics(cfg.Games),
	}
	w.events.Init(cfg.Store, cfg.Logger)
	w.metrics.register(cfg.Registerer, cfg.Games == nil, w)
	return w
}

// SetHost gives the workload the core to signal (when the core is built
// after the workload).
func (w *Workload) SetHost(h core.Host) { w.host = h }

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

func (t *test) running() bool { return t.rec.State == store.StateRunning }

// pairsOf is the first pair and the pair count of batch idx.
func (t *test) pairsOf(idx int) (first, n int) {
	first = idx * t.batchPairs
	n = t.batchPairs
	if t.totalPairs > 0 {
		n = min(n, t.totalPairs-first)
	}
	return first, n
}

// seen records what snapshots show of a worker. Caller holds mu.
func (w *Workload) seen(wk *core.Worker) {
	info := workerInfo{name: wk.Name, benchNPS: wk.Caps.BenchNPS}
	if w.workers[wk.ID] != info {
		w.workers[wk.ID] = info
	}
}

func unitID(jobID string, idx int) string { return gamepair.UnitID(jobID, idx) }

// parseUnit splits a unit id into its test and batch index.
func parseUnit(unitID string) (jobID string, idx int, ok bool) { return gamepair.ParseUnit(unitID) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

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

// finish ends t in memory after the store has its final state: the test
// leaves the running list and keeps only what its snapshot needs. Caller
// holds mu (or is loading).
func (w *Workload) finish(t *test, ch *store.JobChange) {
	t.rec.State, t.rec.Error, t.rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	if i := slices.Index(w.running, t); i >= 0 {
		w.running = slices.Delete(w.running, i, i+1)
	}
	t.openings, t.batches = nil, nil
	t.workers.DropWindows()
	w.log.Info("test finished", zap.String(logging.JobID, t.rec.ID), zap.String("state", ch.State), zap.String("error", ch.Error),
		zap.Int64("games", t.results.Games()), zap.Int("batches", t.done))
}

// Cancel implements core.Workload. Counted batches and their games stay.
func (w *Workload) Cancel(ctx context.Context, jobID, reason string) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	change := &store.JobChange{State: store.StateCancelled, Error: reason, FinishedAt: w.cfg.Now()}
	return gamepair.Cancel(ctx, w.store, &w.mu, w.tests, func(t *test) *store.Job { return t.rec }, jobID, change, w.finish)
}

var _ core.Workload = (*Workload)(nil)
