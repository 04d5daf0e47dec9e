//go:build unix

package e2e

// Trust: what a holder of a credential can and cannot bend. A coordinator
// with in-process workers (or the real process, where its memory is
// measured) on loopback, a real SQLite store, and test clients speaking
// the real gRPC API with their own credentials.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// fakeWorkerWith registers a test worker on a connection with the given
// credential and capabilities.
func fakeWorkerWith(t *testing.T, conn *grpc.ClientConn, name string, caps ...string) *fakeWorker {
	t.Helper()
	c := arbiterv1.NewWorkerServiceClient(conn)
	r, err := c.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: name,
		Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, HashMb: 1, EngineVersion: "fake", Capabilities: caps}})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return &fakeWorker{t: t, c: c, id: r.GetWorkerId()}
}

// TestForgeriesRefused replays the forgeries of issue 12 against a real
// coordinator: every one is refused, and the totals stay exact.
func TestForgeriesRefused(t *testing.T) {
	cl := localCluster(t, "", 0)
	addr, data := cl.Addr(), cl.Data()
	admin := dial(t, addr, token)
	clientConn := dial(t, addr, newCredential(t, addr, "client"))
	mallory := dial(t, addr, workerToken(t, addr))
	honest := dial(t, addr, workerToken(t, addr))

	// A client credential cannot act as a worker.
	_, err := arbiterv1.NewWorkerServiceClient(clientConn).Register(ctxT(t, 5*time.Second), &arbiterv1.RegisterRequest{Name: "x",
		Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, Capabilities: []string{"perft"}}})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a client credential registered a worker: %v", err)
	}
	// A worker credential cannot submit jobs.
	_, err = arbiterv1.NewJobServiceClient(mallory).SubmitPerft(ctxT(t, 5*time.Second), &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3}})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a worker credential submitted a job: %v", err)
	}

	job := submit(t, clientConn, &arbiterv1.PerftSpec{Depth: 4, VerifyFraction: 1})
	m1, m2 := fakeWorkerWith(t, mallory, "m1", "perft"), fakeWorkerWith(t, mallory, "m2", "perft")
	h := fakeWorkerWith(t, honest, "h", "perft")
	lh := h.lease()
	lm := m1.lease()

	bump := func(c []uint64) []uint64 {
		out := append([]uint64(nil), c...)
		out[len(out)-1]++ // wrong, but plausible at depth 3
		return out
	}
	// Mallory's second worker submits for the honest worker's unit: with the
	// honest lease id, and with its own made-up one.
	for _, lid := range []string{lh.GetLeaseId(), lm.GetLeaseId(), "l00000000-1-0123456789abcdef0123456789abcdef"} {
		forged := &arbiterv1.Lease{LeaseId: lid, Unit: lh.GetUnit()}
		if _, err := m2.submit(forged, bump(compute(t, lh))); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("forged result under lease %s: %v", lid, err)
		}
	}
	// Mallory's first worker submits a wrong count for its own unit; its
	// second worker "verifies" it: m2 never gets m1's unit (same identity),
	// and submitting it anyway is refused.
	if out, err := m1.submit(lm, bump(compute(t, lm))); err != nil || out != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("mallory's own (wrong) run: %v %v", out, err)
	}
	if _, err := m2.submit(lm, bump(compute(t, lm))); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("mallory's second worker verified its first: %v", err)
	}
	for i := 0; i < 5; i++ {
		r, err := m2.c.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: m2.id, Wait: durationpb.New(200 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		if r.GetLease().GetUnit().GetUnitId() == lm.GetUnit().GetUnitId() {
			t.Fatal("a unit was leased for verification to a worker of the identity that ran it")
		}
		if r.GetLease() != nil {
			m2.c.Release(ctxT(t, 5*time.Second), &arbiterv1.ReleaseRequest{WorkerId: m2.id, LeaseId: r.GetLease().GetLeaseId()})
		}
	}
	if p := getJob(t, admin, job.GetJobId()).GetProgress(); p.GetUnitsVerified() != 0 {
		t.Fatalf("verified units after mallory's runs: %v", p)
	}

	// A made-up heartbeat at a huge index is answered at once, and the
	// coordinator stays up.
	start := time.Now()
	hb, err := m1.c.Heartbeat(ctxT(t, 5*time.Second), &arbiterv1.HeartbeatRequest{WorkerId: m1.id,
		Leases: []*arbiterv1.HeldLease{{LeaseId: "made-up", UnitId: job.GetJobId() + ".17179869184"}}})
	if err != nil || hb.GetLeases()[0].GetState() != arbiterv1.LeaseState_LEASE_STATE_LOST {
		t.Fatalf("made-up heartbeat: %v %v", hb, err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("made-up heartbeat took %v", d)
	}

	// Honest workers of two more identities finish the job: exact.
	h.submit(lh, compute(t, lh))
	addWorkers(t, cl, 2)
	final := waitFor(t, admin, job.GetJobId(), 90*time.Second, "job done", done)
	if final.GetNodes() != "197281" {
		t.Fatalf("perft 4 = %s, want 197281", final.GetNodes())
	}
	if p := final.GetProgress(); p.GetUnitsVerified() != p.GetUnitsTotal() || p.GetMismatches() == 0 {
		t.Fatalf("progress %v: every unit verified by an independent identity, mallory's run a mismatch", p)
	}
	// Every forged result is an incident of the worker that sent it.
	if n := incidents(t, data, m2.id); n < 4 {
		t.Errorf("%d incidents recorded for the forging worker, want at least 4", n)
	}
}

// incidents counts a worker's stored incidents.
func incidents(t *testing.T, data, workerID string) int {
	t.Helper()
	return int(storeInt(t, data, "SELECT COUNT(*) FROM events WHERE kind='incident' AND worker_id=?", workerID))
}

// TestForgedBatchesRefused: a worker without the game-pair capability, or
// with it but without a lease, cannot add batches to a test.
func TestForgedBatchesRefused(t *testing.T) {
	cl := localCluster(t, "", 0)
	addr, data := cl.Addr(), cl.Data()
	conn := dial(t, addr, token)
	id := submitTest(t, addr, "match", "--each", "nodes=500", "--games", "8", "--batch-pairs", "2")
	mallory := dial(t, addr, workerToken(t, addr))
	f := fakeWorkerWith(t, mallory, "nocap", "perft")
	pg := "[Event \"x\"]\n\n1. e4 *\n\n"
	r := &arbiterv1.GamePairBatchResult{Pentanomial: &arbiterv1.Pentanomial{Ww: 2}, Wins: 4, Pgns: []string{pg, pg, pg, pg},
		Games: []*arbiterv1.GameOutcome{
			{GameIndex: 0, Result: arbiterv1.GameResult_GAME_RESULT_WHITE_WINS, Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE},
			{GameIndex: 1, Result: arbiterv1.GameResult_GAME_RESULT_BLACK_WINS, Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE},
			{GameIndex: 2, Result: arbiterv1.GameResult_GAME_RESULT_WHITE_WINS, Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE},
			{GameIndex: 3, Result: arbiterv1.GameResult_GAME_RESULT_BLACK_WINS, Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE},
		}}
	for _, idx := range []int{0, 3, 1_000_000, 17179869184} {
		unit := fmt.Sprintf("%s.%d", id, idx)
		_, err := f.c.Submit(ctxT(t, 5*time.Second), &arbiterv1.SubmitRequest{WorkerId: f.id, LeaseId: "l1-1-" + strings.Repeat("0", 32), UnitId: unit,
			Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: r}})
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("never-leased batch %s: %v", unit, err)
		}
	}
	if j := getJob(t, conn, id); j.GetMatchProgress().GetGames() != 0 || storeCounts(t, data, id).batches != 0 {
		t.Fatalf("forged batches counted: %d games", j.GetMatchProgress().GetGames())
	}
	// The coordinator still answers, and restarts fine from its store.
	if _, err := arbiterv1.NewJobServiceClient(conn).ListJobs(ctxT(t, 5*time.Second), &arbiterv1.ListJobsRequest{}); err != nil {
		t.Fatal(err)
	}
}

