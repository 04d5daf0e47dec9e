// Package worker is the cluster's worker: it registers with a coordinator,
// leases units, computes them on all its cores with one shared perft hash
// table, heartbeats its leases, and submits results.
//
// A worker never loses a result it computed: results wait in an outbox until
// the coordinator acknowledges them, across coordinator restarts (calls are
// retried with exponential backoff; a coordinator that forgot the worker gets
// a new registration). On shutdown (context cancelled, e.g. SIGTERM) the
// worker stops leasing, lets running units finish within a grace period,
// gives back the leases of units it could not finish, delivers its outbox,
// and returns.
package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/logging"
	"github.com/arbiter-chess/arbiter/internal/verifyproto"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Config configures a worker.
type Config struct {
	// Conn is a client connection to the coordinator (token credentials
	// and TLS already set up, see internal/clusterclient).
	Conn grpc.ClientConnInterface
	// Name is shown in the coordinator's logs (default: host name).
	Name string
	// Threads is the number of units computed at once (default: all CPUs).
	Threads int
	// HashMB is the perft hash table size shared by all threads (default 64).
	HashMB int
	// Grace is how long running units may take to finish after shutdown
	// begins before their leases are released (default 30s).
	Grace time.Duration
	// Table, when set, is used instead of a new table of HashMB (workers in
	// one process, as in `arbiter up`, can share one).
	Table *engine.PerftTable
	// Logger (default: none).
	Logger *zap.Logger
	// Compute, when set, replaces the engine for a batch (tests use it to
	// inject wrong results). It must honour ctx.
	Compute func(ctx context.Context, batch *arbiterv1.PerftBatch, table *engine.PerftTable) ([]uint64, error)
	// VerifyEngines are the engines under test this worker runs verify
	// units for (advertised as "verify-engine:NAME"; worker/verify.go).
	VerifyEngines []verifyproto.LocalEngine
	// Registerer receives the worker's metrics (worker/metrics.go); nil: none.
	Registerer prometheus.Registerer
	// BenchDepth is the depth of the start-up bench whose speed is reported
	// for time-control scaling (default 7, about 0.1 s; negative: no bench).
	BenchDepth int
	// BenchNPS, when set, is reported instead of running the bench.
	BenchNPS uint64
	// Builtin makes the embedded engine's players for game-pair batches
	// (match/builtin.New); nil: the worker does not offer the builtin engine.
	Builtin match.BuiltinFactory
}

// EngineVersion names the embedded engine build.
func EngineVersion() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "arbiter-engine " + v
}

type result struct {
	leaseID string
	unitID  string
	jobID   string
	counts  []uint64
	verify  *arbiterv1.VerifyUnitResult // set for a verify unit
	elapsed time.Duration

	// games is set for a game-pair batch (games.go).
	games *arbiterv1.GamePairBatchResult
}

type held struct {
	leaseID, unitID, jobID string
	cancel                 context.CancelFunc
}

// Worker is a running worker.
type Worker struct {
	cfg    Config
	log    *zap.Logger
	worker arbiterv1.WorkerServiceClient
	table  *engine.PerftTable

	mu        sync.Mutex
	id        string
	hbEvery   time.Duration
	computing map[string]*held // by lease id
	outbox    []*result
	outboxCh  chan struct{}
	stats     Stats
	verify    *verifyEngines
	metrics   *metrics

	// Game-pair batches (games.go).
	games gameRunner
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
	table := cfg.Table
	if table == nil {
		table = engine.NewPerftTable(cfg.HashMB)
	}
	return &Worker{
		cfg:       cfg,
		log:       cfg.Logger,
		worker:    arbiterv1.NewWorkerServiceClient(cfg.Conn),
		table:     table,
		computing: make(map[string]*held),
		outboxCh:  make(chan struct{}, 1),
		hbEvery:   5 * time.Second,
		verify:    newVerifyEngines(cfg.VerifyEngines),
		metrics:   newMetrics(cfg.Registerer, cfg.Threads),
	}, nil
}

// Stats returns a copy of the counters.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// backoff sleeps for the attempt's delay (100ms doubling to 5s, jittered).
// It returns false when ctx ends first.
func backoff(ctx context.Context, attempt int) bool {
	d := 100 * time.Millisecond << min(attempt, 6)
	d = min(d, 5*time.Second)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryable reports whether a call should be retried later: the
// coordinator is away or busy, as opposed to refusing the request.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Canceled, codes.Unknown, codes.Internal:
		return true
	}
	return false
}

