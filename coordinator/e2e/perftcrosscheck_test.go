//go:build unix

package e2e

// A perft job cross-checked by another program (submit perft --cross-check
// stockfish): a real coordinator process, two `arbiter worker` processes
// of their own identities that offer Debian's Stockfish as
// --verify-engine name=stockfish, and a worker of a third identity that
// lies on one unit, over the real gRPC API.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// arbiterOut runs the binary to the end and returns its output; a failure
// fails the test.
func arbiterOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("arbiter %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPerftCrossCheckCatchesLie: perft 6 of the start position, every unit
// cross-checked by Stockfish (--cross-check-fraction 1). The perft
// 8 is the same test with ARBITER_E2E_CROSSCHECK_DEPTH=8: minutes of
// Stockfish on the 2-core CI machine, so it is run by hand (its measured
// output is in docs/verify.md). The liar leases the first unit and adds one node to its first
// position: a plausible count. Stockfish on an honest worker counts the
// unit otherwise, the other honest worker's generator breaks the tie, the
// liar is outvoted, and the total is the published perft(6) exactly. The
// control is in the same run: the lie was accepted first (so without the
// cross-check the total would be one node too many, × the position's
// multiplicity), and every other unit's cross-check agrees.
func TestPerftCrossCheckCatchesLie(t *testing.T) {
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin + " (apt-get install stockfish)")
	}
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr, "--lease-duration", "10s")
	admin := dial(t, addr, token)
	liar := newFakeWorker(t, dial(t, addr, workerToken(t, addr)), "liar")

	depth, total, limit := crossCheckDepth(t)
	id := strings.TrimSpace(arbiterOut(t, "submit", "perft", "--coordinator", addr, "--token", token, "--depth", fmt.Sprint(depth),
		"--cross-check", "stockfish", "--cross-check-fraction", "1"))
	l := liar.lease()
	if l.GetUnit().GetJobId() != id || l.GetUnit().GetPerft().GetCrossCheckEngine() != "" {
		t.Fatalf("the liar leased %v, want a unit of %s for our generator", l.GetUnit(), id)
	}
	counts := compute(t, l)
	truth := counts[0]
	counts[0]++ // still plausible, but wrong
	if got, err := liar.submit(l, counts); err != nil || got != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("the lie: %v, %v; want accepted (nothing yet contradicts it)", got, err)
	}
	// Until a worker offers Stockfish, the job says what it waits for.
	blocked := waitFor(t, admin, id, 30*time.Second, "blocked naming stockfish", func(j *arbiterv1.Job) bool {
		return strings.Contains(j.GetProgress().GetBlocked(), "stockfish")
	})
	t.Logf("blocked: %s", blocked.GetProgress().GetBlocked())

	sf := "name=stockfish,cmd=" + stockfishBin
	startWorker(t, addr, "--name", "h1", "--verify-engine", sf)
	startWorker(t, addr, "--name", "h2", "--verify-engine", sf)
	final := waitFor(t, admin, id, limit, "job done", done)
	if final.GetNodes() != total {
		t.Fatalf("perft %d = %s, want %s", depth, final.GetNodes(), total)
	}
	cc, units := final.GetCrossCheck(), final.GetProgress().GetUnitsTotal()
	if cc.GetEngine() != "stockfish" || cc.GetUnitsSampled() != units || cc.GetUnitsChecked() != units || cc.GetUnitsAgreed() != units {
		t.Fatalf("cross-check %v of %d units; want every unit sampled and checked, and agreeing with the settled counts (the liar's after the tie-break)", cc, units)
	}
	var runs uint64
	for w, n := range cc.GetRunsByWorker() {
		runs += n
		if w == liar.id {
			t.Errorf("the liar, which offers no Stockfish, ran %d cross-checks", n)
		}
	}
	if runs != units {
		t.Errorf("cross-check runs by worker %v; want %d runs, one a unit", cc.GetRunsByWorker(), units)
	}
	liarID := ownerOf(t, admin, "liar")
	if len(cc.GetMismatches()) != 1 {
		t.Fatalf("mismatches %v; want the liar's unit alone", cc.GetMismatches())
	}
	m := cc.GetMismatches()[0]
	want := &arbiterv1.PerftCrossCheckMismatch{UnitId: l.GetUnit().GetUnitId(), Fen: l.GetUnit().GetPerft().GetFens()[0],
		Depth: l.GetUnit().GetPerft().GetDepth(), Ours: fmt.Sprint(truth + 1), OurWorker: liar.id, OurIdentity: liarID,
		Theirs: fmt.Sprint(truth), Settled: true, Outvoted: []string{liarID}}
	if m.GetUnitId() != want.UnitId || m.GetFen() != want.Fen || m.GetDepth() != want.Depth || m.GetOurs() != want.Ours ||
		m.GetOurWorker() != want.OurWorker || m.GetOurIdentity() != liarID || m.GetTheirs() != want.Theirs || !m.GetSettled() ||
		!slices.Equal(m.GetOutvoted(), want.Outvoted) || m.GetTheirIdentity() == liarID {
		t.Fatalf("mismatch %v;\nwant %v (their worker an honest one)", m, want)
	}
	if p := final.GetProgress(); p.GetMismatches() != 1 || p.GetMismatchesSettled() != 1 {
		t.Errorf("progress: %d mismatches, %d settled; want 1, 1", p.GetMismatches(), p.GetMismatchesSettled())
	}
	checkCrossShown(t, addr, httpAddr, id, m)
}

