// Package core is the coordinator's core: workers, leases, the clock,
// scheduling between jobs of every kind, and the one place where a result is
// checked against its lease. Each kind of work (perft, game-pair tests,
// verify sessions, ...) is a Workload plugged into it. The core speaks no
// gRPC: the API layer (package grpcapi) translates requests into calls on
// the core and its domain errors (package apierr) into statuses.
//
// Invariants kept here:
//
//  1. A result counts only from its lease holder. Submit hands a result to
//     its workload only when the worker id belongs to the calling identity
//     and either a live lease with that id is held by that worker for that
//     unit, or the lease id carries this coordinator's signature for that
//     unit and worker (a late result, or one from before a restart). Any
//     other result is refused with NOT_LEASE_HOLDER, counted and recorded
//     as an incident of the worker, and never reaches a workload.
//  2. Nothing a peer sends is a loop bound. A heartbeat is answered in
//     O(len(held)) with len(held) capped; an unknown lease id costs one
//     signature check; unit ids are only looked up, never enumerated.
//  3. Leases live in memory. After a restart every unsettled unit is open
//     again; a worker still holding a signed lease gets it back on its next
//     heartbeat if its workload still wants the unit from it (Adopt).
//  4. Lock order: Core.mu, then a workload's own lock. The core never holds
//     mu across a store write or a workload's Result, so leases and
//     heartbeats go on while results are committed. Registry and wake-up
//     channels have their own small locks, taken last.
//
// The core is driven by its caller and its clock: Tick expires leases (the
// coordinator runs it on a ticker; tests call it with a fake clock).
package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/lease"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Store is what the core keeps durably: workers and incidents.
type Store interface {
	Workers(ctx context.Context) ([]store.Worker, error)
	PutWorker(ctx context.Context, w store.Worker) error
	AddEvents(ctx context.Context, events []store.Event) error
}

// Config tunes a Core. Zero values take the defaults.
type Config struct {
	Store  Store
	Logger *zap.Logger
	// Now is the clock (time.Now).
	Now func() time.Time
	// LeaseDuration is how long a lease lasts without a heartbeat (30s).
	LeaseDuration time.Duration
	// HeartbeatInterval is what workers are told to use (LeaseDuration/3).
	HeartbeatInterval time.Duration
	// LeaseKey signs lease ids; keep it across restarts (the coordinator
	// stores it). Empty: a random key, so leases do not survive a restart.
	LeaseKey []byte
	// Registerer receives the core's metrics; nil registers none.
	Registerer prometheus.Registerer
	// MaxWorkersPerIdentity bounds the workers one credential registers
	// (DefaultMaxWorkersPerIdentity); the coordinator's
	// --max-workers-per-identity.
	MaxWorkersPerIdentity int
	// Quota, when set, paces each identity's submits.
	Quota *quota.Gate
	// Approvals, when set, holds the jobs of submitters it names until an
	// approver approves them (approvals.go).
	Approvals Approvals
	// Auditor, when set, records who cancelled, changed, resumed,
	// rescheduled, approved or refused a job and who blocked a worker
	// (recordAudit).
	Auditor Auditor
}

// DefaultMaxWorkersPerIdentity is the worker ids one credential may
// register when the admin sets no limit: a farm's hosts that share one
// worker token, each with its own name.
const DefaultMaxWorkersPerIdentity = 1024

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 30 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = c.LeaseDuration / 3
	}
	if len(c.LeaseKey) == 0 {
		c.LeaseKey = []byte(randomHex(32))
	}
	if c.MaxWorkersPerIdentity <= 0 {
		c.MaxWorkersPerIdentity = DefaultMaxWorkersPerIdentity
	}
}

// Limits on what one request may carry.
const (
	// MaxHeldLeases bounds the leases one heartbeat may name.
	MaxHeldLeases = 4096
	// MaxNameBytes bounds worker names and release reasons.
	MaxNameBytes = 200
	// MaxTags bounds a worker's capability strings.
	MaxTags = 256
	// MaxLeaseWait bounds how long a Lease call is held open.
	MaxLeaseWait = 10 * time.Second
)