// register obtains a worker id, retrying while the coordinator is away.
// Only one goroutine registers at a time; others see the new id.
func (w *Worker) register(ctx context.Context, stale string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.id != "" && w.id != stale {
		return w.id, nil
	}
	for attempt := 0; ; attempt++ {
		resp, err := w.worker.Register(ctx, &arbiterv1.RegisterRequest{
			Name: w.cfg.Name,
			Capabilities: &arbiterv1.WorkerCapabilities{
				Cores: uint32(w.cfg.Threads), HashMb: uint32(w.cfg.HashMB), EngineVersion: EngineVersion(),
				Capabilities: append(append([]string{"perft", "perft960"}, w.verify.capabilities()...), w.gameCapabilities()...), Hostname: hostname(),
				BenchNps: w.games.nps, BenchSignature: w.games.signature,
			},
		})
		if err == nil {
			w.id = resp.GetWorkerId()
			if hb := resp.GetHeartbeatInterval().AsDuration(); hb > 0 {
				w.hbEvery = hb
			}
			w.log.Info("registered", zap.String(logging.WorkerID, w.id), zap.Int("threads", w.cfg.Threads),
				zap.Int("hash_mb", w.cfg.HashMB))
			return w.id, nil
		}
		if !retryable(err) {
			return "", fmt.Errorf("register: %w", err)
		}
		w.log.Warn("coordinator unavailable, retrying", zap.Error(err), zap.Int("attempt", attempt))
		if !backoff(ctx, attempt) {
			return "", ctx.Err()
		}
	}
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
	defer w.verify.close()
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

// slot leases and computes units one after another until ctx ends.
func (w *Worker) slot(ctx, bg context.Context) error {
	attempt := 0
	for ctx.Err() == nil {
		id := w.workerID()
		// The call runs on bg, not ctx: cancelling it could lose a lease the
		// coordinator has already granted. Shutdown waits for the short
		// long-poll instead and gives back a lease that arrives too late.
		start := time.Now()
		resp, err := w.worker.Lease(bg, &arbiterv1.LeaseRequest{WorkerId: id, Wait: durationpb.New(2 * time.Second)})
		w.metrics.leaseCall(start, 2*time.Second, resp, err)
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
			if isWorkerNotFound(err) {
				if _, err := w.register(ctx, id); err != nil && ctx.Err() == nil {
					return err
				}
				continue
			}
			if !retryable(err) {
				return fmt.Errorf("lease: %w", err)
			}
			if attempt == 0 {
				w.log.Warn("lease failed, retrying", zap.Error(err))
			}
			if !backoff(ctx, attempt) {
				return nil
			}
			attempt++
			continue
		}
		attempt = 0
		l := resp.GetLease()
		if l == nil {
			continue
		}
		w.run(bg, l)
	}
	return nil
}

// run computes one leased unit and puts the result in the outbox, or
// releases the lease when computing was cut short.
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

	if vu := unit.GetVerify(); vu != nil {
		w.runVerify(cctx, bg, h, vu, log)
		return
	}
	if gb := unit.GetGamePairs(); gb != nil {
		w.runGames(cctx, bg, h, gb, log)
		return
	}
	batch := unit.GetPerft()
	if batch == nil {
		log.Warn("unit kind not supported; releasing")
		w.release(bg, h.leaseID, "unit kind not supported by this worker")
		return
	}
	start := time.Now()
	compute := w.cfg.Compute
	if compute == nil {
		compute = ComputePerft
	}
	counts, err := compute(cctx, batch, w.table)
	elapsed := time.Since(start)
	if err != nil {
		reason := err.Error()
		log.Info("unit not finished; releasing lease", zap.String("reason", reason))
		w.release(bg, h.leaseID, reason)
		return
	}
	var nodes uint64
	for _, c := range counts {
		nodes += c
	}
	log.Debug("unit computed", zap.Int("positions", len(counts)), zap.Uint64("nodes", nodes), zap.Duration("elapsed", elapsed))
	w.metrics.unitDone(nodes, elapsed)
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, counts: counts, elapsed: elapsed}, nodes)
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

