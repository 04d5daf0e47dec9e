// Package loadtest drives a coordinator with many simulated workers over
// real gRPC and reports lease throughput and latency. Each simulated worker
// runs the real cycle: lease (long poll), heartbeat, durable submit of a
// plausible result. It is bounded in operations and time and talks only to
// the address it is given (loopback in the tests and
// scripts/bench-cluster.sh).
//
// Two modes: open loop at a target rate (Rate > 0: leases are started at
// that rate, whatever the latency, as a farm of many workers with
// minute-long units would start them), and saturation (Rate 0: every
// worker cycles as fast as the coordinator answers).
package loadtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Config bounds a run.
type Config struct {
	Workers int // simulated workers (10,000)
	// Conns are the connections to spread workers over; each worker's
	// calls carry the credential of its connection.
	Conns    []grpc.ClientConnInterface
	Duration time.Duration // stop after this long (10s)
	MaxOps   int64         // stop after this many leases (1,000,000)
	// Rate, when positive, starts leases at this many per second (open
	// loop); 0 saturates.
	Rate float64
	// Submit answers every lease with a plausible result (all counts 1, a
	// durable commit each); otherwise leases are released.
	Submit bool
	// Heartbeat sends one heartbeat for the lease before answering it.
	Heartbeat bool
}

// Result is what a run measured.
type Result struct {
	Workers int
	Leases  int64
	Errors  int64
	// Busy counts the calls the coordinator's admission refused BUSY (its
	// byte budget full) and the simulated worker retried, as real workers
	// do: backpressure, not errors.
	Busy            int64
	FirstError      error
	Elapsed         time.Duration
	RegisterTime    time.Duration
	LeasesPerSecond float64
	LeaseP50        time.Duration
	LeaseP99        time.Duration
	HeartbeatP99    time.Duration
	AnswerP50       time.Duration // submit or release
	AnswerP99       time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("%d workers (registered in %.1fs): %d leases in %.2fs = %.0f leases/s; lease p50 %v p99 %v; heartbeat p99 %v; submit/release p50 %v p99 %v; %d calls refused BUSY and retried; %d errors (first: %v)",
		r.Workers, r.RegisterTime.Seconds(), r.Leases, r.Elapsed.Seconds(), r.LeasesPerSecond, r.LeaseP50.Round(time.Microsecond),
		r.LeaseP99.Round(time.Microsecond), r.HeartbeatP99.Round(time.Microsecond), r.AnswerP50.Round(time.Microsecond),
		r.AnswerP99.Round(time.Microsecond), r.Busy, r.Errors, r.FirstError)
}

// Register registers n simulated workers, spread over conns, and returns
// their ids.
func Register(ctx context.Context, n int, conns []grpc.ClientConnInterface) ([]string, error) {
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	for i := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c := arbiterv1.NewWorkerServiceClient(conns[i%len(conns)])
			r, err := c.Register(ctx, &arbiterv1.RegisterRequest{Name: fmt.Sprintf("sim-%d", i),
				Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, HashMb: 1, EngineVersion: "loadtest", Capabilities: []string{capability.Perft}}})
			if err != nil {
				errs <- fmt.Errorf("loadtest: register worker %d: %w", i, err)
				return
			}
			ids[i] = r.GetWorkerId()
		}()
	}
	wg.Wait()
	close(errs)
	return ids, <-errs
}

// Run has the workers lease and answer units until the time or operation
// budget is spent.
func Run(ctx context.Context, cfg Config, ids []string) (Result, error) {
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.MaxOps <= 0 {
		cfg.MaxOps = 1_000_000
	}
	if len(cfg.Conns) == 0 || len(ids) == 0 {
		return Result{}, fmt.Errorf("loadtest: no connections or no workers")
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	r := &loadRun{cfg: cfg, ctx: ctx, runCtx: runCtx, tokens: pace(runCtx, cfg.Rate, len(ids))}
	r.end, _ = runCtx.Deadline()
	var wg sync.WaitGroup
	start := time.Now()
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(arbiterv1.NewWorkerServiceClient(cfg.Conns[i%len(cfg.Conns)]), id)
		}()
	}
	wg.Wait()
	res := Result{Workers: len(ids), Elapsed: time.Since(start), Errors: r.errs.Load(), Busy: r.busy.Load(), Leases: int64(len(r.leaseLat))}
	if e := r.firstErr.Load(); e != nil {
		res.FirstError = *e
	}
	res.LeasesPerSecond = float64(res.Leases) / res.Elapsed.Seconds()
	res.LeaseP50, res.LeaseP99 = pct(r.leaseLat, 0.50), pct(r.leaseLat, 0.99)
	res.HeartbeatP99 = pct(r.hbLat, 0.99)
	res.AnswerP50, res.AnswerP99 = pct(r.answerLat, 0.50), pct(r.answerLat, 0.99)
	return res, nil
}

