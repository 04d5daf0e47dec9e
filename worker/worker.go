// Package worker is the cluster's worker: it registers with a coordinator,
// leases units, runs them on all its cores, heartbeats its leases, and
// submits results. It runs every kind's units (kinds/NAME: game pairs of
// tests and tunes through worker/gamepairs, perft, verify, datagen, epd)
// through the Runner the kind registers (runner.go), whichever field of
// the unit carries them, and offers what the registered runners offer,
// with what its engines are (the embedded engine, Syzygy tables, uploaded
// engines and nets: engines.go, artifacts.go). A runner keeps what it
// needs across units on one worker (perft's hash table, verify's engine
// processes, the movegen gate's verdicts) in the Instance its New makes
// from the worker's Settings, and reaches the worker through its Host
// (engines made ready, the cores budget, metrics).
//
// A worker never loses a result it computed to a passing failure: results
// wait in an outbox until the coordinator acknowledges them, across
// coordinator restarts (each result is submitted on its own and retried
// under clusterclient's policy, so one result never holds up the others; a
// coordinator that forgot the worker gets a new registration). A result the
// coordinator refuses for good is dropped with a log line and its lease
// given back with the reason. Every call has a deadline. On shutdown
// (context cancelled, e.g. SIGTERM) the worker stops leasing, lets running
// units finish within a grace period, gives back the leases of units it
// could not finish, delivers its outbox, and returns.
package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/base/buildinfo"
	"github.com/arbiter-chess/arbiter/spec/matchspec"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// Config configures a worker.
type Config struct {
	// Conn is a client connection to the coordinator (token credentials
	// and TLS already set up, see client/clusterclient).
	Conn grpc.ClientConnInterface
	// Name is shown in the coordinator's logs (default: host name).
	Name string
	// Threads is the number of units computed at once (default: all CPUs).
	Threads int
	// HashMB is the size of the hash table shared by all threads (default
	// 64; Settings.HashMB): kinds/perft's runner makes its table of it, and
	// a statistics table of the same size the first time a unit asks.
	HashMB int
	// Grace is how long running units may take to finish after shutdown
	// begins before their leases are released (default 30s).
	Grace time.Duration
	// Table, when set, is used instead of a new table of HashMB (workers in
	// one process, as in `arbiter up`, can share one); StatsTable likewise
	// for statistics (Settings.Table, Settings.StatsTable).
	Table      *engine.PerftTable
	StatsTable *engine.PerftStatsTable
	// Logger (default: none).
	Logger *zap.Logger
	// VerifyEngines are the programs its operator named (--verify-engine):
	// kinds/verify's runner answers verify units with them (offering
	// "verify-engine:NAME" each) and kinds/perft's cross-checks perft
	// batches with them (Settings.VerifyEngines).
	VerifyEngines []verifyproto.LocalEngine
	// Registerer receives the worker's metrics (worker/metrics.go); nil: none.
	Registerer prometheus.Registerer
	// BenchDepth is the depth of the start-up bench whose speed is reported
	// for time-control scaling (default 7, about 0.1 s; negative: no bench).
	BenchDepth int
	// BenchNPS, when set, is reported instead of running the bench (at
	// most matchspec.MaxNPS): machines of one known speed, or a clock played
	// unscaled by giving the test's reference nps.
	BenchNPS uint64
	// Retry is the backoff between failed calls (no Base and Cap:
	// clusterclient.Persistent). Keep it without a budget: a worker
	// outlasts any coordinator outage.
	Retry clusterclient.Policy
	// Builtin makes the embedded engine's players (match/builtin.New;
	// Settings.Builtin); nil: the worker does not offer the builtin engine.
	Builtin match.BuiltinFactory
	// DataDir holds the cache of uploaded engines (downloads, builds) and
	// their working directories (worker/artifacts.go); "": the worker runs
	// no uploaded engines.
	DataDir string
	// CacheBytes caps the cache (DefaultCacheBytes).
	CacheBytes int64
	// BuildTimeout bounds one source build (DefaultBuildTimeout).
	BuildTimeout time.Duration
	// Limits are the resource limits of uploaded engines (zero fields:
	// sandbox.DefaultLimits).
	Limits sandbox.Limits
	// SandboxWrapper is the program that runs the sandbox (a binary whose
	// main calls sandbox.RunIfWrapper; default: this process's binary).
	SandboxWrapper string
	// Unsandboxed runs uploaded engines without the sandbox (where it has
	// none, or the operator isolates the worker otherwise).
	Unsandboxed bool
	// AllowUploads runs uploaded engines and builds (in the sandbox, with
	// a DataDir); false: the worker runs none and does not offer to.
	AllowUploads bool
	// Engines are the installed engines clients may name (cmd=NAME);
	// nil: none, a test naming one is refused (engineallow).
	Engines *engineallow.List
	// Syzygy are the worker's tablebases (--syzygy DIR): it advertises
	// capability.Syzygy(n) up to their most pieces, and the runners
	// adjudicate the tests that ask for it with them (Settings.Syzygy);
	// nil: it is offered no such test.
	Syzygy *syzygy.Tablebase
}

