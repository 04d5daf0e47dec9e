//go:build linux

package e2e

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
	"github.com/arbiter-chess/arbiter/verify"
)

// The movegen gate on the farm (perft-gate=1): the real binary's
// coordinator and worker, brokenperft's engine with planted movegen bugs,
// and the installed Stockfish.

// gateFarm starts a coordinator and one worker that allows Stockfish and
// brokenperft engines by name (castle: castling through check; ep: the
// e.p. capture that exposes the king; clean: no bug; searcher: searches on
// go perft), plus extra allow entries.
func gateFarm(t *testing.T, extraAllow ...string) (addr, client string, allow []string) {
	addr, _, client, allow = gateFarmHTTP(t, extraAllow...)
	return addr, client, allow
}

// gateFarmHTTP is gateFarm with the coordinator's web pages on httpAddr.
func gateFarmHTTP(t *testing.T, extraAllow ...string) (addr, httpAddr, client string, allow []string) {
	t.Helper()
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin)
	}
	bp := brokenPerft(t)
	addr, httpAddr = proctest.FreeAddr(t), proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--http", httpAddr)
	client = newCredential(t, addr, "client")
	allow = []string{"--engine-allow", "name=stockfish,cmd=" + stockfishBin,
		"--engine-allow", "name=castle,cmd=" + bp + `,args=-bug castle-through-check`,
		"--engine-allow", "name=ep,cmd=" + bp + `,args=-bug ep`,
		"--engine-allow", "name=clean,cmd=" + bp + `,args=-bug none`,
		"--engine-allow", "name=searcher,cmd=" + bp + `,args=-fail search`}
	for _, a := range extraAllow {
		allow = append(allow, "--engine-allow", a)
	}
	return addr, httpAddr, client, allow
}