// pace is the open loop's pacer: it hands out start tokens at rate a
// second until ctx ends, and a worker takes one before each lease. A
// token no worker is free to take is dropped (a start not sustained).
// Rate 0 is the closed loop: no pacer, nil.
func pace(ctx context.Context, rate float64, workers int) chan struct{} {
	if rate <= 0 {
		return nil
	}
	tokens := make(chan struct{}, workers)
	go func() {
		t := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case tokens <- struct{}{}:
				default:
				}
			}
		}
	}()
	return tokens
}

// loadRun is one Run: its counters and the latencies its workers saw.
type loadRun struct {
	cfg       Config
	ctx       context.Context // the caller's: answers are sent even after the run's end
	runCtx    context.Context // the run's: it ends after cfg.Duration
	end       time.Time
	tokens    chan struct{}
	ops, errs atomic.Int64
	busy      atomic.Int64
	firstErr  atomic.Pointer[error]
	mu        sync.Mutex
	leaseLat  []time.Duration
	hbLat     []time.Duration
	answerLat []time.Duration
}

// fail counts an error, unless the run ended mid-call (the call may see
// it first).
func (r *loadRun) fail(err error) {
	if r.runCtx.Err() != nil || !time.Now().Before(r.end) {
		return
	}
	r.errs.Add(1)
	r.firstErr.CompareAndSwap(nil, &err)
}

// worker leases, heartbeats and answers as worker id until the run ends.
func (r *loadRun) worker(c arbiterv1.WorkerServiceClient, id string) {
	var ll, hl, al []time.Duration
	defer func() {
		r.mu.Lock()
		r.leaseLat = append(r.leaseLat, ll...)
		r.hbLat = append(r.hbLat, hl...)
		r.answerLat = append(r.answerLat, al...)
		r.mu.Unlock()
	}()
	for r.runCtx.Err() == nil {
		if r.tokens != nil {
			select {
			case <-r.tokens:
			case <-r.runCtx.Done():
				return
			}
		}
		if r.ops.Add(1) > r.cfg.MaxOps {
			return
		}
		t0 := time.Now()
		var resp *arbiterv1.LeaseResponse
		err := retryBusy(r.runCtx, &r.busy, func() (err error) {
			resp, err = c.Lease(r.runCtx, &arbiterv1.LeaseRequest{WorkerId: id, Wait: durationpb.New(time.Second)})
			return err
		})
		if err != nil {
			r.fail(err)
			r.ops.Add(-1)
			continue
		}
		l := resp.GetLease()
		if l == nil {
			r.ops.Add(-1)
			continue
		}
		ll = append(ll, time.Since(t0))
		if r.cfg.Heartbeat {
			t1 := time.Now()
			err := retryBusy(r.runCtx, &r.busy, func() error {
				_, err := c.Heartbeat(r.runCtx, &arbiterv1.HeartbeatRequest{WorkerId: id,
					Leases: []*arbiterv1.HeldLease{{LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId()}}})
				return err
			})
			if err != nil {
				r.fail(err)
			}
			hl = append(hl, time.Since(t1))
		}
		t2 := time.Now()
		if err := r.answer(c, id, l); err != nil {
			r.fail(err)
		}
		al = append(al, time.Since(t2))
	}
}

// answer submits a made-up count of the lease's unit (Config.Submit) or
// releases it.
func (r *loadRun) answer(c arbiterv1.WorkerServiceClient, id string, l *arbiterv1.Lease) error {
	ctx := r.ctx
	if r.cfg.Submit {
		counts := make([]uint64, len(l.GetUnit().GetPerft().GetFens()))
		for k := range counts {
			counts[k] = 1
		}
		return retryBusy(ctx, &r.busy, func() error {
			_, err := c.Submit(ctx, &arbiterv1.SubmitRequest{WorkerId: id, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
				Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: counts}}})
			return err
		})
	}
	return retryBusy(ctx, &r.busy, func() error {
		_, err := c.Release(ctx, &arbiterv1.ReleaseRequest{WorkerId: id, LeaseId: l.GetLeaseId(), Reason: "loadtest"})
		return err
	})
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// retryBusy calls f until it is not refused BUSY by the admission's byte
// budget (counted in busy), after a short pause each time, as a real
// worker's client retries (clusterclient.Retryable).
func retryBusy(ctx context.Context, busy *atomic.Int64, f func() error) error {
	for {
		err := f()
		if grpcerr.Reason(err) != apierr.ReasonBusy || ctx.Err() != nil {
			return err
		}
		busy.Add(1)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(5 * time.Millisecond):
		}
	}
}
