//go:build unix

package e2e

// Several coordinators on one PostgreSQL (docs/ha.md): real processes, a
// real server of the test's own, leaders killed, paused and a database
// restarted while a verified perft job and an SPRT run.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// haCoordinator is one coordinator process of a shared database, with
// its own wait (to tell when it exits by itself).
type haCoordinator struct {
	i      int
	p      *proc
	exited chan struct{}
}

type haCluster struct {
	t            *testing.T
	dsn, data    string
	grpc, http   []string
	coords       []*haCoordinator
	stores       []string        // coordinator i's --store when set ("" or none: dsn)
	leaderKilled []time.Duration // from each leader's death to a new leader serving
}

func (h *haCluster) start(i int) {
	t := h.t
	t.Helper()
	name := "coordinator-" + strconv.Itoa(i)
	dsn := h.dsn
	if i < len(h.stores) && h.stores[i] != "" {
		dsn = h.stores[i]
	}
	cmd := exec.Command(bin, "coordinator", "--listen", h.grpc[i], "--http", h.http[i], "--data", h.data,
		"--token", token, "--store", dsn, "--lease-duration", "2s", "--unit-duration", "100ms", "--leader-timeout", "2s",
		"--log-level", "info")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &haCoordinator{i: i, p: &proc{cmd: cmd, out: &out}, exited: make(chan struct{})}
	// The one Wait of this process; the cleanup waits on exited.
	go func() { cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Process.Signal(syscall.SIGCONT)
		<-c.exited
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, lastLines(out.String(), 40))
		}
	})
	h.coords[i] = c
}