// rss is a process's resident set size in bytes (Linux).
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestAuthenticatedBeforeBody: 40 concurrent 15 MB requests with a wrong
// credential are refused from their headers; the coordinator never reads
// their bodies, and its memory stays small.
func TestAuthenticatedBeforeBody(t *testing.T) {
	addr := proctest.FreeAddr(t)
	p := coordinator(t, addr, t.TempDir())
	before := rss(t, p.cmd.Process.Pid)
	conn, err := clusterclient.Dial(addr, clusterclient.Options{Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := arbiterv1.NewJobServiceClient(conn)
	big := strings.Repeat("x", 15<<20)
	var wg sync.WaitGroup
	var peak int64
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				r := rss(t, p.cmd.Process.Pid)
				mu.Lock()
				peak = max(peak, r)
				mu.Unlock()
			}
		}
	}()
	refused := 0
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, err := c.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Fen: big}},
				grpc.MaxCallSendMsgSize(32<<20))
			if status.Code(err) == codes.Unauthenticated {
				mu.Lock()
				refused++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	after := rss(t, p.cmd.Process.Pid)
	t.Logf("coordinator RSS: %.1f MB before, peak %.1f MB, %.1f MB after 40 concurrent 15 MB requests with a wrong credential (%d refused)",
		float64(before)/(1<<20), float64(peak)/(1<<20), float64(after)/(1<<20), refused)
	if refused != 40 {
		t.Fatalf("%d of 40 refused", refused)
	}
	if peak > 100<<20 {
		t.Fatalf("coordinator RSS peaked at %.1f MB (want under 100 MB)", float64(peak)/(1<<20))
	}
}

// TestDeepSplitRefused: a split too large for the coordinator's memory is
// refused at once with the numbers; the coordinator stays small.
func TestDeepSplitRefused(t *testing.T) {
	addr := proctest.FreeAddr(t)
	p := coordinator(t, addr, t.TempDir())
	conn := dial(t, addr, token)
	start := time.Now()
	_, err := arbiterv1.NewJobServiceClient(conn).SubmitPerft(ctxT(t, 60*time.Second), &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{
		Fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Depth: 6, SplitPly: 6}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "limit") {
		t.Fatalf("deep split: %v", err)
	}
	t.Logf("refused in %v: %s; coordinator RSS %.1f MB", time.Since(start).Round(time.Millisecond), status.Convert(err).Message(),
		float64(rss(t, p.cmd.Process.Pid))/(1<<20))
	if r := rss(t, p.cmd.Process.Pid); r > 200<<20 {
		t.Fatalf("RSS %.1f MB after a refused split", float64(r)/(1<<20))
	}
}