// EngineVersion names the embedded engine build, with the VCS revision
// when the binary carries one, so that the coordinator's list of workers
// tells which build each machine runs.
func EngineVersion() string {
	return "arbiter-engine " + buildinfo.Read().Short()
}

type result struct {
	leaseID string
	unitID  string
	jobID   string
	elapsed time.Duration
	// answer is the Submit with its result set (whatever the unit's
	// kind); deliver fills in who submits it, for which lease and unit.
	answer *arbiterv1.SubmitRequest

	sending bool // a delivery goroutine owns it (outboxLoop)
}

type held struct {
	leaseID, unitID, jobID string
	cancel                 context.CancelFunc
}

// Worker is a running worker.
type Worker struct {
	arts   *artifactCache // nil: no uploaded engines
	cfg    Config
	log    *zap.Logger
	worker arbiterv1.WorkerServiceClient
	// runners are the registered runners on this worker, by the full name
	// of the payload type they take (runner.go); read-only after New.
	runners map[protoreflect.FullName]started

	policy clusterclient.Policy
	// regSem (one slot) lets one goroutine register at a time without
	// holding mu across the RPCs and their backoff: Ready and the other
	// loops keep answering while the coordinator is away.
	regSem chan struct{}

	mu        sync.Mutex
	id        string
	hbEvery   time.Duration
	computing map[string]*held // by lease id
	outbox    []*result
	outboxCh  chan struct{}
	stats     Stats
	metrics   *metrics

	// bench is the start-up bench's measure (bench.go).
	bench bench
	// cores are the cores running games hold (cores.go).
	cores coreBudget
}

// Stats counts what a worker did.
type Stats struct {
	Units     int
	Nodes     uint64
	Released  int
	Discarded int
}

// New prepares a worker; Run starts it.
func New(cfg Config) (*Worker, error) {
	if cfg.Conn == nil {
		return nil, errors.New("worker: no coordinator connection")
	}
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.NumCPU()
	}
	if cfg.HashMB < 0 {
		return nil, fmt.Errorf("worker: hash size %d MB is negative", cfg.HashMB)
	}
	if cfg.BenchNPS > matchspec.MaxNPS {
		return nil, fmt.Errorf("worker: bench nps %d: at most %d", cfg.BenchNPS, uint64(matchspec.MaxNPS))
	}
	if cfg.HashMB == 0 {
		cfg.HashMB = 64
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Name == "" {
		cfg.Name, _ = os.Hostname()
	}
	if cfg.Retry.Base == 0 && cfg.Retry.Cap == 0 {
		cfg.Retry = clusterclient.Persistent
	}
	arts, err := newArtifactCache(cfg, cfg.Logger, newArtifactMetrics(cfg.Registerer))
	if err != nil {
		return nil, err
	}
	w := &Worker{
		arts:      arts,
		cfg:       cfg,
		policy:    cfg.Retry,
		regSem:    make(chan struct{}, 1),
		log:       cfg.Logger,
		worker:    arbiterv1.NewWorkerServiceClient(cfg.Conn),
		computing: make(map[string]*held),
		outboxCh:  make(chan struct{}, 1),
		hbEvery:   5 * time.Second,
		metrics:   newMetrics(cfg.Registerer, cfg.Threads),
	}
	if w.runners, err = startRunners(w.settings()); err != nil {
		return nil, err
	}
	return w, nil
}

// Stats returns a copy of the counters.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// leaseWait is how long a Lease call asks the coordinator to hold it open
// for work (long poll).
const leaseWait = 2 * time.Second