// readyz is coordinator i's /readyz (code 0: no answer).
func (h *haCluster) readyz(i int) (int, string) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + h.http[i] + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// leader waits until exactly one coordinator says it leads, restarting
// any that exited by itself (as a supervisor would), and returns it.
func (h *haCluster) leader(limit time.Duration) int {
	t := h.t
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		h.restartExited()
		leaders := []int{}
		for i := range h.coords {
			if code, body := h.readyz(i); code == http.StatusOK && strings.Contains(body, "ready: leader") {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) > 1 {
			t.Fatalf("coordinators %v all say they lead", leaders)
		}
		if len(leaders) == 1 {
			return leaders[0]
		}
		if time.Now().After(deadline) {
			for i := range h.coords {
				_, body := h.readyz(i)
				t.Logf("coordinator %d: %s", i, body)
			}
			t.Fatalf("no leader within %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *haCluster) restartExited() {
	for i, c := range h.coords {
		select {
		case <-c.exited:
			h.t.Logf("coordinator %d exited by itself (%v): restarting it; it said:\n%s", i, c.p.cmd.ProcessState, lastLines(c.p.out.String(), 6))
			h.start(i)
		default:
		}
	}
}

func (h *haCluster) kill(i int) {
	h.coords[i].p.cmd.Process.Signal(syscall.SIGKILL)
	<-h.coords[i].exited
}

// killLeader SIGKILLs the leader, measures until another serves, and
// restarts the dead one (it comes back as a follower).
func (h *haCluster) killLeader() {
	l := h.leader(30 * time.Second)
	at := time.Now()
	h.kill(l)
	h.start(l)
	n := h.leader(30 * time.Second)
	h.leaderKilled = append(h.leaderKilled, time.Since(at))
	h.t.Logf("leader %d killed; %d leads after %v", l, n, time.Since(at).Round(time.Millisecond))
}

// statusOf runs `arbiter status --json [id]` against one coordinator
// address alone (no t.Fatal: it runs in goroutines).
func statusOf(addr, id string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	args := []string{"status", "--json"}
	if id != "" {
		args = append(args, id)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, clientArgs(addr)...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// sameStatusEverywhere asks each coordinator's address separately for
// `status --json` (the list, then each job) and checks that all answer
// alike: followers relay to the leader, so every coordinator's answer is
// the leader's. The three are asked at once, and again if they differ,
// since a running job moves between two calls; a coordinator that keeps
// failing, or answers that never agree, fail the test. It returns the
// answers, joined.
func (h *haCluster) sameStatusEverywhere(when string, ids ...string) string {
	t := h.t
	t.Helper()
	var all string
	rounds := 0
	for _, id := range append([]string{""}, ids...) {
		deadline := time.Now().Add(15 * time.Second)
		for round := 1; ; round++ {
			// A coordinator that lost the lead exits a little after the
			// new leader is seen (up to --leader-timeout): restart it, as
			// its supervisor would, and ask again.
			h.restartExited()
			outs, errs := make([]string, len(h.grpc)), make([]error, len(h.grpc))
			var wg sync.WaitGroup
			for i, addr := range h.grpc {
				wg.Add(1)
				go func() { defer wg.Done(); outs[i], errs[i] = statusOf(addr, id) }()
			}
			wg.Wait()
			same := true
			for i := range outs {
				same = same && errs[i] == nil && outs[i] == outs[0]
			}
			if same {
				all += outs[0]
				rounds = max(rounds, round)
				break
			}
			if time.Now().After(deadline) {
				for i := range outs {
					t.Logf("coordinator %d (%s): %v\n%s", i, h.grpc[i], errs[i], outs[i])
				}
				t.Fatalf("%s: arbiter %s differs between coordinators (or fails) in %d rounds", when, strings.TrimSpace("status --json "+id), round)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("%s: status --json of the list and %d jobs identical from the %d coordinators (at most %d rounds)", when, len(ids), len(h.grpc), rounds)
	return all
}

// TestChaosSeveralCoordinators: three coordinators on one PostgreSQL,
// two workers, one given the three addresses and one only a follower's,
// a perft 6 job with verification and an SPRT. The leader is SIGKILLed
// three times, a follower once, the leader is paused (SIGSTOP) past the
// leader timeout once, and PostgreSQL is restarted once. Afterwards: the
// perft total and divide are exact, the SPRT's counts equal the stored
// batches and PGNs, no batch or run is counted twice, the paused leader
// exited on waking, no worker went idle longer than the lease plus 5 s,
// and status is identical from each coordinator's address, asked
// separately at several points while the jobs run and after, and from
// two successive leaders.
func TestChaosSeveralCoordinators(t *testing.T) {
	pg := pgtest.StartOwn(t)
	h := &haCluster{t: t, dsn: pg.NewDatabase(t), data: t.TempDir(), coords: make([]*haCoordinator, 3)}
	pgDatabases.Store(h.data, h.dsn) // for storeCounts and openStoreDB
	for range 3 {
		h.grpc = append(h.grpc, proctest.FreeAddr(t))
		h.http = append(h.http, proctest.FreeAddr(t))
	}
	for i := range 3 {
		h.start(i)
	}
	first := h.leader(30 * time.Second)
	list := strings.Join(h.grpc, ",")
	conn := dial(t, list, token)
	tokens := []string{workerToken(t, list), workerToken(t, list)}
	// Worker 0 has every address; worker 1 only a follower's, which
	// relays to whoever leads (and leads itself when its turn comes).
	addrOf := []string{list, h.grpc[(first+2)%3]}
	var workers []*proc
	for i, tok := range tokens {
		// Debug: a line per perft unit computed (and per batch played),
		// from which idle stretches are measured.
		workers = append(workers, start(t, "worker-"+strconv.Itoa(i), "worker", "--coordinator", addrOf[i], "--token", tok, "--threads", "1", "--hash", "16",
			"--name", "ha-"+strconv.Itoa(i), "--log-level", "debug"))
	}
	perft := submit(t, conn, &arbiterv1.PerftSpec{Depth: 6, SplitPly: 3, VerifyFraction: 0.2})
	sprt := submitTest(t, list, "sprt", "--each", "nodes=400", "--sprt", "elo0=0,elo1=40,model=logistic", "--batch-pairs", "2")

	pause := func() { time.Sleep(3 * time.Second) }
	pause()
	h.sameStatusEverywhere("running", perft.GetJobId(), sprt)
	firstKill := time.Now()
	h.killLeader()
	pause()
	// A follower killed: nothing changes for the workers.
	l := h.leader(30 * time.Second)
	f := (l + 1) % 3
	h.kill(f)
	h.start(f)
	if n := h.leader(30 * time.Second); n != l {
		t.Fatalf("killing follower %d moved the lead from %d to %d", f, l, n)
	}
	pause()
	h.sameStatusEverywhere("after a follower's death", perft.GetJobId(), sprt)
	h.killLeader()
	pause()
	// The leader paused past its timeout: another takes over; woken up,
	// the paused one finds it has lost and exits.
	l = h.leader(30 * time.Second)
	h.coords[l].p.cmd.Process.Signal(syscall.SIGSTOP)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := -1
		for i := range h.coords {
			if i != l {
				if code, body := h.readyz(i); code == http.StatusOK && strings.Contains(body, "ready: leader") {
					n = i
				}
			}
		}
		if n >= 0 {
			t.Logf("leader %d paused; %d took over", l, n)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nobody took over from a paused leader")
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.coords[l].p.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-h.coords[l].exited:
		if out := h.coords[l].p.out.String(); !strings.Contains(out, "lost the lead") || h.coords[l].p.cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("the paused leader exited without saying it lost the lead:\n%s", lastLines(out, 20))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the paused leader still runs 15 s after waking up")
	}
	h.start(l)
	pause()
	pg.Restart(t, time.Second)
	t.Log("PostgreSQL restarted")
	h.leader(60 * time.Second)
	h.sameStatusEverywhere("after PostgreSQL's restart", perft.GetJobId(), sprt)
	pause()
	h.killLeader()

	waitFor(t, conn, perft.GetJobId(), 4*time.Minute, "perft done", done)
	job := waitFor(t, conn, sprt, 4*time.Minute, "SPRT done", done)
	want := localPerft(t, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6)
	checkDivide(t, getJob(t, conn, perft.GetJobId()), want)
	got, st := progressCounts(job), storeCounts(t, h.data, sprt)
	if got.pairs != st.pairs || got.penta != st.penta || st.pgns != 2*st.pairs || st.batches != st.distinctIdx || got.batches != st.batches {
		t.Fatalf("SPRT counts %+v, store %+v: want equal, two PGNs per pair, one row per batch", got, st)
	}
	db, err := openStoreDB(h.data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var dupRuns int
	if err := db.QueryRow("SELECT COUNT(*) FROM (SELECT unit_id, worker_id FROM runs GROUP BY unit_id, worker_id HAVING COUNT(*) > 1) AS dup").Scan(&dupRuns); err != nil || dupRuns != 0 {
		t.Fatalf("%d units with two runs of one worker (%v)", dupRuns, err)
	}
	// Status as the leader tells it from every address, then as the
	// next one does.
	before := h.sameStatusEverywhere("done", perft.GetJobId(), sprt)
	h.killLeader()
	if after := h.sameStatusEverywhere("done, after the next leader took over", perft.GetJobId(), sprt); after != before {
		t.Fatalf("status differs between leaders:\n%s\n---\n%s", before, after)
	}
	var worst time.Duration
	for _, d := range h.leaderKilled {
		worst = max(worst, d)
	}
	// No worker idle for longer than the lease duration (2 s) plus 5 s:
	// the longest stretch between two units it finished.
	var lastUnits []time.Time
	for i, w := range workers {
		gap, at := longestGap(t, w.out.String())
		last := lastUnit(w.out.String())
		lastUnits = append(lastUnits, last)
		t.Logf("worker %d: longest stretch without finishing a unit: %v (ending %s); last unit %s", i, gap.Round(time.Millisecond), at.Format("15:04:05.000"), last.Format("15:04:05.000"))
		if gap > 7*time.Second {
			t.Errorf("worker %d idle for %v (ending %s): more than the lease duration plus 5 s", i, gap, at.Format("15:04:05.000"))
		}
	}
	// The worker that has only a follower's address worked on after the
	// first leader's death, if there was work left a while after it
	// (the gaps above cannot see a worker that stopped for good).
	t.Logf("first leader killed at %s", firstKill.Format("15:04:05.000"))
	if lastUnits[0].Sub(firstKill) > 3*time.Second && !lastUnits[1].After(firstKill) {
		t.Errorf("worker 1 (only a follower's address) finished nothing after the leader was killed at %s; worker 0 did until %s",
			firstKill.Format("15:04:05.000"), lastUnits[0].Format("15:04:05.000"))
	}
	t.Logf("SPRT: %d pairs in %d batches, %d PGNs; perft exact; leader deaths to a new leader serving: %v (worst %v)",
		st.pairs, st.batches, st.pgns, h.leaderKilled, worst.Round(time.Millisecond))
}

// lastUnit is when a worker's JSON log says it last finished a unit
// (zero: never).
func lastUnit(log string) time.Time {
	var last time.Time
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"msg":"unit computed"`) && !strings.Contains(line, `"msg":"batch played"`) {
			continue
		}
		var rec struct {
			TS string `json:"ts"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if ts, err := time.Parse(time.RFC3339Nano, rec.TS); err == nil && ts.After(last) {
			last = ts
		}
	}
	return last
}

// longestGap is the longest stretch between two consecutive units a
// worker's JSON log says it finished (perft units computed, batches
// played), and when it ended.
func longestGap(t *testing.T, log string) (time.Duration, time.Time) {
	t.Helper()
	var prev, at time.Time
	var gap time.Duration
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"msg":"unit computed"`) && !strings.Contains(line, `"msg":"batch played"`) {
			continue
		}
		var rec struct {
			TS string `json:"ts"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, rec.TS)
		if err != nil {
			t.Fatalf("worker log time %q: %v", rec.TS, err)
		}
		n++
		if !prev.IsZero() && ts.Sub(prev) > gap {
			gap, at = ts.Sub(prev), ts
		}
		prev = ts
	}
	if n < 10 {
		t.Fatalf("the worker's log names %d finished units: is it logging at debug in JSON?", n)
	}
	return gap, at
}