// Core is the coordinator's core. Its methods are safe for concurrent use.
type Core struct {
	cfg   Config
	log   *zap.Logger
	store Store

	// creating counts, by submitter, the creates in progress that hold a
	// place among its running jobs (reserveRunning).
	creatingMu sync.Mutex
	creating   map[string]int

	workloads []Workload
	byKind    map[string]Workload

	mu      sync.Mutex
	workers map[string]*Worker            // by id
	byOwner map[string]map[string]*Worker // owner → name → worker
	// poolSize is len(byOwner[owner]), under a lock of its own
	// (WorkersOf).
	poolMu   sync.Mutex
	poolSize map[string]int
	leases   *lease.Manager
	closed   bool
	cands    []Candidate // scratch for pick, under mu
	// held are the jobs waiting for approval; creatingHeld counts the
	// creates of such jobs in progress (approvals.go).
	held         map[string]bool
	creatingHeld int

	// blocked holds the blocked workers and identities (block.go), under
	// mu; blockMu orders their changes.
	blocked map[string]Block
	blockMu sync.Mutex

	wake      wakeup
	reg       registry
	metrics   *metrics
	incidents limiter
}

// New returns a core serving workloads; call Load before serving.
func New(cfg Config, workloads ...Workload) *Core {
	cfg.defaults()
	c := &Core{
		cfg:       cfg,
		log:       cfg.Logger,
		store:     cfg.Store,
		creating:  map[string]int{},
		workloads: workloads,
		byKind:    make(map[string]Workload),
		workers:   make(map[string]*Worker),
		byOwner:   make(map[string]map[string]*Worker),
		poolSize:  make(map[string]int),
		held:      make(map[string]bool),
		leases:    lease.New(cfg.LeaseDuration, "l"+randomHex(4), cfg.LeaseKey),
	}
	c.wake.init()
	c.reg.init()
	c.incidents.init(incidentBurst, incidentWindow)
	for _, wl := range workloads {
		c.byKind[wl.Kind()] = wl
	}
	c.metrics = newMetrics(c, cfg.Registerer)
	return c
}

// Host is what workloads are given to signal the core.
func (c *Core) Host() Host { return host{c} }

type host struct{ c *Core }

func (h host) WorkAvailable()            { h.c.wake.signal() }
func (h host) JobChanged(jobID string)   { h.c.reg.changed(jobID) }
func (h host) EndJobLeases(jobID string) { h.c.EndJobLeases(jobID) }
func (h host) Ready() error              { return h.c.Ready() }

func (h host) LiveWorkers(tag string) int {
	n := 0
	h.live(tag, func(*Worker) { n++ })
	return n
}

func (h host) LiveIdentities(tag string) int { return h.LiveIdentitiesFit(tag, nil) }

func (h host) LiveIdentitiesFit(tag string, fits func(Caps) bool) int {
	owners := map[string]bool{}
	h.live(tag, func(w *Worker) {
		if fits == nil || fits(w.Caps) {
			owners[w.Owner] = true
		}
	})
	return len(owners)
}

// live calls f, under the core's lock, for each worker with capability
// tag seen within the last lease duration, holding a lease or waiting in
// Lease now.
func (h host) live(tag string, f func(*Worker)) {
	c := h.c
	since := c.cfg.Now().Add(-c.cfg.LeaseDuration)
	c.mu.Lock()
	defer c.mu.Unlock()
	busy := map[string]bool{}
	for _, l := range c.leases.All() {
		busy[l.WorkerID] = true
	}
	for _, w := range c.workers {
		if w.Has(tag) && (busy[w.ID] || w.waiting > 0 || w.lastSeen.After(since)) {
			f(w)
		}
	}
}

// Workloads are the workloads the core serves, in the order it asks them.
func (c *Core) Workloads() []Workload { return slices.Clone(c.workloads) }

