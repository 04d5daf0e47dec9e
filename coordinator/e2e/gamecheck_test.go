//go:build unix

package e2e

// A game counts only if it is a game, and a worker credential buys only
// what its workers declare: a real coordinator process on loopback, an
// attacker holding one worker credential and speaking the real gRPC API,
// and honest worker processes as the control.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// leaseOf waits for a lease of job id for worker wid.
func leaseOf(t *testing.T, ws arbiterv1.WorkerServiceClient, wid, id string) *arbiterv1.Lease {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("no lease of %s for %s", id, wid)
		}
		resp, err := ws.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: wid, Wait: durationpb.New(2 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetLease().GetUnit().GetJobId() == id {
			return resp.GetLease()
		}
	}
}

// forgedMates is a result for batch b in which engine A mates in every
// game: the PGNs say what movetext writes (given the game's opening and
// result), the counts agree with them.
func forgedMates(b *arbiterv1.GamePairBatch, movetext func(op *arbiterv1.Opening, result string) string) *arbiterv1.GamePairBatchResult {
	pairs := len(b.GetOpenings())
	r := &arbiterv1.GamePairBatchResult{Pentanomial: &arbiterv1.Pentanomial{Ww: uint64(pairs)}, Wins: uint64(2 * pairs)}
	a, bb := b.GetEngineA().GetName(), b.GetEngineB().GetName()
	for k := 0; k < 2*pairs; k++ {
		white, black, res, gr := a, bb, "1-0", arbiterv1.GameResult_GAME_RESULT_WHITE_WINS
		if k%2 == 1 {
			white, black, res, gr = bb, a, "0-1", arbiterv1.GameResult_GAME_RESULT_BLACK_WINS
		}
		r.Pgns = append(r.Pgns, fmt.Sprintf("[Event \"x\"]\n[White %q]\n[Black %q]\n[Result %q]\n%s", white, black, res, movetext(b.GetOpenings()[k/2], res)))
		r.Games = append(r.Games, &arbiterv1.GameOutcome{GameIndex: uint32(k), Result: gr, Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE})
	}
	return r
}

// TestFabricatedBatchesRefused: a holder of one worker credential submits
// two batches of made-up mates for the SPRT's engine A (the PGNs of the
// issue, `1. e4 *`, and the same with a result token) under leases it
// really holds: both are refused as INVALID_GAME, counted in
// arbiter_results_rejected_total{reason="invalid_game"} and as incidents of
// its worker, and the SPRT counts no game of them. Honest worker processes
// then decide the SPRT by playing it.
func TestFabricatedBatchesRefused(t *testing.T) {
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr)
	id := submitTest(t, addr, "sprt", "--each", "nodes=2000", "--sprt", "elo0=0,elo1=40,model=logistic", "--batch-pairs", "4")
	admin := dial(t, addr, token)

	mallory := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	reg, err := mallory.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: "mallory", Capabilities: &arbiterv1.WorkerCapabilities{
		Cores: 2, Capabilities: []string{"game-pair"}}})
	if err != nil {
		t.Fatal(err)
	}
	wid := reg.GetWorkerId()
	forgeries := []func(*arbiterv1.Opening, string) string{
		func(*arbiterv1.Opening, string) string { return "\n1. e4 *\n" }, // the issue's
		func(op *arbiterv1.Opening, res string) string {
			// From the pair's opening, its moves and then a legal move,
			// with tags and result that agree: only the replay sees that
			// no one is mated.
			pos, err := engine.ParseFEN(op.GetFen())
			if err != nil {
				t.Fatal(err)
			}
			text := ""
			for _, u := range op.GetMovesUci() {
				m, err := pos.ParseUCIMove(u)
				if err != nil {
					t.Fatal(err)
				}
				text += pos.SAN(m) + " {book} "
				pos.MakeMove(m)
			}
			text += pos.SAN(pos.LegalMoves()[0]) + " {+0.10/1 0.001s} "
			return fmt.Sprintf("[SetUp \"1\"]\n[FEN %q]\n\n%s%s\n", op.GetFen(), text, res)
		},
	}
	for i, text := range forgeries {
		l := leaseOf(t, mallory, wid, id)
		r := forgedMates(l.GetUnit().GetGamePairs(), text)
		_, err := mallory.Submit(ctxT(t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: wid, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
			Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: r}})
		if status.Code(err) != codes.InvalidArgument || grpcerr.Reason(err) != apierr.ReasonInvalidGame {
			t.Fatalf("fabricated batch %d: %v (reason %q); want InvalidArgument, %s", i, err, grpcerr.Reason(err), apierr.ReasonInvalidGame)
		}
		t.Logf("fabricated batch %d refused: %v", i, grpcerr.Message(err))
	}
	j := getJob(t, admin, id)
	if mp := j.GetMatchProgress(); mp.GetGames() != 0 || mp.GetSprtState() != "continue" || j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("after the fabricated batches: %v, %d games, SPRT %q", j.GetState(), mp.GetGames(), mp.GetSprtState())
	}
	if st := storeCounts(t, data, id); st.batches != 0 {
		t.Fatalf("fabricated batches stored: %+v", st)
	}
	if n := metric(t, httpAddr, `arbiter_results_rejected_total{reason="invalid_game"}`); n != 2 {
		t.Errorf("arbiter_results_rejected_total{reason=\"invalid_game\"} = %v, want 2", n)
	}
	if n := incidents(t, data, wid); n < 2 {
		t.Errorf("%d incidents of the forging worker, want 2", n)
	}

	// The control: real workers play the test to its decision.
	startWorker(t, addr, "--name", "h1")
	startWorker(t, addr, "--name", "h2")
	final := waitFor(t, admin, id, 8*time.Minute, "SPRT decided", done)
	if s := final.GetMatchProgress().GetSprtState(); s != "accepted" {
		t.Fatalf("honest SPRT ended %q", s)
	}
	if st := storeCounts(t, data, id); st.pgns != 2*st.pairs || st.pairs == 0 {
		t.Fatalf("honest SPRT stored %+v", st)
	}
	if n := metric(t, httpAddr, `arbiter_results_rejected_total{reason="invalid_game"}`); n != 2 {
		t.Errorf("honest batches refused: arbiter_results_rejected_total{reason=\"invalid_game\"} = %v, want the 2 forgeries", n)
	}
}