// register obtains a worker id, retrying while the coordinator is away.
// Only one goroutine registers at a time; the others wait (or give up
// with their ctx) and then see the new id. stale is the id the caller
// found unknown ("" at start).
func (w *Worker) register(ctx context.Context, stale string) (string, error) {
	select {
	case w.regSem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-w.regSem }()
	if id := w.workerID(); id != "" && id != stale {
		return id, nil
	}
	req := &arbiterv1.RegisterRequest{
		Name: w.cfg.Name,
		Capabilities: &arbiterv1.WorkerCapabilities{
			Cores: uint32(w.cfg.Threads), HashMb: uint32(w.cfg.HashMB), EngineVersion: EngineVersion(),
			Capabilities: w.capabilities(), Hostname: hostname(),
			BenchNps: w.bench.nps, BenchSignature: w.bench.signature, Platform: Platform(),
		},
	}
	var resp *arbiterv1.RegisterResponse
	p := w.policy.WithAttemptTimeout(clusterclient.ShortTimeout).WithOnRetry(func(attempt int, err error, _ time.Duration) {
		if attempt == 0 || attempt%10 == 0 {
			w.log.Warn("coordinator unavailable, retrying", zap.Error(err), zap.Int("attempt", attempt))
		}
	})
	err := clusterclient.Do(ctx, p, func(ctx context.Context) error {
		var err error
		resp, err = w.worker.Register(ctx, req)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("register: %w", err)
	}
	w.mu.Lock()
	w.id = resp.GetWorkerId()
	if hb := resp.GetHeartbeatInterval().AsDuration(); hb > 0 {
		w.hbEvery = hb
	}
	w.mu.Unlock()
	w.log.Info("registered", zap.String(logging.WorkerID, resp.GetWorkerId()), zap.Int("threads", w.cfg.Threads),
		zap.Int("hash_mb", w.cfg.HashMB))
	return resp.GetWorkerId(), nil
}

// capabilities is what the worker offers: what its engines are (the
// embedded engine, tables, uploaded engines and nets), and what the
// registered runners offer (runner.go).
func (w *Worker) capabilities() []string {
	caps := w.engineCapabilities()
	caps = append(caps, w.arts.capabilities()...)
	return append(caps, w.Capabilities()...)
}

// unknownWorker reports the coordinator's "unknown worker" answer (it lost
// or never had our registration): register again. A coordinator that
// sends no reason answers NotFound for that alone on Lease, Heartbeat and
// Release; on Submit, NotFound may also mean an unknown unit (see
// classifySubmit).
func unknownWorker(err error) bool {
	switch grpcerr.Reason(err) {
	case apierr.ReasonUnknownWorker:
		return true
	case "":
		return clusterclient.Code(err) == codes.NotFound
	}
	return false
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func (w *Worker) workerID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.id
}

// Run works until ctx is cancelled, then shuts down gracefully. It returns
// nil after a clean shutdown, or the error that made it give up (a refused
// token, for instance).
func (w *Worker) Run(ctx context.Context) error {
	// Calls keep going during shutdown (releases, outbox) on their own
	// context, bounded below.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	defer closeRunners(w.runners)
	w.runBench()
	if _, err := w.register(ctx, ""); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fatal := make(chan error, w.cfg.Threads+2)
	var slots, helpers sync.WaitGroup
	for i := 0; i < w.cfg.Threads; i++ {
		slots.Add(1)
		go func() {
			defer slots.Done()
			if err := w.slot(ctx, bg); err != nil {
				fatal <- err
			}
		}()
	}
	helpers.Add(2)
	go func() { defer helpers.Done(); w.heartbeatLoop(bg) }()
	go func() { defer helpers.Done(); w.outboxLoop(bg) }()

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-fatal:
	}
	// Shutdown: slots stop leasing at once (ctx). Running units get Grace.
	w.log.Info("shutting down", zap.Duration("grace", w.cfg.Grace))
	done := make(chan struct{})
	go func() { slots.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.Grace):
		w.mu.Lock()
		for _, h := range w.computing {
			h.cancel()
		}
		w.mu.Unlock()
		<-done
	}
	// Deliver what was computed, for at most Grace more.
	flushCtx, cancel := context.WithTimeout(bg, w.cfg.Grace)
	defer cancel()
	for {
		w.mu.Lock()
		n := len(w.outbox)
		w.mu.Unlock()
		if n == 0 || flushCtx.Err() != nil {
			if n > 0 {
				w.log.Error("shutting down with undelivered results", zap.Int("results", n))
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopBG()
	helpers.Wait()
	return runErr
}

// slot leases and runs units one after another until ctx ends.
func (w *Worker) slot(ctx, bg context.Context) error {
	b := clusterclient.NewBackoff(w.policy)
	for ctx.Err() == nil {
		id := w.workerID()
		// The call runs on bg, not ctx: cancelling it could lose a lease the
		// coordinator has already granted. Shutdown waits for the short
		// long-poll instead and gives back a lease that arrives too late.
		start := time.Now()
		cctx, cancel := context.WithTimeout(bg, leaseWait+clusterclient.LongPollMargin)
		resp, err := w.worker.Lease(cctx, &arbiterv1.LeaseRequest{WorkerId: id, Wait: durationpb.New(leaseWait)})
		cancel()
		w.metrics.leaseCall(start, leaseWait, resp, err)
		if err == nil && ctx.Err() != nil {
			if l := resp.GetLease(); l != nil {
				w.release(bg, l.GetLeaseId(), "worker shutting down")
			}
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if unknownWorker(err) {
				if _, err := w.register(ctx, id); err != nil && ctx.Err() == nil {
					return err
				}
				continue
			}
			switch {
			case clusterclient.Retryable(err):
				if b.Attempt() == 0 {
					w.log.Warn("lease failed, retrying", zap.Error(err))
				}
			case clusterclient.KindOf(err) == clusterclient.Failed:
				// A coordinator failure (Internal, Unknown): nothing is
				// held, so nothing wedges; a worker that quit would take
				// its cores out of the farm until someone restarts it.
				w.log.Error("lease failed; trying again later", zap.Error(err))
			default:
				// A refused credential or role, a request it calls bad:
				// asking again cannot help.
				return fmt.Errorf("lease: %w", err)
			}
			if !b.Wait(ctx, err) {
				return nil
			}
			continue
		}
		b.Reset()
		l := resp.GetLease()
		if l == nil {
			continue
		}
		w.run(bg, l)
	}
	return nil
}

// run runs one leased unit and puts the result in the outbox, or releases
// the lease when it was cut short or cannot run here.
func (w *Worker) run(bg context.Context, l *arbiterv1.Lease) {
	unit := l.GetUnit()
	log := w.log.With(zap.String(logging.LeaseID, l.GetLeaseId()), zap.String(logging.UnitID, unit.GetUnitId()),
		zap.String(logging.JobID, unit.GetJobId()))
	cctx, cancel := context.WithCancel(bg)
	defer cancel()
	h := &held{leaseID: l.GetLeaseId(), unitID: unit.GetUnitId(), jobID: unit.GetJobId(), cancel: cancel}
	w.mu.Lock()
	w.computing[h.leaseID] = h
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.computing, h.leaseID)
		w.mu.Unlock()
	}()
	w.runUnit(cctx, bg, h, unit, log)
}

