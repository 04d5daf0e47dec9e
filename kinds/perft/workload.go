// Package perft is the kind PERFT: exact counts of a position's move
// tree, split over the workers. It registers every side of itself that
// has a registry, from its init: the coordinator's workload and jobkind
// entry (this file), its coordinator flags (flags.go: --perft-max-*),
// what `arbiter status` shows (report.go) and the job's page (page.go,
// templates/perft.html). kinds/install is its one importer; what of perft
// stays below kinds/ this release, and why, is in docs/kinds.md.
//
// The workload splits a perft job into units (package perftsplit), hands
// units to the core's scheduler, judges the runs workers submit, and adds
// up exact totals (and, for a statistics job, exact statistics).
//
// Affinity: a worker's hash table is worth most when the units it computes
// share subtrees. A job's fresh units are kept in segments, runs of
// consecutive units of one slice (engine.PerftSlice: with two or more
// workers each position's tree is cut into as many slices, whose
// subtrees below the key ply never meet); a worker leases from the
// segment it owns, claims a free one when its own runs out, and when none
// is free steals the back half of the longest, so that no worker idles
// while units remain and each worker's units stay consecutive.
//
// Invariants:
//   - A job's totals are Σ multiplicity × count over settled units, as
//     big integers; a unit's contribution enters the sums when it settles
//     and is replaced, never added twice, if a dispute settles it on other
//     counts.
//   - A run is stored (commitStart in store.go: one transaction with the
//     unit's new state and, when it finishes the job, the job's final
//     state) before memory changes and before the worker is acknowledged.
//     Memory is rebuilt from the store on Load, so a coordinator killed at
//     any moment resumes every job exactly.
//   - One identity is one witness: a unit is leased for verification or
//     settlement only to a worker of an identity that has not run it and
//     does not hold it, and judge counts runs by identity.
//   - Finished jobs keep only their record in memory.
package perft

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Kind is the workload's kind and the job kind it stores.
const Kind = "perft"

func init() {
	workload.Register(workload.Kind{
		Name: Kind,
		Spec: func() proto.Message { return &arbiterv1.PerftSpec{} },
		// The limits are the kind's flags (Flags); the unit size and the
		// recheck share the coordinator's.
		New: workload.WithSettings(func(cfg Config, d workload.Deps) *Workload {
			cfg.Store, cfg.Logger, cfg.Now, cfg.Registerer = d.Store, d.Logger, d.Now, d.Registerer
			if cfg.TargetUnitDuration == 0 {
				cfg.TargetUnitDuration = d.UnitDuration
			}
			if cfg.VerifyDefault == 0 {
				cfg.VerifyDefault = d.RecheckDefault
			}
			return New(cfg)
		}),
		Flags: flags,
		// Perft runs only the embedded move generator.
		Runs:  workload.OperatorPrograms,
		Order: 10,
	})
	jobkind.Register(jobkind.Kind{Name: Kind, Family: jobkind.FamilyPerft, Path: "/perft/", Noun: "perft job"})
	store.RegisterSchema(schema)
}

// Config tunes the workload. Zero values take the defaults.
type Config struct {
	Store  *store.Store
	Host   core.Host
	Logger *zap.Logger
	Now    func() time.Time
	// TargetUnitDuration is the work one unit should take (2s), at
	// NominalNodesPerSecond estimated leaves per second per core (50M).
	TargetUnitDuration    time.Duration
	NominalNodesPerSecond float64
	// MinUnits splits even small jobs into this many units (64) so that
	// every worker gets some.
	MinUnits int
	// MaxPositionsPerUnit bounds a unit's message size (4096).
	MaxPositionsPerUnit int
	// VerifyDefault is the verify fraction of jobs that do not set one.
	VerifyDefault float64
	// MaxRuns is how many runs a disputed unit may take before its job
	// fails (5).
	MaxRuns int
	// SplitLimits bound one job's split (perftsplit.DefaultLimits).
	SplitLimits perftsplit.Limits
	// MaxNodes refuses a job whose estimated leaf count (perftsplit.
	// EstimateNodes) is over it: work no farm finishes (DefaultMaxNodes).
	MaxNodes float64
	// MaxHeldPositions bounds the split positions of all running jobs
	// together, which the coordinator keeps in memory and reloads at
	// start (DefaultMaxHeldPositions).
	MaxHeldPositions int
	// Registerer receives the workload's metrics; nil registers none.
	Registerer prometheus.Registerer
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.TargetUnitDuration <= 0 {
		c.TargetUnitDuration = 2 * time.Second
	}
	if c.NominalNodesPerSecond <= 0 {
		c.NominalNodesPerSecond = 50e6
	}
	if c.MinUnits <= 0 {
		c.MinUnits = 64
	}
	if c.MaxPositionsPerUnit <= 0 {
		c.MaxPositionsPerUnit = 4096
	}
	if c.MaxRuns <= 0 {
		c.MaxRuns = 5
	}
	if c.SplitLimits == (perftsplit.Limits{}) {
		c.SplitLimits = perftsplit.DefaultLimits
	}
	if c.MaxNodes <= 0 {
		c.MaxNodes = DefaultMaxNodes
	}
	if c.MaxHeldPositions <= 0 {
		c.MaxHeldPositions = DefaultMaxHeldPositions
	}
}

