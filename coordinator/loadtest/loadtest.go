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

	// In open loop, a pacer hands out start tokens at the target rate; a
	// worker takes one before each lease.
	var tokens chan struct{}
	if cfg.Rate > 0 {
		tokens = make(chan struct{}, len(ids))
		go func() {
			t := time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
			defer t.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-t.C:
					select {
					case tokens <- struct{}{}:
					default: // every worker is busy: the start is dropped (counted as not sustained)
					}
				}
			}
		}()
	}

	var ops, errs, busy atomic.Int64
	var firstErr atomic.Pointer[error]
	end, _ := runCtx.Deadline()
	fail := func(err error) {
		if runCtx.Err() != nil || !time.Now().Before(end) {
			return // the run ended mid-call (the call may see it first)
		}
		errs.Add(1)
		firstErr.CompareAndSwap(nil, &err)
	}
	var mu sync.Mutex
	var leaseLat, hbLat, answerLat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := arbiterv1.NewWorkerServiceClient(cfg.Conns[i%len(cfg.Conns)])
			var ll, hl, al []time.Duration
			defer func() {
				mu.Lock()
				leaseLat = append(leaseLat, ll...)
				hbLat = append(hbLat, hl...)
				answerLat = append(answerLat, al...)
				mu.Unlock()
			}()
			for runCtx.Err() == nil {
				if tokens != nil {
					select {
					case <-tokens:
					case <-runCtx.Done():
						return
					}
				}
				if ops.Add(1) > cfg.MaxOps {
					return
				}
				t0 := time.Now()
				var r *arbiterv1.LeaseResponse
				err := retryBusy(runCtx, &busy, func() (err error) {
					r, err = c.Lease(runCtx, &arbiterv1.LeaseRequest{WorkerId: ids[i], Wait: durationpb.New(time.Second)})
					return err
				})
				if err != nil {
					fail(err)
					ops.Add(-1)
					continue
				}
				l := r.GetLease()
				if l == nil {
					ops.Add(-1)
					continue
				}
				ll = append(ll, time.Since(t0))
				if cfg.Heartbeat {
					t1 := time.Now()
					err := retryBusy(runCtx, &busy, func() error {
						_, err := c.Heartbeat(runCtx, &arbiterv1.HeartbeatRequest{WorkerId: ids[i],
							Leases: []*arbiterv1.HeldLease{{LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId()}}})
						return err
					})
					if err != nil {
						fail(err)
					}
					hl = append(hl, time.Since(t1))
				}
				t2 := time.Now()
				if cfg.Submit {
					counts := make([]uint64, len(l.GetUnit().GetPerft().GetFens()))
					for k := range counts {
						counts[k] = 1
					}
					err = retryBusy(ctx, &busy, func() error {
						_, err := c.Submit(ctx, &arbiterv1.SubmitRequest{WorkerId: ids[i], LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
							Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: counts}}})
						return err
					})
				} else {
					err = retryBusy(ctx, &busy, func() error {
						_, err := c.Release(ctx, &arbiterv1.ReleaseRequest{WorkerId: ids[i], LeaseId: l.GetLeaseId(), Reason: "loadtest"})
						return err
					})
				}
				if err != nil {
					fail(err)
				}
				al = append(al, time.Since(t2))
			}
		}()
	}
	wg.Wait()
	res := Result{Workers: len(ids), Elapsed: time.Since(start), Errors: errs.Load(), Busy: busy.Load(), Leases: int64(len(leaseLat))}
	if e := firstErr.Load(); e != nil {
		res.FirstError = *e
	}
	res.LeasesPerSecond = float64(res.Leases) / res.Elapsed.Seconds()
	res.LeaseP50, res.LeaseP99 = pct(leaseLat, 0.50), pct(leaseLat, 0.99)
	res.HeartbeatP99 = pct(hbLat, 0.99)
	res.AnswerP50, res.AnswerP99 = pct(answerLat, 0.50), pct(answerLat, 0.99)
	return res, nil
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