// queueResult keeps a computed result until the coordinator acknowledges
// it, and wakes the submit loop.
func (w *Worker) queueResult(r *result, nodes uint64) {
	w.mu.Lock()
	w.stats.Units++
	w.stats.Nodes += nodes
	w.outbox = append(w.outbox, r)
	w.mu.Unlock()
	select {
	case w.outboxCh <- struct{}{}:
	default:
	}
}

// release gives a lease back, saying why. One attempt: if it fails the
// lease expires and is re-issued anyway.
func (w *Worker) release(ctx context.Context, leaseID, reason string) {
	cctx, cancel := context.WithTimeout(ctx, clusterclient.ShortTimeout)
	defer cancel()
	w.mu.Lock()
	w.stats.Released++
	w.mu.Unlock()
	if _, err := w.worker.Release(cctx, &arbiterv1.ReleaseRequest{WorkerId: w.workerID(), LeaseId: leaseID, Reason: reason}); err != nil {
		w.log.Warn("release failed", zap.String(logging.LeaseID, leaseID), zap.Error(err))
	}
}

// outboxLoop hands each new result of the outbox to its own delivery, so
// that a result the coordinator keeps failing never holds up the others.
// It returns when ctx ends and every delivery has stopped.
func (w *Worker) outboxLoop(ctx context.Context) {
	var deliveries sync.WaitGroup
	defer deliveries.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.outboxCh:
		}
		w.mu.Lock()
		var fresh []*result
		for _, r := range w.outbox {
			if !r.sending {
				r.sending = true
				fresh = append(fresh, r)
			}
		}
		w.mu.Unlock()
		for _, r := range fresh {
			deliveries.Add(1)
			go func() {
				defer deliveries.Done()
				w.deliver(ctx, r)
			}()
		}
	}
}

// What to do after a failed Submit.
type submitAction int

const (
	submitRetry      submitAction = iota // keep the result, try again later
	submitReregister                     // register again, then try again
	submitRefused                        // the coordinator will never take it
)

// classifySubmit decides what a failed Submit by worker id calls for.
func (w *Worker) classifySubmit(ctx context.Context, id string, err error) submitAction {
	switch {
	case grpcerr.Reason(err) == apierr.ReasonUnknownWorker:
		return submitReregister
	case grpcerr.Reason(err) == "" && clusterclient.Code(err) == codes.NotFound:
		// A coordinator without reasons says NotFound for an unknown
		// worker and for an unknown unit alike. A heartbeat names no
		// unit, so its answer tells the two apart.
		cctx, cancel := context.WithTimeout(ctx, clusterclient.ShortTimeout)
		_, herr := w.worker.Heartbeat(cctx, &arbiterv1.HeartbeatRequest{WorkerId: id})
		cancel()
		switch {
		case herr == nil:
			return submitRefused
		case clusterclient.Code(herr) == codes.NotFound:
			return submitReregister
		}
		return submitRetry
	case clusterclient.Retryable(err):
		return submitRetry
	}
	return submitRefused
}