// TestLeasesCappedByDeclaredCores: one worker id declaring 1 core asks for
// 5,000 leases (many at once) and holds one; the same credential cannot
// register more worker ids than the coordinator's
// --max-workers-per-identity, and is told so; another credential still
// can.
func TestLeasesCappedByDeclaredCores(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	// Leases of 30s: none expires (and no worker goes idle) during the test.
	coordinator(t, addr, data, "--lease-duration", "30s", "--max-workers-per-identity", "3")
	id := submitTest(t, addr, "match", "--each", "nodes=500", "--games", "4000", "--batch-pairs", "1")
	mallory := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	register := func(c arbiterv1.WorkerServiceClient, name string, cores uint32) (string, error) {
		r, err := c.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: name, Capabilities: &arbiterv1.WorkerCapabilities{
			Cores: cores, Capabilities: []string{"game-pair"}}})
		return r.GetWorkerId(), err
	}
	wid, err := register(mallory, "one-core", 1)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		granted []string
		wg      sync.WaitGroup
	)
	for g := 0; g < 10; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				resp, err := mallory.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: wid})
				if err != nil {
					t.Error(err)
					return
				}
				if l := resp.GetLease(); l != nil {
					mu.Lock()
					granted = append(granted, l.GetUnit().GetUnitId())
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(granted) != 1 || !strings.HasPrefix(granted[0], id+".") {
		t.Fatalf("a 1-core worker got %d leases of 5,000 asked: %v", len(granted), granted[:min(len(granted), 5)])
	}

	// Worker ids per identity: 3 (with the one above), then a clear refusal.
	for _, name := range []string{"b", "c"} {
		if _, err := register(mallory, name, 1); err != nil {
			t.Fatalf("worker %s within the limit: %v", name, err)
		}
	}
	_, err = register(mallory, "d", 1)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-workers-per-identity") || !strings.Contains(err.Error(), "at most 3") {
		t.Fatalf("a fourth worker id: %v; want ResourceExhausted naming the limit and its flag", err)
	}
	t.Logf("refused: %s", grpcerr.Message(err))
	if _, err := register(mallory, "a", 1); err == nil {
		t.Fatal("\"a\" is a new name too: refused")
	}
	if _, err := register(mallory, "one-core", 1); err != nil {
		t.Fatalf("a worker registering again under its name: %v", err)
	}
	other := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	if _, err := register(other, "d", 1); err != nil {
		t.Fatalf("another credential: %v", err)
	}

	// The limit is the admin's, and a bad one is refused at start.
	out, code := cli(t, "coordinator", "--listen", proctest.FreeAddr(t), "--data", t.TempDir(), "--token", token, "--max-workers-per-identity", "0")
	if code != 2 || !strings.Contains(out, "--max-workers-per-identity 0: must be at least 1") {
		t.Fatalf("--max-workers-per-identity 0: exit %d:\n%s", code, out)
	}
}

// TestLeasesCappedPerIdentity: worker ids declaring 65,536 cores each (the
// most a registration accepts) hold, all together, no more leases than the
// operator's --max-leases-per-identity; another credential's worker still
// gets work.
func TestLeasesCappedPerIdentity(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--lease-duration", "30s", "--max-leases-per-identity", "5")
	id := submitTest(t, addr, "match", "--each", "nodes=500", "--games", "4000", "--batch-pairs", "1")
	register := func(c arbiterv1.WorkerServiceClient, name string) string {
		r, err := c.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: name, Capabilities: &arbiterv1.WorkerCapabilities{
			Cores: 65536, Capabilities: []string{"game-pair"}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetWorkerId()
	}
	lease := func(c arbiterv1.WorkerServiceClient, wid string, asks int) int {
		got := 0
		for range asks {
			resp, err := c.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: wid})
			if err != nil {
				t.Fatal(err)
			}
			if l := resp.GetLease(); l != nil {
				if !strings.HasPrefix(l.GetUnit().GetUnitId(), id+".") {
					t.Fatalf("a lease of another job: %v", l.GetUnit().GetUnitId())
				}
				got++
			}
		}
		return got
	}
	mallory := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	held := lease(mallory, register(mallory, "big-1"), 20) + lease(mallory, register(mallory, "big-2"), 20)
	if held != 5 {
		t.Fatalf("two worker ids of one credential declaring 65,536 cores each hold %d leases, want the limit of 5", held)
	}
	other := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	if n := lease(other, register(other, "honest"), 3); n != 3 {
		t.Fatalf("another credential's worker got %d of 3 leases", n)
	}

	out, code := cli(t, "coordinator", "--listen", proctest.FreeAddr(t), "--data", t.TempDir(), "--token", token, "--max-leases-per-identity", "-1")
	if code != 2 || !strings.Contains(out, "--max-leases-per-identity -1") {
		t.Fatalf("--max-leases-per-identity -1: exit %d:\n%s", code, out)
	}
}
