package worker_test

// The worker against a scripted coordinator on a loopback port: results
// the coordinator refuses are dropped and their leases released, a result
// that keeps failing does not hold up the others, a forgotten worker
// registers again, and readiness never waits on the coordinator.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/obs"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/engine"
	_ "github.com/arbiter-chess/arbiter/kinds/perft" // the runner of the perft units the fake hands out
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker"
)

// fakeCoordinator is a WorkerService that hands out the perft units
// queued in it and answers Submit per unit as scripted.
type fakeCoordinator struct {
	arbiterv1.UnimplementedWorkerServiceServer

	mu       sync.Mutex
	nextID   int
	known    map[string]bool
	units    []string // unit ids still to lease
	noReason bool     // answer like a coordinator that sends no reasons
	// submitErrs[unit] are returned by successive Submits of unit.
	submitErrs map[string][]error
	submits    map[string]int
	accepted   map[string]time.Time
	releases   map[string]string // lease id -> reason
	registers  int
}

func newFake(units ...string) *fakeCoordinator {
	return &fakeCoordinator{known: map[string]bool{}, units: units, submitErrs: map[string][]error{},
		submits: map[string]int{}, accepted: map[string]time.Time{}, releases: map[string]string{}}
}

func (f *fakeCoordinator) unknown(id string) error {
	if f.noReason {
		return status.Errorf(codes.NotFound, "unknown worker %q: register again", id)
	}
	return grpcerr.Status(codes.NotFound, apierr.ReasonUnknownWorker, "unknown worker").Err()
}

func (f *fakeCoordinator) Register(context.Context, *arbiterv1.RegisterRequest) (*arbiterv1.RegisterResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.registers++
	id := fmt.Sprintf("w-%d", f.nextID)
	f.known[id] = true
	return &arbiterv1.RegisterResponse{WorkerId: id}, nil
}

func (f *fakeCoordinator) Lease(ctx context.Context, req *arbiterv1.LeaseRequest) (*arbiterv1.LeaseResponse, error) {
	f.mu.Lock()
	if !f.known[req.GetWorkerId()] {
		f.mu.Unlock()
		return nil, f.unknown(req.GetWorkerId())
	}
	if len(f.units) > 0 {
		u := f.units[0]
		f.units = f.units[1:]
		f.mu.Unlock()
		return &arbiterv1.LeaseResponse{Lease: &arbiterv1.Lease{LeaseId: "l-" + u, Unit: &arbiterv1.WorkUnit{UnitId: u, JobId: "p1",
			Payload: &arbiterv1.WorkUnit_Perft{Perft: &arbiterv1.PerftBatch{Fens: []string{engine.StartFEN}, Depth: 2}}}}}, nil
	}
	f.mu.Unlock()
	select {
	case <-time.After(min(req.GetWait().AsDuration(), 200*time.Millisecond)):
	case <-ctx.Done():
	}
	return &arbiterv1.LeaseResponse{}, nil
}

func (f *fakeCoordinator) Heartbeat(_ context.Context, req *arbiterv1.HeartbeatRequest) (*arbiterv1.HeartbeatResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.known[req.GetWorkerId()] {
		return nil, f.unknown(req.GetWorkerId())
	}
	return &arbiterv1.HeartbeatResponse{}, nil
}

func (f *fakeCoordinator) Submit(_ context.Context, req *arbiterv1.SubmitRequest) (*arbiterv1.SubmitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.known[req.GetWorkerId()] {
		return nil, f.unknown(req.GetWorkerId())
	}
	u := req.GetUnitId()
	n := f.submits[u]
	f.submits[u]++
	if errs := f.submitErrs[u]; n < len(errs) {
		return nil, errs[n]
	}
	if got := req.GetPerft().GetCounts(); len(got) != 1 || got[0] != 400 {
		return nil, status.Errorf(codes.InvalidArgument, "counts %v", got)
	}
	f.accepted[u] = time.Now()
	return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED}, nil
}

func (f *fakeCoordinator) Release(_ context.Context, req *arbiterv1.ReleaseRequest) (*arbiterv1.ReleaseResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases[req.GetLeaseId()] = req.GetReason()
	return &arbiterv1.ReleaseResponse{}, nil
}

