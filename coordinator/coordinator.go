// Package coordinator runs the cluster's coordinator: it splits perft jobs
// into units, leases units to workers, checks and stores their results,
// settles verification mismatches, and adds up exact totals.
//
// State that matters lives in the store (package store) and is written
// before a worker is acknowledged; the in-memory state is rebuilt from it on
// start, so a coordinator killed at any moment resumes every job. Leases are
// in memory only: after a restart every unsettled unit is open again, and a
// worker that still holds a lease from before gets it back on its next
// heartbeat.
package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/lease"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
)

// Config tunes a Coordinator. Zero values take the defaults.
type Config struct {
	Store  *store.Store
	Logger *zap.Logger
	// LeaseDuration is how long a lease lasts without a heartbeat (30s).
	LeaseDuration time.Duration
	// HeartbeatInterval is what workers are told to use (LeaseDuration/3).
	HeartbeatInterval time.Duration
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
	// Now is the clock (time.Now).
	Now func() time.Time
	// Registerer receives the coordinator's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Games tunes match and SPRT tests (sprtjob.go).
	Games GameConfig
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 30 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = c.LeaseDuration / 3
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
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Coordinator holds the cluster state. Its gRPC faces are WorkerServer and
// JobServer.
type Coordinator struct {
	cfg    Config
	log    *zap.Logger
	store  *store.Store
	bootID string

	// commitMu serialises result commits and job state changes, so the
	// store is written without holding mu (which leases need).
	commitMu sync.Mutex
	mu       sync.Mutex
	jobs     map[string]*jobState
	order    []*jobState // by submission
	units    map[string]*unitState
	workers  map[string]*workerInfo
	leases   *lease.Manager
	workCh   chan struct{} // closed and replaced when work appears
	closed   bool
	// gamesTurn: the next lease offers game pairs before perft units
	// (the two kinds alternate while both wait). Under mu.
	gamesTurn bool
	games     *gameSched
	verify    verifyQueue // distributed verify units (verifyjob.go)

	metrics *metrics
	stop    chan struct{}
	wg      sync.WaitGroup
}

type workerInfo struct {
	id       string
	name     string
	lastSeen time.Time
}

type jobState struct {
	rec       *store.Job
	positions []store.Position
	units     []*unitState
	queue     []*unitState // units that may want a lease, in order
	retry     []*unitState // re-opened units (expired, released, disputed), served first
	divide    []*big.Int
	nodesDone big.Int
	settled   int
	verified  int
	disputed  int // units whose runs disagreed
	resolved  int // disputed units that settled
	changed   chan struct{}
	started   time.Time // when this coordinator run began tracking it
	baseNodes big.Int   // nodes done when tracking began (for the rate)

	// test is set for match and SPRT tests (sprtjob.go).
	test *testState
}

type unitState struct {
	job     *jobState
	rec     store.Unit
	runs    []store.Run
	v       verdict
	counted bool // contribution is in the job's sums
	queued  bool
}

// New loads the store and starts the lease-expiry loop.
func New(ctx context.Context, cfg Config) (*Coordinator, error) {
	cfg.defaults()
	if cfg.Store == nil {
		return nil, fmt.Errorf("coordinator: no store")
	}
	boot := randomHex(4)
	c := &Coordinator{
		cfg:     cfg,
		log:     cfg.Logger,
		store:   cfg.Store,
		bootID:  boot,
		jobs:    make(map[string]*jobState),
		units:   make(map[string]*unitState),
		workers: make(map[string]*workerInfo),
		leases:  lease.New(cfg.LeaseDuration, "l"+boot, []byte(boot)),
		workCh:  make(chan struct{}),
		stop:    make(chan struct{}),
	}
	c.metrics = newMetrics(c, cfg.Registerer)
	if err := c.load(ctx); err != nil {
		return nil, err
	}
	c.wg.Add(1)
	go c.expireLoop()
	return c, nil
}

// Close stops background work and wakes waiting calls. It does not close
// the store.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.stop)
	c.signalWork()
	for _, j := range c.jobs {
		c.notify(j)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// HeartbeatInterval is what workers are told.
func (c *Coordinator) HeartbeatInterval() time.Duration { return c.cfg.HeartbeatInterval }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// load rebuilds memory from the store.
func (c *Coordinator) load(ctx context.Context) error {
	workers, err := c.store.Workers(ctx)
	if err != nil {
		return fmt.Errorf("coordinator: load workers: %w", err)
	}
	for _, w := range workers {
		c.workers[w.ID] = &workerInfo{id: w.ID, name: w.Name}
		c.gameLoadWorker(w)
	}
	jobs, err := c.store.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("coordinator: load jobs: %w", err)
	}
	resumed := 0
	for _, rec := range jobs {
		j := &jobState{rec: rec, changed: make(chan struct{})}
		c.jobs[rec.ID] = j
		c.order = append(c.order, j)
		if isTestKind(rec.Kind) {
			if err := c.loadTest(ctx, j); err != nil {
				return err
			}
			if rec.State == store.StateRunning {
				resumed++
			}
			continue
		}
		if rec.State != store.StateRunning {
			continue
		}
		if err := c.loadRunning(ctx, j); err != nil {
			return err
		}
		resumed++
	}
	c.log.Info("store loaded", zap.Int("jobs", len(jobs)), zap.Int("resumed", resumed), zap.Int("workers", len(workers)))
	return nil
}

func (c *Coordinator) loadRunning(ctx context.Context, j *jobState) error {
	id := j.rec.ID
	var err error
	if j.positions, err = c.store.Positions(ctx, id); err != nil {
		return fmt.Errorf("coordinator: job %s positions: %w", id, err)
	}
	units, err := c.store.Units(ctx, id)
	if err != nil {
		return fmt.Errorf("coordinator: job %s units: %w", id, err)
	}
	runs, err := c.store.Runs(ctx, id)
	if err != nil {
		return fmt.Errorf("coordinator: job %s runs: %w", id, err)
	}
	byUnit := make(map[string][]store.Run)
	for _, r := range runs {
		byUnit[r.UnitID] = append(byUnit[r.UnitID], r)
	}
	j.divide = newDivide(len(j.rec.RootMoves))
	for _, ur := range units {
		u := &unitState{job: j, rec: ur, runs: byUnit[ur.ID]}
		u.v = judge(u.runs, c.required(u), c.cfg.MaxRuns)
		j.units = append(j.units, u)
		c.units[ur.ID] = u
		if u.v.settled {
			c.addContribution(u, u.v.counts, +1)
			u.counted = true
			j.settled++
			if u.v.agreeing >= 2 {
				j.verified++
			}
		}
		if u.v.disputed {
			j.disputed++
			if u.v.settled {
				j.resolved++
			}
		}
		if u.v.want > 0 {
			u.queued = true
			j.queue = append(j.queue, u)
		}
	}
	j.started = c.cfg.Now()
	j.baseNodes.Set(&j.nodesDone)
	if j.settled == len(j.units) {
		// Every unit was settled but the job not closed: close it now.
		return c.finish(ctx, j, store.StateDone, "")
	}
	c.log.Info("job resumed", zap.String(logging.JobID, id), zap.Int("units", len(j.units)),
		zap.Int("settled", j.settled), zap.String("nodes_done", j.nodesDone.String()))
	return nil
}

func (c *Coordinator) required(u *unitState) int {
	if u.rec.Verify {
		return 2
	}
	return 1
}

// addContribution adds (sign +1) or removes (−1) a unit's counts times the
// multiplicities to the job's divide and total.
func (c *Coordinator) addContribution(u *unitState, counts []uint64, sign int) {
	contribute(u, counts, sign, u.job.divide, &u.job.nodesDone)
}

func contribute(u *unitState, counts []uint64, sign int, divide []*big.Int, total *big.Int) {
	positions := u.job.positions
	var m, n big.Int
	for i := u.rec.First; i < u.rec.End; i++ {
		n.SetUint64(counts[i-u.rec.First])
		for _, rm := range positions[i].Mult {
			m.SetUint64(rm.N)
			m.Mul(&m, &n)
			if sign < 0 {
				m.Neg(&m)
			}
			divide[rm.Root].Add(divide[rm.Root], &m)
			total.Add(total, &m)
		}
	}
}

// signalWork wakes Lease calls waiting for work. Caller holds mu.
func (c *Coordinator) signalWork() {
	close(c.workCh)
	c.workCh = make(chan struct{})
}

// notify wakes watchers of j. Caller holds mu.
func (c *Coordinator) notify(j *jobState) {
	close(j.changed)
	j.changed = make(chan struct{})
}

// wants reports whether u should be leased to one more worker.
func (c *Coordinator) wants(u *unitState) bool {
	if u.job.rec.State != store.StateRunning || u.v.settled || u.v.failed {
		return false
	}
	return u.v.want > len(c.leases.ForUnit(u.rec.ID))
}

// eligible reports whether worker w may compute u: verification and
// settlement runs must come from a worker that has not run the unit yet.
func (c *Coordinator) eligible(u *unitState, w string) bool {
	for _, r := range u.runs {
		if r.WorkerID == w {
			return false
		}
	}
	for _, l := range c.leases.ForUnit(u.rec.ID) {
		if l.WorkerID == w {
			return false
		}
	}
	return true
}

// requeue puts u back in line (ahead of fresh units) if it wants a lease.
func (c *Coordinator) requeue(u *unitState) {
	if u.queued || !c.wants(u) {
		return
	}
	u.queued = true
	u.job.retry = append(u.job.retry, u)
	c.signalWork()
}

// pick chooses a unit for worker w and grants a lease. Caller holds mu.
func (c *Coordinator) pick(w string, now time.Time) (*unitState, lease.Lease, bool) {
	for _, j := range c.order {
		if j.rec.State != store.StateRunning {
			continue
		}
		for _, q := range []*[]*unitState{&j.retry, &j.queue} {
			if u, l, ok := c.take(q, w, now); ok {
				return u, l, true
			}
		}
	}
	return nil, lease.Lease{}, false
}

// take leases the first unit of *q that wants a lease and that w may run.
// Units that want none are dropped from the front; popping the front is
// O(1), so the common case costs nothing however long the queue.
func (c *Coordinator) take(q *[]*unitState, w string, now time.Time) (*unitState, lease.Lease, bool) {
	for len(*q) > 0 && !c.wants((*q)[0]) {
		(*q)[0].queued = false
		*q = (*q)[1:]
	}
	for k, u := range *q {
		if !c.wants(u) || !c.eligible(u, w) {
			continue
		}
		l := c.leases.Grant(u.rec.ID, "", w, now)
		if !c.wants(u) {
			u.queued = false
			if k == 0 {
				*q = (*q)[1:]
			} else {
				*q = append((*q)[:k], (*q)[k+1:]...)
			}
		}
		return u, l, true
	}
	return nil, lease.Lease{}, false
}

func (c *Coordinator) expireLoop() {
	defer c.wg.Done()
	every := min(c.cfg.LeaseDuration/4, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		for _, l := range c.leases.Expire(c.cfg.Now()) {
			c.metrics.leasesExpired.Inc()
			c.log.Warn("lease expired", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, l.UnitID),
				zap.String(logging.WorkerID, l.WorkerID))
			if u := c.units[l.UnitID]; u != nil {
				c.requeue(u)
			}
			c.gameLeaseExpired(l)
			c.verifyRequeue(l.UnitID)
		}
		c.mu.Unlock()
	}
}