// Load reads workers and every workload's jobs from the store.
func (c *Core) Load(ctx context.Context) error {
	if c.store != nil {
		ws, err := c.store.Workers(ctx)
		if err != nil {
			return fmt.Errorf("core: load workers: %w", err)
		}
		c.mu.Lock()
		for _, sw := range ws {
			w := workerFromStore(sw)
			c.addWorker(w)
		}
		c.mu.Unlock()
		if err := c.loadBlocks(ctx); err != nil {
			return err
		}
	}
	for _, wl := range c.workloads {
		refs, err := wl.Load(ctx)
		if err != nil {
			return fmt.Errorf("core: load %s: %w", wl.Kind(), err)
		}
		for _, r := range refs {
			c.reg.add(r, wl)
		}
	}
	if err := c.loadHeld(ctx); err != nil {
		return err
	}
	c.log.Info("store loaded", zap.Int("jobs", c.reg.len()), zap.Int("workers", len(c.workers)))
	return nil
}

// Close wakes every waiting call; later calls fail with SHUTTING_DOWN.
func (c *Core) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wake.signal()
	c.reg.closeAll()
}

// Ready is nil while the core serves.
func (c *Core) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errShuttingDown
	}
	return nil
}

var errShuttingDown = apierr.New(apierr.Unavailable, apierr.ReasonShuttingDown, "coordinator shutting down")

// LeaseDuration is how long a lease lasts without a heartbeat.
func (c *Core) LeaseDuration() time.Duration { return c.cfg.LeaseDuration }

// HeartbeatInterval is what workers are told.
func (c *Core) HeartbeatInterval() time.Duration { return c.cfg.HeartbeatInterval }

// Now is the core's clock.
func (c *Core) Now() time.Time { return c.cfg.Now() }

// Tick expires leases whose deadline passed and re-queues their units.
func (c *Core) Tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.leases.Expire(c.cfg.Now()) {
		c.metrics.leasesExpired.Inc()
		c.log.Warn("lease expired", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, l.UnitID),
			zap.String(logging.JobID, l.JobID), zap.String(logging.WorkerID, l.WorkerID))
		if wl := c.workloadOf(l); wl != nil {
			wl.Ended(toLease(l), End{Expired: true})
		}
	}
}

// Run calls Tick until ctx ends.
func (c *Core) Run(ctx context.Context) {
	every := min(c.cfg.LeaseDuration/4, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Tick()
		}
	}
}

// ---- jobs ----

// Create makes a job of a workload kind on behalf of caller.
func (c *Core) Create(ctx context.Context, caller identity.Identity, kind string, spec any) (JobRef, error) {
	if !caller.CanSubmit() {
		return JobRef{}, wrongRole(caller, "submit jobs")
	}
	if err := c.Ready(); err != nil {
		return JobRef{}, err
	}
	wl := c.byKind[kind]
	if wl == nil {
		return JobRef{}, apierr.Invalid("job kind %q is not served here", kind)
	}
	if c.cfg.Quota != nil {
		// Taken before the spec is checked: refused specs cost the
		// coordinator work too.
		if err := c.cfg.Quota.Submit(caller); err != nil {
			return JobRef{}, err
		}
		if lim := c.cfg.Quota.Limits().RunningJobs; lim > 0 && quota.Limited(caller) {
			done, err := c.reserveRunning(caller, lim)
			if err != nil {
				return JobRef{}, err
			}
			defer done()
		}
	}
	hold := false
	if c.cfg.Approvals != nil {
		var err error
		if hold, err = c.cfg.Approvals.Hold(ctx, caller, kind); err != nil {
			return JobRef{}, err
		}
	}
	if !hold {
		ref, err := wl.Create(ctx, spec, caller.Name)
		if err != nil {
			return JobRef{}, err
		}
		c.reg.add(ref, wl)
		c.wake.signal()
		return ref, nil
	}
	return c.createHeld(ctx, caller, wl, spec)
}