// Defaults of the limits on what a job may ask.
const (
	// DefaultMaxNodes is in the estimate's units (EstimateNodes, which
	// runs low at depth: from the start position it says 1.2×10^20 for
	// perft(15), whose count is 2.0×10^21, and 2.8×10^21 for perft(16)):
	// it admits perft(15) of the start position, the published record
	// (months on a large farm), and refuses perft(16).
	DefaultMaxNodes = 1e21
	// DefaultMaxHeldPositions: a running job holds about 500 bytes of
	// the coordinator's memory per split position (measured: the start
	// position split at ply 5, 822,518 positions, left the coordinator
	// at 460 MB RSS after a peak of 720 MB while splitting), so some
	// 500 MB however many perft jobs run, plus one split in progress.
	DefaultMaxHeldPositions = 1_000_000
)

// Workload is the perft workload.
type Workload struct {
	cfg   Config
	log   *zap.Logger
	store *store.Store
	host  core.Host

	// commitMu serialises decisions that end in a store write, so the
	// store is written without holding mu (which leases need).
	commitMu sync.Mutex
	// splitting admits one split at a time, from its budget through its
	// commit: a split's transient memory is several times what the job
	// then holds, so concurrent submits must not add theirs up, and the
	// budget each sees must count the jobs committed before it.
	splitting chan struct{}
	mu        sync.Mutex
	jobs      map[string]*job
	running   []*job // by submission
	units     map[string]*unit
	problems  []LoadProblem

	metrics *metrics
}

// LoadProblem is a stored job that Load could not rebuild (its positions,
// units or runs do not fit together): it is not served, and the rest
// loads. The caller quarantines and reports it.
type LoadProblem struct {
	JobID string
	Err   error
}

// LoadProblems returns what the last Load skipped.
func (w *Workload) LoadProblems() []LoadProblem {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]LoadProblem(nil), w.problems...)
}

// Quarantined implements workload.Quarantiner: the jobs the last Load
// skipped.
func (w *Workload) Quarantined() []store.Quarantined {
	var out []store.Quarantined
	for _, p := range w.LoadProblems() {
		out = append(out, store.Quarantined{Kind: "job", ID: p.JobID, Error: p.Err.Error()})
	}
	return out
}

// Needs implements workload.Needer: a worker that counts perft. A perft
// job needs only the embedded engine, so it waits for such a worker
// however long.
func (w *Workload) Needs(jobID string) (core.Need, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j, ok := w.jobs[jobID]
	if !ok {
		return core.Need{}, false
	}
	caps := []string{capability.Perft}
	if name := j.rec.CrossCheck; name != "" {
		// Only the sampled units need it, but a job whose program no
		// worker offers cannot finish: it says so (blocked, naming it).
		caps = append(caps, capability.PerftCrossCheck, capability.VerifyEngine(name))
	}
	return core.Need{Caps: caps}, true
}

type job struct {
	rec       *store.Job
	positions []Position
	units     []*unit
	retry     []*unit    // re-opened units (expired, released, disputed), served first
	more      []*unit    // leased units that want further runs (verification)
	segs      []*segment // fresh units, by slice and in order
	divide    []*big.Int
	stats     []*big.Int // a statistics job's eight totals over settled units
	nodesDone big.Int
	settled   int
	verified  int
	disputed  int            // units whose runs disagreed
	resolved  int            // disputed units that settled
	holders   map[string]int // worker id → leases it holds on the job
	// distrusted holds the identities outvoted in a settled dispute of the
	// job: no witness for its units any more (judge), and leased none of
	// them. Memory only: Load derives it from the runs.
	distrusted map[string]bool
	// crossDone is a finished job's cross-check view (its units leave
	// memory with it).
	crossDone *arbiterv1.PerftCrossCheck
	started   time.Time // when this coordinator run began tracking it
	baseNodes big.Int   // nodes done when tracking began (for the rate)
}