// verifyUnit decides deterministically whether unit i is verified: exactly
// floor(n × fraction) of n units, spread evenly over the job.
func verifyUnit(i int, fraction float64) bool {
	if fraction <= 0 {
		return false
	}
	if fraction >= 1 {
		return true
	}
	return math.Floor(float64(i+1)*fraction) > math.Floor(float64(i)*fraction)
}

// finish closes a job in the store and in memory. Caller holds mu.
func (c *Coordinator) finish(ctx context.Context, j *jobState, state, errMsg string) error {
	change := c.finalChange(j, state, errMsg)
	if err := c.store.SetJobState(ctx, j.rec.ID, change); err != nil {
		return err
	}
	c.applyFinal(j, change)
	return nil
}

func (c *Coordinator) finalChange(j *jobState, state, errMsg string) *store.JobChange {
	ch := &store.JobChange{State: state, Error: errMsg, FinishedAt: c.cfg.Now()}
	if state == store.StateDone {
		ch.Total = j.nodesDone.String()
		ch.Divide = make([]string, len(j.divide))
		for i, d := range j.divide {
			ch.Divide[i] = d.String()
		}
	}
	return ch
}

// applyFinal updates memory after the store has the final state.
func (c *Coordinator) applyFinal(j *jobState, ch *store.JobChange) {
	j.rec.State, j.rec.Error, j.rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	j.rec.Total, j.rec.Divide = ch.Total, ch.Divide
	for _, u := range j.units {
		for _, l := range c.leases.ForUnit(u.rec.ID) {
			c.leases.End(l.ID)
		}
		delete(c.units, u.rec.ID)
	}
	c.gameFinal(j)
	j.units, j.queue, j.retry, j.positions = nil, nil, nil, nil
	c.log.Info("job finished", zap.String(logging.JobID, j.rec.ID), zap.String("state", ch.State),
		zap.String("nodes", ch.Total), zap.String("error", ch.Error))
	c.notify(j)
}

func newDivide(n int) []*big.Int {
	d := make([]*big.Int, n)
	for i := range d {
		d[i] = new(big.Int)
	}
	return d
}