func (w *Worker) release(ctx context.Context, leaseID, reason string) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w.mu.Lock()
	w.stats.Released++
	w.mu.Unlock()
	if _, err := w.worker.Release(cctx, &arbiterv1.ReleaseRequest{WorkerId: w.workerID(), LeaseId: leaseID, Reason: reason}); err != nil {
		// The lease will expire and be re-issued anyway.
		w.log.Warn("release failed", zap.String(logging.LeaseID, leaseID), zap.Error(err))
	}
}

// ComputePerft computes perft of every position of a batch with the shared
// table. It checks ctx between root moves, so a cancelled unit stops soon.
func ComputePerft(ctx context.Context, batch *arbiterv1.PerftBatch, table *engine.PerftTable) ([]uint64, error) {
	depth := int(batch.GetDepth())
	counts := make([]uint64, len(batch.GetFens()))
	for i, fen := range batch.GetFens() {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return nil, fmt.Errorf("position %d %q: %w", i, fen, err)
		}
		if batch.GetChess960() {
			p.SetChess960(true)
		}
		if depth <= 2 {
			counts[i] = engine.PerftWithTable(&p, depth, table)
			continue
		}
		var ml engine.MoveList
		p.GenerateMoves(&ml)
		var sum uint64
		for _, m := range ml.Slice() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := p
			c.MakeMove(m)
			sum += engine.PerftWithTable(&c, depth-1, table)
		}
		counts[i] = sum
	}
	return counts, ctx.Err()
}

// outboxLoop submits results until each is acknowledged.
func (w *Worker) outboxLoop(ctx context.Context) {
	attempt := 0
	for {
		w.mu.Lock()
		var r *result
		if len(w.outbox) > 0 {
			r = w.outbox[0]
		}
		w.mu.Unlock()
		if r == nil {
			select {
			case <-ctx.Done():
				return
			case <-w.outboxCh:
				continue
			}
		}
		id := w.workerID()
		req := &arbiterv1.SubmitRequest{
			WorkerId: id, LeaseId: r.leaseID, UnitId: r.unitID, Elapsed: durationpb.New(r.elapsed),
			Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: r.counts}},
		}
		if r.games != nil {
			req.Result = &arbiterv1.SubmitRequest_GamePairs{GamePairs: r.games}
		}
		if r.verify != nil {
			req.Result = &arbiterv1.SubmitRequest_Verify{Verify: r.verify}
		}
		resp, err := w.worker.Submit(ctx, req)
		log := w.log.With(zap.String(logging.UnitID, r.unitID), zap.String(logging.JobID, r.jobID), zap.String(logging.LeaseID, r.leaseID))
		switch {
		case err == nil:
			attempt = 0
			if o := resp.GetOutcome(); o == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH {
				log.Warn("result disagrees with another worker's; the coordinator settles it")
			} else if o == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED {
				w.mu.Lock()
				w.stats.Discarded++
				w.mu.Unlock()
			}
			w.dropOutbox(r)
		case isWorkerNotFound(err):
			if _, err := w.register(ctx, id); err != nil {
				return
			}
		case retryable(err):
			if ctx.Err() != nil {
				return
			}
			if attempt == 0 {
				log.Warn("submit failed; keeping the result and retrying", zap.Error(err))
			}
			if !backoff(ctx, attempt) {
				return
			}
			attempt++
		default:
			// Refused (unknown unit, invalid result): retrying cannot help.
			log.Error("result refused", zap.Error(err))
			w.mu.Lock()
			w.stats.Discarded++
			w.mu.Unlock()
			w.dropOutbox(r)
		}
	}
}

// isWorkerNotFound reports the coordinator's "unknown worker" answer (it
// lost or never had our registration): register again.
func isWorkerNotFound(err error) bool {
	return status.Code(err) == codes.NotFound && strings.HasPrefix(status.Convert(err).Message(), "unknown worker")
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
		cctx, cancel := context.WithTimeout(ctx, every)
		resp, err := w.worker.Heartbeat(cctx, &arbiterv1.HeartbeatRequest{WorkerId: id, Leases: hs})
		cancel()
		if err != nil {
			if isWorkerNotFound(err) {
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