// crossCheckDepth is the depth of TestPerftCrossCheckCatchesLie
// (ARBITER_E2E_CROSSCHECK_DEPTH, 6 by default), the published perft of
// the start position there, and how long the job may take.
func crossCheckDepth(t *testing.T) (int, string, time.Duration) {
	published := map[string]string{"5": "4865609", "6": "119060324", "7": "3195901860", "8": "84998978956"}
	d := os.Getenv("ARBITER_E2E_CROSSCHECK_DEPTH")
	if d == "" {
		d = "6"
	}
	total, ok := published[d]
	if !ok {
		t.Fatalf("ARBITER_E2E_CROSSCHECK_DEPTH=%s: want 5 to 8", d)
	}
	depth := int(d[0] - '0')
	return depth, total, time.Duration(depth*depth*depth) * 5 * time.Second
}

// checkCrossShown checks that status, status --json and the job's page
// show the cross-check and the mismatch m.
func checkCrossShown(t *testing.T, addr, httpAddr, id string, m *arbiterv1.PerftCrossCheckMismatch) {
	t.Helper()
	text := arbiterOut(t, "status", id, "--coordinator", addr, "--token", token)
	t.Logf("arbiter status %s:\n%s", id, text)
	for _, want := range []string{"Cross:      stockfish on 100% of units", "1 mismatches", "mismatch on unit " + m.GetUnitId(),
		m.GetFen(), "ours " + m.GetOurs(), "stockfish " + m.GetTheirs(), "outvoted " + m.GetOutvoted()[0]} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	var js struct {
		Perft struct {
			CrossCheck struct {
				Engine     string `json:"engine"`
				Sampled    uint64 `json:"units_sampled"`
				Mismatches []struct {
					Unit   string      `json:"unit"`
					FEN    string      `json:"fen"`
					Ours   json.Number `json:"ours"`
					Theirs json.Number `json:"theirs"`
				} `json:"mismatches"`
			} `json:"cross_check"`
		} `json:"perft"`
	}
	raw := arbiterOut(t, "status", id, "--json", "--coordinator", addr, "--token", token)
	if err := json.Unmarshal([]byte(raw), &js); err != nil {
		t.Fatalf("status --json: %v\n%s", err, raw)
	}
	if c := js.Perft.CrossCheck; c.Engine != "stockfish" || len(c.Mismatches) != 1 || c.Mismatches[0].Unit != m.GetUnitId() ||
		c.Mismatches[0].FEN != m.GetFen() || c.Mismatches[0].Ours.String() != m.GetOurs() || c.Mismatches[0].Theirs.String() != m.GetTheirs() {
		t.Errorf("status --json cross_check %+v", c)
	}
	web := signInWeb(t, httpAddr, url.Values{"token": {token}})
	page := web.get(t, "/perft/"+id)
	for _, want := range []string{`id="cross-check"`, `id="cross-mismatches"`, `data-unit="` + m.GetUnitId() + `"`, m.GetFen()} {
		if !strings.Contains(page, want) {
			t.Errorf("the job's page lacks %q", want)
		}
	}
}

// TestPerftCrossCheckBadInput: a bad fraction, a fraction without a
// program, a cross-check without a cluster, and a sliced cross-check are
// refused with a message naming the flag or field; the coordinator refuses
// what the client would have (a client that skips its checks).
func TestPerftCrossCheckBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"submit", "perft", "--depth", "5", "--cross-check", "stockfish", "--cross-check-fraction", "2"}, "--cross-check-fraction 2: must be above 0 and at most 1"},
		{[]string{"submit", "perft", "--depth", "5", "--cross-check-fraction", "0.5"}, "--cross-check-fraction 0.5: needs --cross-check NAME"},
		{[]string{"perft", "--depth", "3", "--cross-check", "stockfish"}, "--cross-check: only with --coordinator"},
		{[]string{"perft", "--epd", "suite.epd", "--cross-check", "stockfish"}, "--cross-check: only with --coordinator"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("arbiter %s: %v\n%s\nwant exit 2 with %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	cl := localCluster(t, "", 0)
	jobs := arbiterv1.NewJobServiceClient(dial(t, cl.Addr(), token))
	for _, c := range []struct {
		spec *arbiterv1.PerftSpec
		want string
	}{
		{&arbiterv1.PerftSpec{Depth: 5, CrossCheck: "stockfish", CrossCheckFraction: 2}, "cross-check fraction 2"},
		{&arbiterv1.PerftSpec{Depth: 5, CrossCheckFraction: 0.5}, "without a cross-check program"},
		{&arbiterv1.PerftSpec{Depth: 5, CrossCheck: "rm -rf"}, `cross-check program "rm -rf"`},
		{&arbiterv1.PerftSpec{Depth: 6, CrossCheck: "stockfish", Slices: 4}, "slices 4 with cross-check stockfish"},
	} {
		_, err := jobs.SubmitPerft(ctxT(t, 10*time.Second), &arbiterv1.SubmitPerftRequest{Spec: c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("submit %v: %v; want an error with %q", c.spec, err, c.want)
		}
	}
	// The control: the same spec with a good fraction is taken.
	if _, err := jobs.SubmitPerft(ctxT(t, 10*time.Second), &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3,
		CrossCheck: "stockfish", CrossCheckFraction: 0.5}}); err != nil {
		t.Errorf("a good cross-check: %v", err)
	}
}