// deliver submits one result until the coordinator acknowledges or
// refuses it, or ctx ends (the result then stays in the outbox).
func (w *Worker) deliver(ctx context.Context, r *result) {
	log := w.log.With(zap.String(logging.UnitID, r.unitID), zap.String(logging.JobID, r.jobID), zap.String(logging.LeaseID, r.leaseID))
	b := clusterclient.NewBackoff(w.policy)
	for {
		id := w.workerID()
		// Only this delivery touches r.answer (r.sending), so filling it
		// in again on each attempt races with nothing.
		req := r.answer
		req.WorkerId, req.LeaseId, req.UnitId, req.Elapsed = id, r.leaseID, r.unitID, durationpb.New(r.elapsed)
		cctx, cancel := context.WithTimeout(ctx, clusterclient.SubmitTimeout)
		resp, err := w.worker.Submit(cctx, req)
		cancel()
		if err == nil {
			if o := resp.GetOutcome(); o == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH {
				log.Warn("result disagrees with another worker's; the coordinator settles it")
			} else if o == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED {
				w.mu.Lock()
				w.stats.Discarded++
				w.mu.Unlock()
			}
			w.dropOutbox(r)
			return
		}
		if ctx.Err() != nil {
			return
		}
		switch w.classifySubmit(ctx, id, err) {
		case submitReregister:
			if _, err := w.register(ctx, id); err != nil {
				if ctx.Err() == nil {
					log.Error("cannot register again; keeping the result", zap.Error(err))
				}
				return
			}
		case submitRetry:
			if b.Attempt() == 0 {
				log.Warn("submit failed; keeping the result and retrying", zap.Error(err))
			}
			if !b.Wait(ctx, err) {
				return
			}
		case submitRefused:
			// Retrying cannot help (a malformed or unwanted result, a
			// coordinator bug): free the unit for someone else now rather
			// than keep its lease alive with heartbeats forever.
			log.Error("result refused; dropping it and releasing its lease", zap.Error(err),
				zap.String("reason", grpcerr.Reason(err)))
			w.mu.Lock()
			w.stats.Discarded++
			w.mu.Unlock()
			w.dropOutbox(r)
			w.release(ctx, r.leaseID, "result refused: "+truncate(grpcerr.Message(err), 200))
			return
		}
	}
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func (w *Worker) dropOutbox(r *result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, x := range w.outbox {
		if x == r {
			w.outbox = append(w.outbox[:i], w.outbox[i+1:]...)
			return
		}
	}
}

// heartbeatLoop extends every lease the worker holds, computing or waiting
// in the outbox, and stops units whose job is gone.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	for {
		w.mu.Lock()
		every := w.hbEvery
		var hs []*arbiterv1.HeldLease
		for _, h := range w.computing {
			hs = append(hs, &arbiterv1.HeldLease{LeaseId: h.leaseID, UnitId: h.unitID})
		}
		for _, r := range w.outbox {
			hs = append(hs, &arbiterv1.HeldLease{LeaseId: r.leaseID, UnitId: r.unitID})
		}
		w.mu.Unlock()
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if len(hs) == 0 {
			continue
		}
		id := w.workerID()
		cctx, cancel := context.WithTimeout(ctx, min(every, clusterclient.ShortTimeout))
		resp, err := w.worker.Heartbeat(cctx, &arbiterv1.HeartbeatRequest{WorkerId: id, Leases: hs})
		cancel()
		w.metrics.heartbeatCall(err)
		if err != nil {
			if unknownWorker(err) {
				w.register(ctx, id)
			} else if ctx.Err() == nil {
				w.log.Warn("heartbeat failed", zap.Error(err))
			}
			continue
		}
		for _, st := range resp.GetLeases() {
			if st.GetState() != arbiterv1.LeaseState_LEASE_STATE_CANCELLED {
				continue
			}
			w.mu.Lock()
			if h := w.computing[st.GetLeaseId()]; h != nil {
				w.log.Info("unit no longer needed; stopping", zap.String(logging.LeaseID, h.leaseID), zap.String(logging.UnitID, h.unitID))
				h.cancel()
			}
			w.mu.Unlock()
		}
	}
}