// waitEnded waits until test id ends (done, failed or cancelled).
func waitEnded(t *testing.T, addr, id string) *arbiterv1.Job {
	t.Helper()
	conn := dial(t, addr, token)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		j := getJob(t, conn, id)
		switch j.GetState() {
		case arbiterv1.JobState_JOB_STATE_DONE, arbiterv1.JobState_JOB_STATE_FAILED, arbiterv1.JobState_JOB_STATE_CANCELLED:
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("test %s still %v after 3 minutes", id, j.GetState())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wantRefusedOnPage is wantRefused, and the test's web page shows the
// verdict beside its state.
func wantRefusedOnPage(t *testing.T, addr, httpAddr, id string, want ...string) {
	t.Helper()
	wantRefused(t, addr, id, want...)
	req, err := http.NewRequest("GET", "http://"+httpAddr+"/tests/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	page := html.UnescapeString(string(body))
	i := strings.Index(page, `id="status"`)
	if resp.StatusCode != http.StatusOK || i < 0 {
		t.Fatalf("test page: %s\n%s", resp.Status, page)
	}
	status := page[i:min(len(page), i+4000)]
	for _, w := range append([]string{"failed", "refused before its first game: movegen gate"}, want...) {
		if !strings.Contains(status, w) {
			t.Errorf("the test page's status lacks %q: %s", w, status)
		}
	}
}

// wantRefused checks that test id failed by the gate before its first
// game, with an error holding every want, and that status (text and
// --json) shows it.
func wantRefused(t *testing.T, addr, id string, want ...string) {
	t.Helper()
	j := waitEnded(t, addr, id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_FAILED {
		t.Fatalf("test %s: %v (%d games), want failed by the gate", id, j.GetState(), j.GetMatchProgress().GetGames())
	}
	if g := j.GetMatchProgress().GetGames(); g != 0 {
		t.Errorf("test %s: %d games counted before the gate's verdict", id, g)
	}
	for _, w := range append([]string{"refused before its first game: movegen gate"}, want...) {
		if !strings.Contains(j.GetError(), w) {
			t.Errorf("test %s: error lacks %q: %s", id, w, j.GetError())
		}
	}
	out, _ := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	if !strings.Contains(out, "movegen gate") || !strings.Contains(out, want[0]) {
		t.Errorf("arbiter status does not show the verdict: %s", out)
	}
	out, _ = cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	var st struct {
		State string `json:"state"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.State != "failed" || !strings.Contains(st.Error, want[0]) {
		t.Errorf("arbiter status --json does not show the verdict (%v): %s", err, out)
	}
}

// wantPlayed checks that test id ended done with its 2 games.
func wantPlayed(t *testing.T, addr, id string) {
	t.Helper()
	j := waitEnded(t, addr, id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetMatchProgress().GetGames() != 2 {
		t.Fatalf("test %s: %v with %d games (%s), want done with 2", id, j.GetState(), j.GetMatchProgress().GetGames(), j.GetError())
	}
}

// A test of an engine with a castling bug, and one with an e.p. bug, are
// refused before their first game, naming the engine, the exact position
// and the divide that differs; an engine that searches on go perft is
// refused saying so. Controls: Stockfish and the bug-free brokenperft
// pass the gate and their tests play; the castling engine without
// perft-gate plays (its illegal moves lose games): the refusal is the
// gate's.
func TestMovegenGateOnTheFarm(t *testing.T) {
	addr, httpAddr, client, allow := gateFarmHTTP(t)
	startWorker(t, addr, allow...)

	castle := clientSubmit(t, addr, client, "name=dev,cmd=castle,perft-gate=1", "name=sf,cmd=stockfish")
	wantRefusedOnPage(t, addr, httpAddr, castle, `engine "dev"`, "at position ", "castling through an attacked square", "divide at depth", "exact none (not a legal move)")
	ep := clientSubmit(t, addr, client, "name=dev-ep,cmd=ep,perft-gate=1", "name=sf,cmd=stockfish")
	wantRefused(t, addr, ep, `engine "dev-ep"`, "e.p. capture exposes the king", "divide at depth")
	searcher := clientSubmit(t, addr, client, "name=sf,cmd=stockfish", "name=nogo,cmd=searcher,perft-gate=1")
	wantRefused(t, addr, searcher, `engine "nogo" does not answer `+"`go perft`")

	wantPlayed(t, addr, clientSubmit(t, addr, client, "name=sf-a,cmd=stockfish,perft-gate=1", "name=sf-b,cmd=stockfish,perft-gate=1"))
	wantPlayed(t, addr, clientSubmit(t, addr, client, "name=clean,cmd=clean,perft-gate=1", "name=sf,cmd=stockfish"))
	wantPlayed(t, addr, clientSubmit(t, addr, client, "name=dev,cmd=castle", "name=sf,cmd=stockfish"))
}

// A worker killed while it runs the gate loses only its lease: another
// worker runs the gate again and the test is refused with the verdict.
// The first worker's engine hangs on its first go perft (brokenperft
// -fail hang -fail-once), so the kill lands inside the gate.
func TestMovegenGateRedoneAfterWorkerKill(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "gate-hang-once")
	hanging := "name=castle-hang,cmd=" + brokenPerft(t) + `,args=-bug castle-through-check -fail hang -fail-once ` + marker
	addr, client, allow := gateFarm(t, hanging)
	t.Cleanup(func() { killHangingEngines(t, marker) })

	first := startWorker(t, addr, allow...)
	id := clientSubmit(t, addr, client, "name=dev,cmd=castle-hang,perft-gate=1", "name=sf,cmd=stockfish")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(marker); err == nil {
			break // the engine is hanging in the gate's first query
		}
		if time.Now().After(deadline) {
			t.Fatal("the first worker never started the gate")
		}
		time.Sleep(50 * time.Millisecond)
	}
	first.kill(t)
	killHangingEngines(t, marker)
	startWorker(t, addr, allow...)
	wantRefused(t, addr, id, `engine "dev"`, "castling through an attacked square")
}

// killHangingEngines ends, by pid, the engines this test started with
// marker on their command line (a SIGKILLed worker leaves its engine).
func killHangingEngines(t *testing.T, marker string) {
	for _, p := range processesWith(marker) {
		pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0])
		if err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The local `arbiter match` (the real binary) with perft-gate=1: the
// castling engine is refused before its first game, exit 1, naming the
// position, in text and in --json; Stockfish passes and the match plays.
// The control: the same broken engine without the gate plays its games.
func TestMovegenGateLocalMatch(t *testing.T) {
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin)
	}
	bp := brokenPerft(t)
	broken := "name=dev,cmd=" + bp + ",args=-bug castle-through-check"
	match := func(args ...string) (string, int) {
		return cli(t, append([]string{"match", "--each", "nodes=500", "--games", "2", "--pgnout", filepath.Join(t.TempDir(), "games.pgn")}, args...)...)
	}

	out, code := match("--engine", broken+",perft-gate=1", "--engine", "name=sf,cmd="+stockfishBin)
	if code != 1 {
		t.Fatalf("broken engine with the gate: exit %d, want 1:\n%s", code, out)
	}
	for _, w := range []string{"match refused before its first game: movegen gate", `engine "dev"`, "at position r3k2r/", "castling through an attacked square", "divide at depth 1 there: e8c8: engine 1, exact none"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "Finished game") {
		t.Errorf("a game was played before the gate's verdict:\n%s", out)
	}

	out, code = match("--json", "--engine", broken+",perft-gate=1", "--engine", "name=sf,cmd="+stockfishBin)
	var res struct {
		Status string `json:"status"`
		Games  int    `json:"games"`
		Gates  []struct {
			Engine  string   `json:"engine"`
			Passed  bool     `json:"passed"`
			FEN     string   `json:"fen"`
			Illegal []string `json:"illegal"`
			Divide  []string `json:"divide"`
		} `json:"movegen_gate"`
	}
	if i := strings.Index(out, "{"); code != 1 || i < 0 || json.NewDecoder(strings.NewReader(out[i:])).Decode(&res) != nil {
		t.Fatalf("--json: exit %d, want 1 and a JSON result:\n%s", code, out)
	}
	if res.Status != "refused" || res.Games != 0 || len(res.Gates) != 1 {
		t.Fatalf("--json result %+v", res)
	}
	if g := res.Gates[0]; g.Engine != "dev" || g.Passed || g.FEN == "" || len(g.Illegal) == 0 || len(g.Divide) == 0 {
		t.Errorf("--json verdict %+v", g)
	}

	out, code = match("--engine", "name=sf-gated,cmd="+stockfishBin+",perft-gate=1", "--engine", "name=sf,cmd="+stockfishBin)
	if code != 0 || !strings.Contains(out, `movegen gate: engine "sf-gated" agrees with Arbiter on all `+strconv.Itoa(len(verify.GateSuite))+" positions") || strings.Count(out, "Finished game") != 2 {
		t.Fatalf("Stockfish with the gate: exit %d, want the gate passed and 2 games:\n%s", code, out)
	}
	out, code = match("--engine", broken, "--engine", "name=sf,cmd="+stockfishBin)
	if strings.Count(out, "Finished game") != 2 || strings.Contains(out, "movegen gate") {
		t.Fatalf("the broken engine without the gate: exit %d, want its 2 games played:\n%s", code, out)
	}
}

// A worker identity cannot fail a gated test with a made-up verdict: under
// a lease it really holds, failures that name an engine without the gate,
// call a legal move illegal, start from a position outside the suite or
// carry a message that is not one line are refused as malformed and the
// test runs on; a worker that does not advertise the gate gets no batch of
// it. The control: a real worker gates Stockfish and plays the test.
func TestForgedMovegenGateFailureRefused(t *testing.T) {
	addr, client, allow := gateFarm(t)
	id := clientSubmit(t, addr, client, "name=sf,cmd=stockfish,perft-gate=1", "name=base,builtin")
	ws := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	register := func(name string, caps ...string) string {
		reg, err := ws.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: name, Capabilities: &arbiterv1.WorkerCapabilities{
			Cores: 1, Capabilities: caps}})
		if err != nil {
			t.Fatal(err)
		}
		return reg.GetWorkerId()
	}

	old := register("old", capability.GamePair, capability.Builtin)
	resp, err := ws.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: old, Wait: durationpb.New(2 * time.Second)})
	if err != nil || resp.GetLease() != nil {
		t.Fatalf("a worker without the movegen-gate capability got %v (%v)", resp.GetLease(), err)
	}

	mallory := register("mallory", capability.GamePair, capability.Builtin, capability.MovegenGate)
	l := leaseOf(t, ws, mallory, id)
	start := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
	msg := `movegen gate: engine "sf" has a move generator bug at position ` + start
	forgeries := map[string]*arbiterv1.MovegenGateFailure{
		"an engine without the gate":    {Engine: "base", RootFen: start, Depth: 3, Fen: start, Illegal: []string{"e2e5"}, Message: strings.ReplaceAll(msg, `"sf"`, `"base"`)},
		"a legal move called illegal":   {Engine: "sf", RootFen: start, Depth: 3, Fen: start, Illegal: []string{"e2e4"}, Message: msg},
		"an illegal move called missed": {Engine: "sf", RootFen: start, Depth: 3, Fen: start, Missed: []string{"e2e5"}, Message: msg},
		"a root outside the suite":      {Engine: "sf", RootFen: "4k3/8/8/8/8/8/8/4K3 w - - 0 1", Depth: 3, Fen: "4k3/8/8/8/8/8/8/4K3 w - - 0 1", Illegal: []string{"e1e3"}, Message: msg},
		"a message on two lines":        {Engine: "sf", RootFen: start, Depth: 3, Fen: start, Illegal: []string{"e2e5"}, Message: msg + "\nFAKE"},
	}
	for what, f := range forgeries {
		_, err := ws.Submit(ctxT(t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: mallory, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
			Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: &arbiterv1.GamePairBatchResult{MovegenGateFailure: f}}})
		if status.Code(err) != codes.InvalidArgument || grpcerr.Reason(err) != apierr.ReasonMalformedResult {
			t.Fatalf("forged gate failure (%s): %v (reason %q), want InvalidArgument, %s", what, err, grpcerr.Reason(err), apierr.ReasonMalformedResult)
		}
		t.Logf("forged gate failure (%s) refused: %v", what, grpcerr.Message(err))
	}
	if j := getJob(t, dial(t, addr, token), id); j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("after the forged failures the test is %v (%s)", j.GetState(), j.GetError())
	}
	ws.Release(ctxT(t, 10*time.Second), &arbiterv1.ReleaseRequest{WorkerId: mallory, LeaseId: l.GetLeaseId(), Reason: "done forging"})

	startWorker(t, addr, allow...)
	wantPlayed(t, addr, id)
}

// An uploaded engine goes through the gate as the worker runs it, in the
// sandbox: brokenperft uploaded as a program with its castling bug is
// refused naming the position, and a source tree each worker builds whose
// engine searches on go perft (testdata/tinyuci) is refused saying it does
// not answer go perft. The control: the same upload without the bug plays.
func TestMovegenGateUploadedEngine(t *testing.T) {
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	upload := filepath.Join(t.TempDir(), "brokenperft")
	copyFile(t, brokenPerft(t), upload)
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	startWorkerIn(t, addr, "w1")
	submit := func(dev string) string {
		t.Helper()
		args := append([]string{"submit", "match"}, clientArgs(addr)...)
		out, code := cli(t, append(args, "--engine", dev, "--engine", "name=base,builtin", "--each", "nodes=300",
			"--openings", "file="+book+",order=random,seed=5", "--games", "2")...)
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, out)
		}
		return jobID(out)
	}
	wantRefused(t, addr, submit("name=dev,upload="+upload+",args=-bug castle-through-check,perft-gate=1"),
		`engine "dev"`, "castling through an attacked square", "divide at depth")
	wantRefused(t, addr, submit("name=tiny,source="+src+",build=make EXE=engine,perft-gate=1"),
		`engine "tiny" does not answer `+"`go perft`")
	wantPlayed(t, addr, submit("name=clean,upload="+upload+",args=-bug none,perft-gate=1"))
}

// An identity that has earned no trust (a worker token an account minted)
// cannot fail a gated test, even with a verdict that is true of chess
// ("lists e2e5" from the start position): its failure is discarded and
// its worker barred from the test with the verdict as its refusal; a
// trusted worker then gates Stockfish and plays it. (A trusted worker's
// verdict fails a test: TestMovegenGateOnTheFarm.)
func TestUntrustedGateFailureDoesNotFailATest(t *testing.T) {
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin)
	}
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	// Stockfish at fixed nodes is deterministic: untrusted identities get
	// batches of its tests (a replay can check them).
	coordinator(t, addr, data, "--http", httpAddr, "--replay-deterministic", "stockfish")
	client := newCredential(t, addr, "client")
	const password = "a-long-enough-password-45"
	addAccount(t, data, "mallory", password)
	ws := arbiterv1.NewWorkerServiceClient(dial(t, addr, mintWorkerToken(t, httpAddr, "mallory", password)))
	reg, err := ws.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: "mallory", Capabilities: &arbiterv1.WorkerCapabilities{
		Cores: 1, Capabilities: []string{capability.GamePair, capability.Builtin, capability.MovegenGate}}})
	if err != nil {
		t.Fatal(err)
	}
	wid := reg.GetWorkerId()
	id := clientSubmit(t, addr, client, "name=sf,cmd=stockfish,perft-gate=1,option.Threads=1", "name=base,builtin")

	start := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
	verdict := `movegen gate: engine "sf" has a move generator bug at position ` + start + ": lists illegal e2e5"
	l := leaseOf(t, ws, wid, id)
	r, err := ws.Submit(ctxT(t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: wid, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
		Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: &arbiterv1.GamePairBatchResult{MovegenGateFailure: &arbiterv1.MovegenGateFailure{
			Engine: "sf", RootFen: start, Depth: 3, Fen: start, Illegal: []string{"e2e5"}, Message: verdict}}}})
	if err != nil || r.GetOutcome() != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED {
		t.Fatalf("an untrusted identity's gate failure: %v (%v), want discarded", r.GetOutcome(), err)
	}
	j := getJob(t, dial(t, addr, token), id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("after an untrusted identity's gate failure the test is %v (%s)", j.GetState(), j.GetError())
	}
	barred := false
	for _, w := range j.GetMatchProgress().GetWorkers() {
		barred = barred || w.GetWorkerId() == wid && strings.Contains(w.GetReason(), "lists illegal e2e5")
	}
	if !barred {
		t.Errorf("the untrusted worker is not shown barred with its verdict: %v", j.GetMatchProgress().GetWorkers())
	}
	resp, err := ws.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: wid, Wait: durationpb.New(2 * time.Second)})
	if err != nil || resp.GetLease() != nil {
		t.Fatalf("the barred worker got %v (%v)", resp.GetLease(), err)
	}

	startWorker(t, addr, "--engine-allow", "name=stockfish,cmd="+stockfishBin)
	wantPlayed(t, addr, id)
}