// createHeld creates a job that waits for approval: no unit of it is
// offered from the moment the workload has it (mayOffer).
func (c *Core) createHeld(ctx context.Context, caller identity.Identity, wl Workload, spec any) (JobRef, error) {
	c.mu.Lock()
	c.creatingHeld++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.creatingHeld--
		c.mu.Unlock()
	}()
	ref, err := wl.Create(ctx, spec, caller.Name)
	if err != nil {
		return JobRef{}, err
	}
	c.mu.Lock()
	c.held[ref.ID] = true
	c.mu.Unlock()
	c.reg.add(ref, wl)
	if err := c.cfg.Approvals.Requested(ctx, ref.ID, caller.Name); err != nil {
		// Unrecorded, the job would run unapproved after a restart: it
		// does not stay.
		if cerr := wl.Cancel(ctx, ref.ID, "its approval could not be recorded: "+err.Error()); cerr != nil {
			c.log.Error("job left without its approval record", zap.String(logging.JobID, ref.ID), zap.Error(cerr))
		}
		c.mu.Lock()
		delete(c.held, ref.ID)
		c.mu.Unlock()
		return JobRef{}, err
	}
	c.log.Info("job waits for approval", zap.String(logging.JobID, ref.ID), zap.String("submitter", caller.Name))
	return ref, nil
}

// reserveRunning admits one more job of caller while its running jobs and
// the creates of it in progress stay under lim; done ends the
// reservation once the job is in the registry (or refused), so that
// concurrent submits cannot all pass the same count.
func (c *Core) reserveRunning(caller identity.Identity, lim int) (done func(), err error) {
	c.creatingMu.Lock()
	defer c.creatingMu.Unlock()
	if err := quota.Check(caller, c.runningOf(caller.Name)+c.creating[caller.Name], lim, "running jobs", quota.FlagRunningJobs); err != nil {
		return nil, err
	}
	c.creating[caller.Name]++
	return func() {
		c.creatingMu.Lock()
		defer c.creatingMu.Unlock()
		if c.creating[caller.Name]--; c.creating[caller.Name] <= 0 {
			delete(c.creating, caller.Name)
		}
	}, nil
}

// runningOf counts the unfinished jobs submitter owns, of the workloads
// that describe their jobs (Describer).
func (c *Core) runningOf(submitter string) int {
	n := 0
	c.reg.newestFirst(func(id string, wl Workload) bool {
		if d, ok := wl.(Describer); ok {
			if info, ok := d.Describe(id); ok && info.Submitter == submitter && info.State == store.StateRunning {
				n++
			}
		}
		return true
	})
	return n
}

// Job returns a job's snapshot.
func (c *Core) Job(jobID string, full bool) (any, error) {
	wl := c.reg.workload(jobID)
	if wl == nil {
		return nil, unknownJob(jobID)
	}
	snap, ok := wl.Snapshot(jobID, full)
	if !ok {
		return nil, unknownJob(jobID)
	}
	return snap, nil
}

// Jobs returns up to limit snapshots, newest first, that keep passes (nil:
// all), and whether more jobs matched.
func (c *Core) Jobs(limit int, keep func(any) bool) ([]any, bool) {
	var out []any
	more := false
	c.reg.newestFirst(func(id string, wl Workload) bool {
		snap, ok := wl.Snapshot(id, false)
		if !ok || (keep != nil && !keep(snap)) {
			return true
		}
		if len(out) == limit {
			more = true
			return false
		}
		out = append(out, snap)
		return true
	})
	return out, more
}

// JobRef returns a job's reference (its submitter).
func (c *Core) JobRef(jobID string) (JobRef, bool) { return c.reg.ref(jobID) }

// Changed returns a channel closed at the job's next change.
func (c *Core) Changed(jobID string) (<-chan struct{}, error) {
	ch, ok := c.reg.watch(jobID)
	if !ok {
		return nil, unknownJob(jobID)
	}
	return ch, nil
}

