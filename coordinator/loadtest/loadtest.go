// Package loadtest drives a coordinator with many simulated workers over
// real gRPC and reports lease throughput and latency. It is bounded in both
// operations and time and talks only to the address it is given (loopback
// in the tests and scripts/bench-cluster.sh).
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

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Config bounds a run.
type Config struct {
	Workers  int // simulated workers (1000)
	Conns    []grpc.ClientConnInterface
	Duration time.Duration // stop after this long (10s)
	MaxOps   int64         // stop after this many leases (200,000)
	// Submit, when set, answers every lease with a plausible result (all
	// counts 1, accepted for positions with moves at depth ≥ 3), so the
	// store's write path is measured too; otherwise leases are released.
	Submit bool
}

// Result is what a run measured.
type Result struct {
	Leases          int64
	Errors          int64
	FirstError      error
	Elapsed         time.Duration
	LeasesPerSecond float64
	LeaseP50        time.Duration
	LeaseP99        time.Duration
	AnswerP50       time.Duration // submit or release
	AnswerP99       time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("%d leases in %.2fs = %.0f leases/s; lease p50 %v p99 %v; submit/release p50 %v p99 %v; %d errors (first: %v)",
		r.Leases, r.Elapsed.Seconds(), r.LeasesPerSecond, r.LeaseP50, r.LeaseP99, r.AnswerP50, r.AnswerP99, r.Errors, r.FirstError)
}

// Run registers cfg.Workers workers and has each lease and answer units in
// a loop until the time or operation budget is spent.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 1000
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.MaxOps <= 0 {
		cfg.MaxOps = 200_000
	}
	if len(cfg.Conns) == 0 {
		return Result{}, fmt.Errorf("loadtest: no connections")
	}
	ids := make([]string, cfg.Workers)
	for i := range ids {
		c := arbiterv1.NewWorkerServiceClient(cfg.Conns[i%len(cfg.Conns)])
		r, err := c.Register(ctx, &arbiterv1.RegisterRequest{Name: fmt.Sprintf("sim-%d", i),
			Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, HashMb: 1, EngineVersion: "loadtest", Capabilities: []string{"perft"}}})
		if err != nil {
			return Result{}, fmt.Errorf("loadtest: register worker %d: %w", i, err)
		}
		ids[i] = r.GetWorkerId()
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var ops, errs atomic.Int64
	var firstErr atomic.Pointer[error]
	fail := func(err error) {
		errs.Add(1)
		firstErr.CompareAndSwap(nil, &err)
	}
	var mu sync.Mutex
	var leaseLat, answerLat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := arbiterv1.NewWorkerServiceClient(cfg.Conns[i%len(cfg.Conns)])
			var ll, al []time.Duration
			defer func() {
				mu.Lock()
				leaseLat = append(leaseLat, ll...)
				answerLat = append(answerLat, al...)
				mu.Unlock()
			}()
			for runCtx.Err() == nil && ops.Add(1) <= cfg.MaxOps {
				t0 := time.Now()
				r, err := c.Lease(ctx, &arbiterv1.LeaseRequest{WorkerId: ids[i], Wait: durationpb.New(time.Second)})
				if err != nil {
					fail(err)
					ops.Add(-1)
					continue
				}
				ll = append(ll, time.Since(t0))
				l := r.GetLease()
				if l == nil {
					ops.Add(-1)
					continue
				}
				t1 := time.Now()
				if cfg.Submit {
					counts := make([]uint64, len(l.GetUnit().GetPerft().GetFens()))
					for k := range counts {
						counts[k] = 1
					}
					_, err = c.Submit(ctx, &arbiterv1.SubmitRequest{WorkerId: ids[i], LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
						Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: counts}}})
				} else {
					_, err = c.Release(ctx, &arbiterv1.ReleaseRequest{WorkerId: ids[i], LeaseId: l.GetLeaseId(), Reason: "loadtest"})
				}
				if err != nil {
					fail(err)
				}
				al = append(al, time.Since(t1))
			}
		}()
	}
	wg.Wait()
	res := Result{Elapsed: time.Since(start), Errors: errs.Load(), Leases: int64(len(leaseLat))}
	if e := firstErr.Load(); e != nil {
		res.FirstError = *e
	}
	// Leases that returned no work are in leaseLat too only when granted.
	res.LeasesPerSecond = float64(res.Leases) / res.Elapsed.Seconds()
	res.LeaseP50, res.LeaseP99 = pct(leaseLat, 0.50), pct(leaseLat, 0.99)
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
