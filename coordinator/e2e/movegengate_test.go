//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The movegen gate on the farm (perft-gate=1): the real binary's
// coordinator and worker, brokenperft's engine with planted movegen bugs,
// and the installed Stockfish.

var (
	brokenOnce sync.Once
	brokenBin  string
	brokenErr  error
)

// brokenPerftBin builds testing/testengines/brokenperft once.
func brokenPerftBin(t *testing.T) string {
	t.Helper()
	brokenOnce.Do(func() {
		brokenBin = filepath.Join(filepath.Dir(bin), "brokenperft")
		out, err := exec.Command("go", "build", "-o", brokenBin, "github.com/arbiter-chess/arbiter/testing/testengines/brokenperft").CombinedOutput()
		if err != nil {
			brokenErr = err
			brokenBin = string(out)
		}
	})
	if brokenErr != nil {
		t.Fatalf("building brokenperft: %v: %s", brokenErr, brokenBin)
	}
	return brokenBin
}

const stockfishBin = "/usr/games/stockfish"

// gateFarm starts a coordinator and one worker that allows Stockfish and
// brokenperft engines by name (castle: castling through check; ep: the
// e.p. capture that exposes the king; clean: no bug; searcher: searches on
// go perft), plus extra allow entries.
func gateFarm(t *testing.T, extraAllow ...string) (addr, client string, allow []string) {
	t.Helper()
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin)
	}
	bp := brokenPerftBin(t)
	addr = freeAddr(t)
	coordinator(t, addr, t.TempDir())
	client = newCredential(t, addr, "client")
	allow = []string{"--engine-allow", "name=stockfish,cmd=" + stockfishBin,
		"--engine-allow", "name=castle,cmd=" + bp + `,args=-bug castle-through-check`,
		"--engine-allow", "name=ep,cmd=" + bp + `,args=-bug ep`,
		"--engine-allow", "name=clean,cmd=" + bp + `,args=-bug none`,
		"--engine-allow", "name=searcher,cmd=" + bp + `,args=-fail search`}
	for _, a := range extraAllow {
		allow = append(allow, "--engine-allow", a)
	}
	return addr, client, allow
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
	addr, client, allow := gateFarm(t)
	startWorker(t, addr, allow...)

	castle := clientSubmit(t, addr, client, "name=dev,cmd=castle,perft-gate=1", "name=sf,cmd=stockfish")
	wantRefused(t, addr, castle, `engine "dev"`, "at position ", "castling through an attacked square", "divide at depth", "exact none (not a legal move)")
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
	hanging := "name=castle-hang,cmd=" + brokenPerftBin(t) + `,args=-bug castle-through-check -fail hang -fail-once ` + marker
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