// Cancel stops a running job on behalf of caller: its submitter or an
// admin.
func (c *Core) Cancel(ctx context.Context, caller identity.Identity, jobID, reason string) error {
	if err := c.mayManage(ctx, caller, jobID, "cancel"); err != nil {
		return err
	}
	wl := c.reg.workload(jobID)
	if err := wl.Cancel(ctx, jobID, reason); err != nil {
		return err
	}
	c.mu.Lock()
	c.endJobLeases(jobID)
	delete(c.held, jobID)
	c.mu.Unlock()
	c.recordAudit(ctx, caller, "job.cancel", jobID, reason)
	c.reg.changed(jobID)
	return nil
}

// mayManage refuses caller unless it may act on job jobID (verb: "cancel",
// "change", "resume"): a client or admin, and the job's submitter, an
// approver (Approvals.MayApprove) or an admin.
func (c *Core) mayManage(ctx context.Context, caller identity.Identity, jobID, verb string) error {
	if !caller.CanSubmit() {
		return wrongRole(caller, verb+" jobs")
	}
	ref, ok := c.reg.ref(jobID)
	if !ok {
		return unknownJob(jobID)
	}
	if caller.IsAdmin() || ref.Submitter == "" || ref.Submitter == caller.Name {
		return nil
	}
	if c.cfg.Approvals != nil && c.cfg.Approvals.MayApprove(ctx, caller) {
		return nil
	}
	return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
		"job %s was submitted by %s; only its submitter, an approver or an admin may %s it", jobID, ref.Submitter, verb)
}

// workloadOf finds the workload of a lease: by its job, or by asking the
// workloads about its unit (jobs outside the registry, such as verify
// sessions). Caller holds mu.
func (c *Core) workloadOf(l lease.Lease) Workload {
	if wl := c.reg.workload(l.JobID); wl != nil {
		return wl
	}
	wl, _ := c.locate(l.UnitID)
	return wl
}

// endJobLeases ends every lease of a finished job. Caller holds mu.
func (c *Core) endJobLeases(jobID string) {
	for _, l := range c.leases.ForJob(jobID) {
		c.leases.End(l.ID)
		if wl := c.workloadOf(l); wl != nil {
			wl.Ended(toLease(l), End{JobOver: true})
		}
	}
}

// EndJobLeases ends every lease of a job a workload closed on its own (a
// verify session its client closed): heartbeats then say cancelled.
func (c *Core) EndJobLeases(jobID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endJobLeases(jobID)
}

// EndUnitLeases ends every lease of one unit.
func (c *Core) EndUnitLeases(unitID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.leases.ForUnit(unitID) {
		c.leases.End(l.ID)
		if wl := c.workloadOf(l); wl != nil {
			wl.Ended(toLease(l), End{JobOver: true})
		}
	}
}

func unknownJob(id string) error {
	if id == "" {
		return apierr.Invalid("job id missing")
	}
	return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(id))
}

func wrongRole(caller identity.Identity, what string) error {
	return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
		"credential %s has role %s, which may not %s", apierr.Q(caller.Name), caller.Role, what)
}

// Lease is a live lease as workloads see it.
type Lease struct {
	ID       string
	UnitID   string
	JobID    string
	WorkerID string
	Granted  time.Time
	Deadline time.Time
}

func toLease(l lease.Lease) Lease {
	return Lease{ID: l.ID, UnitID: l.UnitID, JobID: l.JobID, WorkerID: l.WorkerID, Granted: l.Granted, Deadline: l.Deadline}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// WorkersOf is the number of worker ids the credential owner has
// registered (the pool a worker credential runs). It takes no lock of the
// core's: the gRPC tap calls it on the connection's reader goroutine,
// which must never wait on c.mu (a holder of c.mu may wait on that very
// connection).
func (c *Core) WorkersOf(owner string) int {
	c.poolMu.Lock()
	defer c.poolMu.Unlock()
	return c.poolSize[owner]
}

// notePool records owner's number of workers for WorkersOf. Caller holds
// mu (the order is mu, then poolMu).
func (c *Core) notePool(owner string) {
	c.poolMu.Lock()
	defer c.poolMu.Unlock()
	if n := len(c.byOwner[owner]); n > 0 {
		c.poolSize[owner] = n
	} else {
		delete(c.poolSize, owner)
	}
}