// TestPerftCrossCheckCoordinatorKilled: a coordinator killed (SIGKILL)
// while Stockfish cross-checks every unit of a perft 6, and restarted on
// the same data, resumes from the stored runs (ours and the program's,
// runs.program) and finishes exactly, every unit cross-checked once; the
// workers' leases from before the restart, cross-checks among them, are
// adopted or re-issued.
func TestPerftCrossCheckCoordinatorKilled(t *testing.T) {
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin + " (apt-get install stockfish)")
	}
	addr, data := proctest.FreeAddr(t), t.TempDir()
	c1 := coordinator(t, addr, data, "--lease-duration", "5s")
	sf := "name=stockfish,cmd=" + stockfishBin
	startWorker(t, addr, "--name", "h1", "--verify-engine", sf)
	startWorker(t, addr, "--name", "h2", "--verify-engine", sf)
	waitWorkers(t, dial(t, addr, token), 2)
	id := strings.TrimSpace(arbiterOut(t, "submit", "perft", "--coordinator", addr, "--token", token, "--depth", "6",
		"--split-ply", "3", "--cross-check", "stockfish", "--cross-check-fraction", "1"))
	before := waitFor(t, dial(t, addr, token), id, 2*time.Minute, "progress", func(j *arbiterv1.Job) bool {
		return j.GetCrossCheck().GetUnitsChecked() >= 5
	})
	c1.kill(t)
	if before.GetState() == arbiterv1.JobState_JOB_STATE_DONE {
		t.Fatal("the job finished before the kill: nothing to resume")
	}
	coordinator(t, addr, data, "--lease-duration", "5s")
	admin := dial(t, addr, token)
	final := waitFor(t, admin, id, 5*time.Minute, "job done", done)
	if final.GetNodes() != "119060324" {
		t.Fatalf("perft 6 after the restart = %s, want 119060324", final.GetNodes())
	}
	cc, units := final.GetCrossCheck(), final.GetProgress().GetUnitsTotal()
	var runs uint64
	for _, n := range cc.GetRunsByWorker() {
		runs += n
	}
	if cc.GetUnitsSampled() != units || cc.GetUnitsChecked() != units || cc.GetUnitsAgreed() != units || runs != units || len(cc.GetMismatches()) != 0 {
		t.Fatalf("after the restart: cross-check %v of %d units; want every unit checked once and agreeing", cc, units)
	}
	t.Logf("killed with %d of %d units cross-checked; done: %v", before.GetCrossCheck().GetUnitsChecked(), units, cc)
}

// TestPerftCrossCheckProgramFails: a cross-check program that crashes on
// every query (brokenperft -fail crash) gets its worker no further
// cross-check of a unit it failed, and the job says why it waits (the
// program's failure, named) instead of re-leasing the unit to the same
// worker for ever: the control is the count of failures in the worker's
// log, at most one a unit.
func TestPerftCrossCheckProgramFails(t *testing.T) {
	bp := brokenPerft(t)
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--lease-duration", "5s")
	admin := dial(t, addr, token)
	crasher := startWorker(t, addr, "--name", "crasher", "--verify-engine", "name=crashy,cmd="+bp+",args=-fail crash")
	startWorker(t, addr, "--name", "plain")
	waitWorkers(t, admin, 2)
	id := strings.TrimSpace(arbiterOut(t, "submit", "perft", "--coordinator", addr, "--token", token, "--depth", "4",
		"--cross-check", "crashy", "--cross-check-fraction", "1"))
	j := waitFor(t, admin, id, 2*time.Minute, "blocked on the program's failure", func(j *arbiterv1.Job) bool {
		return strings.Contains(j.GetProgress().GetBlocked(), "the program failed on worker")
	})
	t.Logf("blocked: %s", j.GetProgress().GetBlocked())
	time.Sleep(3 * time.Second) // time for any further (wrong) leases
	j = getJob(t, admin, id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || j.GetCrossCheck().GetUnitsChecked() != 0 {
		t.Fatalf("%v with %d units checked by a program that only crashes", j.GetState(), j.GetCrossCheck().GetUnitsChecked())
	}
	crasher.kill(t) // its output is all copied once it has exited
	failures := strings.Count(crasher.out.String(), "cross-check program failed")
	if units := int(j.GetProgress().GetUnitsTotal()); failures == 0 || failures > units {
		t.Fatalf("%d cross-check failures in the worker's log for %d units; want at least one and at most one a unit", failures, units)
	}
	t.Logf("%d failures for %d units", failures, j.GetProgress().GetUnitsTotal())
}