type unit struct {
	job     *job
	rec     Unit
	runs    []Run
	v       verdict
	counted bool              // contribution is in the job's sums
	queued  bool              // in the job's retry or more list, or a segment
	holders map[string]string // worker id → owner, of live leases
	// crossHeld marks the live leases (by worker id) that run the job's
	// cross-check program.
	crossHeld map[string]bool
	// crossFailed holds the workers (by id) whose program failed on the
	// unit, with the last reason: no more cross-checks of it for them.
	// Memory only.
	crossFailed map[string]string
}

// segment is a run of fresh units of one slice that one worker leases in
// order (owner: its worker id, "" before one claims it).
type segment struct {
	units []*unit
	owner string
}

// width is the number of counts per position in j's runs: the node count,
// and the eight statistics of a statistics job.
func (j *job) width() int {
	if j.rec.Stats {
		return engine.NumPerftStats
	}
	return 1
}

// New returns the workload; the core calls Load.
func New(cfg Config) *Workload {
	cfg.defaults()
	return &Workload{
		cfg:       cfg,
		log:       cfg.Logger,
		store:     cfg.Store,
		host:      cfg.Host,
		jobs:      make(map[string]*job),
		units:     make(map[string]*unit),
		metrics:   newMetrics(cfg.Registerer),
		splitting: make(chan struct{}, 1),
	}
}

// SetHost gives the workload the core to signal (when the core is built
// after the workload).
func (w *Workload) SetHost(h core.Host) { w.host = h }

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

// Load implements core.Workload.
func (w *Workload) Load(ctx context.Context) ([]core.JobRef, error) {
	recs, err := w.store.Jobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("perft: load jobs: %w", err)
	}
	var refs []core.JobRef
	w.problems = nil
	for _, rec := range recs {
		if rec.Kind != Kind {
			continue
		}
		j := &job{rec: rec, holders: map[string]int{}, distrusted: map[string]bool{}}
		if rec.State == store.StateRunning {
			if err := w.loadRunning(ctx, j); err != nil {
				w.skip(j, err)
				continue
			}
		} else if rec.Verified < 0 || rec.Settled < 0 {
			if err := w.summarise(ctx, j); err != nil {
				w.skip(j, err)
				continue
			}
		} else {
			j.settled, j.verified, j.disputed, j.resolved = rec.Settled, rec.Verified, rec.Disputed, rec.Resolved
		}
		if rec.State != store.StateRunning && rec.CrossCheck != "" {
			if err := w.loadCrossView(ctx, j); err != nil {
				w.skip(j, err)
				continue
			}
		}
		w.jobs[rec.ID] = j
		if j.rec.State == store.StateRunning {
			w.running = append(w.running, j)
		}
		refs = append(refs, core.JobRef{ID: rec.ID, Seq: rec.Seq, Submitter: rec.Submitter})
	}
	return refs, nil
}

// skip forgets a job that failed to load.
func (w *Workload) skip(j *job, err error) {
	for _, u := range j.units {
		delete(w.units, u.rec.ID)
	}
	w.problems = append(w.problems, LoadProblem{JobID: j.rec.ID, Err: err})
}