// with runs fn under the fake's lock.
func (f *fakeCoordinator) with(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func listen(t *testing.T, addr string, svc arbiterv1.WorkerServiceServer) (*grpc.Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	arbiterv1.RegisterWorkerServiceServer(srv, svc)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return srv, lis.Addr().String()
}

// startWorker runs a worker against addr until the test ends.
func startWorker(t *testing.T, addr string) *worker.Worker {
	t.Helper()
	c, err := clusterclient.Connect(clusterclient.Options{Address: addr, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(worker.Config{Conn: c.Conn(), Threads: 2, HashMB: 1, BenchDepth: -1, Grace: time.Second,
		Retry: clusterclient.Policy{Base: 10 * time.Millisecond, Cap: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		c.Close()
	})
	return w
}

func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRefusedResultsDoNotWedge: a result refused for good is submitted
// once, dropped and its lease released with the reason; a result that
// keeps failing retryably is kept and retried while later results go
// through, and is delivered in the end.
func TestRefusedResultsDoNotWedge(t *testing.T) {
	f := newFake("u-bad", "u-slow", "u-1", "u-2", "u-3", "u-4")
	unavailable := status.Error(codes.Unavailable, "store busy")
	refused := grpcerr.Status(codes.InvalidArgument, apierr.ReasonMalformedResult, "counts do not fit the unit").Err()
	f.submitErrs["u-bad"] = []error{refused, refused}
	for range 30 {
		f.submitErrs["u-slow"] = append(f.submitErrs["u-slow"], unavailable)
	}
	_, addr := listen(t, "127.0.0.1:0", f)
	startWorker(t, addr)

	eventually(t, 20*time.Second, "every result delivered or refused", func() bool {
		done := false
		f.with(func() { done = len(f.accepted) == 5 && f.releases["l-u-bad"] != "" })
		return done
	})
	f.with(func() {
		if f.submits["u-bad"] != 1 {
			t.Errorf("the refused result was submitted %d times, want once", f.submits["u-bad"])
		}
		if r := f.releases["l-u-bad"]; r != "result refused: counts do not fit the unit" {
			t.Errorf("release reason %q", r)
		}
		if f.submits["u-slow"] != 31 {
			t.Errorf("the failing result was submitted %d times, want 31 (30 failures, then accepted)", f.submits["u-slow"])
		}
		for _, u := range []string{"u-1", "u-2", "u-3", "u-4"} {
			if !f.accepted[u].Before(f.accepted["u-slow"]) {
				t.Errorf("%s was accepted after the failing result: held up behind it", u)
			}
		}
		if len(f.releases) != 1 {
			t.Errorf("releases %v, want only the refused unit's", f.releases)
		}
	})
}

// TestReregister: a coordinator that forgot the worker (with the reason,
// or an older one answering plain NotFound) gets a new registration and
// the result; an unknown unit on an older coordinator is refused, not
// mistaken for an unknown worker.
func TestReregister(t *testing.T) {
	for _, noReason := range []bool{false, true} {
		t.Run(fmt.Sprintf("noReason=%v", noReason), func(t *testing.T) {
			f := newFake("u-1")
			f.noReason = noReason
			_, addr := listen(t, "127.0.0.1:0", &forgetOnFirstSubmit{fakeCoordinator: f})
			startWorker(t, addr)
			eventually(t, 10*time.Second, "the result after registering again", func() bool {
				ok := false
				f.with(func() { ok = !f.accepted["u-1"].IsZero() })
				return ok
			})
			f.with(func() {
				if f.registers != 2 {
					t.Errorf("%d registrations, want 2", f.registers)
				}
			})
			if !noReason {
				return
			}
			// An unknown unit, answered without a reason.
			f.with(func() {
				f.units = append(f.units, "u-gone")
				f.submitErrs["u-gone"] = []error{status.Error(codes.NotFound, `unknown unit "u-gone"`)}
			})
			eventually(t, 10*time.Second, "the unknown unit released", func() bool {
				r := ""
				f.with(func() { r = f.releases["l-u-gone"] })
				return r == `result refused: unknown unit "u-gone"`
			})
			f.with(func() {
				if f.registers != 2 || f.submits["u-gone"] != 1 {
					t.Errorf("unknown unit: %d registrations, %d submits; want 2 and 1", f.registers, f.submits["u-gone"])
				}
			})
		})
	}
}

// forgetOnFirstSubmit forgets every worker when the first result arrives
// (as a coordinator restarted on a fresh store would).
type forgetOnFirstSubmit struct {
	*fakeCoordinator
	once sync.Once
}

func (f *forgetOnFirstSubmit) Submit(ctx context.Context, req *arbiterv1.SubmitRequest) (*arbiterv1.SubmitResponse, error) {
	forgot := false
	f.once.Do(func() {
		f.with(func() {
			f.known = map[string]bool{}
			f.submits[req.GetUnitId()]++
		})
		forgot = true
	})
	if forgot {
		return nil, f.unknown(req.GetWorkerId())
	}
	return f.fakeCoordinator.Submit(ctx, req)
}

// TestReadyWhileCoordinatorDown: readiness answers at once whether the
// coordinator was never there or went away, and /readyz says 503.
func TestReadyWhileCoordinatorDown(t *testing.T) {
	quick := func(w *worker.Worker) error {
		t.Helper()
		answer := make(chan error, 1)
		go func() { answer <- w.Ready() }()
		select {
		case err := <-answer:
			return err
		case <-time.After(100 * time.Millisecond):
			t.Fatal("Ready did not answer within 100 ms")
			return nil
		}
	}

	// Never there: the worker keeps trying to register.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	w := startWorker(t, addr)
	for range 20 {
		if err := quick(w); err == nil || !strings.Contains(err.Error(), "not registered") {
			t.Fatalf("Ready with no coordinator: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The coordinator comes up on that address: ready.
	f := newFake()
	srv, _ := listen(t, addr, f)
	eventually(t, 10*time.Second, "ready", func() bool { return quick(w) == nil })
	h := httptest.NewServer(obs.Handler(nil, w.Ready))
	defer h.Close()
	if code := get(t, h.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d while connected", code)
	}

	// It goes away: not ready, promptly, and /readyz answers 503.
	srv.Stop()
	eventually(t, 10*time.Second, "not ready", func() bool { return quick(w) != nil })
	for range 10 {
		if code := get(t, h.URL+"/readyz"); code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz %d with the coordinator down", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