// loadRunning rebuilds a running job's units and sums from its runs.
func (w *Workload) loadRunning(ctx context.Context, j *job) error {
	id := j.rec.ID
	var err error
	if j.positions, err = loadPositions(ctx, w.store, id); err != nil {
		return fmt.Errorf("perft: job %s positions: %w", id, err)
	}
	recs, byUnit, err := w.unitsAndRuns(ctx, id)
	if err != nil {
		return err
	}
	j.divide = newDivide(len(j.rec.RootMoves))
	if j.rec.Stats {
		j.stats = newDivide(engine.NumPerftStats - 1)
	}
	fresh := make([][]*unit, max(j.rec.Slices, 1))
	for _, ur := range recs {
		if ur.First < 0 || ur.End > len(j.positions) || ur.First >= ur.End {
			return fmt.Errorf("perft: job %s unit %s: positions [%d, %d) outside the job's %d", id, ur.ID, ur.First, ur.End, len(j.positions))
		}
		if ur.Slice < 0 || ur.Slice >= len(fresh) {
			return fmt.Errorf("perft: job %s unit %s: slice %d of %d", id, ur.ID, ur.Slice, len(fresh))
		}
		u := &unit{job: j, rec: ur, runs: byUnit[ur.ID], holders: map[string]string{}}
		j.units = append(j.units, u)
		w.units[ur.ID] = u
	}
	j.findDistrusted(w.cfg.MaxRuns)
	for _, u := range j.units {
		ur := u.rec
		u.v = judgeUnit(u, u.runs, w.cfg.MaxRuns, j.distrusted)
		if u.v.settled {
			if len(u.v.counts) != (ur.End-ur.First)*j.width() {
				return fmt.Errorf("perft: job %s unit %s: %d counts for %d positions of %d", id, ur.ID, len(u.v.counts), ur.End-ur.First, j.width())
			}
			contribute(u, u.v.counts, +1, j.divide, &j.nodesDone, j.stats)
			u.counted = true
		}
		j.tally(u.v, +1)
		if u.v.want > 0 {
			u.queued = true
			if len(u.runs) == 0 {
				fresh[ur.Slice] = append(fresh[ur.Slice], u)
			} else {
				j.more = append(j.more, u)
			}
		}
	}
	for _, us := range fresh {
		if len(us) > 0 {
			j.segs = append(j.segs, &segment{units: us})
		}
	}
	j.started = w.cfg.Now()
	j.baseNodes.Set(&j.nodesDone)
	if j.settled == len(j.units) {
		// Every unit was settled but the job not closed: close it now.
		change := w.finalChange(j, store.StateDone, "")
		if err := w.store.SetJobState(ctx, id, change); err != nil {
			return err
		}
		w.applyFinal(j, change)
		return nil
	}
	w.log.Info("job resumed", zap.String(logging.JobID, id), zap.Int("units", len(j.units)),
		zap.Int("settled", j.settled), zap.String("nodes_done", j.nodesDone.String()))
	return nil
}

// summarise computes a finished job's verification summary from its runs
// (jobs finished before the summary was stored).
func (w *Workload) summarise(ctx context.Context, j *job) error {
	recs, byUnit, err := w.unitsAndRuns(ctx, j.rec.ID)
	if err != nil {
		return err
	}
	for _, ur := range recs {
		u := &unit{job: j, rec: ur, runs: byUnit[ur.ID]}
		j.tally(judgeUnit(u, u.runs, w.cfg.MaxRuns, nil), +1)
	}
	return nil
}

func (w *Workload) unitsAndRuns(ctx context.Context, id string) ([]Unit, map[string][]Run, error) {
	recs, err := loadUnits(ctx, w.store, id)
	if err != nil {
		return nil, nil, fmt.Errorf("perft: job %s units: %w", id, err)
	}
	runs, err := loadRuns(ctx, w.store, id)
	if err != nil {
		return nil, nil, fmt.Errorf("perft: job %s runs: %w", id, err)
	}
	byUnit := make(map[string][]Run)
	for _, r := range runs {
		byUnit[r.UnitID] = append(byUnit[r.UnitID], r)
	}
	return recs, byUnit, nil
}

// tally adds (sign +1) or removes (−1) a verdict from the job's counts.
func (j *job) tally(v verdict, sign int) {
	if v.settled {
		j.settled += sign
		if v.agreeing >= 2 {
			j.verified += sign
		}
	}
	if v.disputed {
		j.disputed += sign
		if v.settled {
			j.resolved += sign
		}
	}
}

// findDistrusted collects the identities outvoted in j's settled
// disputes, judging again with each one found until none is new (Load:
// the same set Result built one run at a time).
func (j *job) findDistrusted(maxRuns int) {
	if j.distrusted == nil {
		j.distrusted = map[string]bool{}
	}
	for grew := true; grew; {
		grew = false
		for _, u := range j.units {
			for _, o := range outvotedUnit(u.runs, judgeUnit(u, u.runs, maxRuns, j.distrusted), j.width()) {
				if !j.distrusted[o] {
					j.distrusted[o], grew = true, true
				}
			}
		}
	}
}

// required is how many identities' runs of ours settle u: 2 for a unit
// rechecked (--recheck), else 1. A unit sampled for a cross-check is not
// rechecked as well: the other program's identity is its second witness
// (on a farm of two identities a third would never come).
func required(u *unit) int {
	if u.rec.Verify && !u.rec.CrossCheck {
		return 2
	}
	return 1
}

// contribute adds (sign +1) or removes (−1) a unit's counts times the
// multiplicities to divide and total, and its statistics (when counts
// hold them: width counts per position) times the positions' whole
// multiplicities to stats.
func contribute(u *unit, counts []engine.Count, sign int, divide []*big.Int, total *big.Int, stats []*big.Int) {
	positions := u.job.positions
	width := u.job.width()
	var m, all big.Int
	for i := u.rec.First; i < u.rec.End; i++ {
		at := (i - u.rec.First) * width
		n := counts[at].Big()
		all.SetUint64(0)
		for _, rm := range positions[i].Mult {
			m.SetUint64(rm.N)
			all.Add(&all, &m)
			m.Mul(&m, n)
			if sign < 0 {
				m.Neg(&m)
			}
			divide[rm.Root].Add(divide[rm.Root], &m)
			total.Add(total, &m)
		}
		if sign < 0 {
			all.Neg(&all)
		}
		for k := 1; k < width; k++ {
			m.Mul(&all, counts[at+k].Big())
			stats[k-1].Add(stats[k-1], &m)
		}
	}
}

func newDivide(n int) []*big.Int {
	d := make([]*big.Int, n)
	for i := range d {
		d[i] = new(big.Int)
	}
	return d
}

// ---- finishing ----

// finalChange is the store change that ends j. Caller holds mu.
func (w *Workload) finalChange(j *job, state, errMsg string) *store.JobChange {
	// Total is the final total of a done job and the nodes counted so far
	// of a cancelled or failed one.
	ch := &store.JobChange{State: state, Error: errMsg, FinishedAt: w.cfg.Now(), Total: j.nodesDone.String(),
		Settled: j.settled, Verified: j.verified, Disputed: j.disputed, Resolved: j.resolved}
	if state == store.StateDone {
		ch.Divide = make([]string, len(j.divide))
		for i, d := range j.divide {
			ch.Divide[i] = d.String()
		}
		if j.stats != nil {
			ch.StatsTotal = make([]string, len(j.stats))
			for i, d := range j.stats {
				ch.StatsTotal[i] = d.String()
			}
		}
	}
	return ch
}

// applyFinal updates memory after the store has the final state; the job
// keeps only its record. Caller holds mu (or is loading).
func (w *Workload) applyFinal(j *job, ch *store.JobChange) {
	j.rec.State, j.rec.Error, j.rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	j.rec.Total, j.rec.Divide, j.rec.StatsTotal = ch.Total, ch.Divide, ch.StatsTotal
	j.rec.Settled, j.rec.Verified, j.rec.Disputed, j.rec.Resolved = ch.Settled, ch.Verified, ch.Disputed, ch.Resolved
	if j.crossDone == nil && j.units != nil {
		j.crossDone = crossView(j)
	}
	w.forget(j)
	w.log.Info("job finished", zap.String(logging.JobID, j.rec.ID), zap.String("state", ch.State),
		zap.String("nodes", ch.Total), zap.String("error", ch.Error), zap.Int("verified", ch.Verified))
}

// forget drops a job's units from memory and the job from the running
// list. Caller holds mu.
func (w *Workload) forget(j *job) {
	for _, u := range j.units {
		delete(w.units, u.rec.ID)
	}
	for i, r := range w.running {
		if r == j {
			w.running = append(w.running[:i], w.running[i+1:]...)
			break
		}
	}
	j.units, j.segs, j.more, j.retry, j.positions, j.divide, j.stats = nil, nil, nil, nil, nil, nil, nil
	clear(j.holders)
}

// runningLocked is the running job jobID, or the error that says why there
// is none; w.mu is held.
func (w *Workload) runningLocked(jobID string) (*job, error) {
	j := w.jobs[jobID]
	if j == nil {
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	if j.rec.State != store.StateRunning {
		return nil, apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "job %s is already %s", jobID, j.rec.State)
	}
	return j, nil
}

// Cancel implements core.Workload.
func (w *Workload) Cancel(ctx context.Context, jobID, reason string) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	j, err := w.runningLocked(jobID)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	change := w.finalChange(j, store.StateCancelled, reason)
	w.mu.Unlock()
	if err := w.store.SetJobState(ctx, jobID, change); err != nil {
		return apierr.Store(err)
	}
	w.mu.Lock()
	w.applyFinal(j, change)
	w.mu.Unlock()
	return nil
}
