//go:build unix

package e2e

// The leader cut off from the database but not from its workers (a
// network split, docs/ha.md "Failure modes"): real processes, a real
// PostgreSQL, and a relay of the test's own between the leader and the
// database that goes silent the way a dropped network does.

import (
	"context"
	"encoding/json"
	"net/http"
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

// unitTimes is when a worker's JSON log says it finished each unit
// (perft units computed, batches played), in log order.
func unitTimes(log string) []time.Time {
	var ts []time.Time
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
		if at, err := time.Parse(time.RFC3339Nano, rec.TS); err == nil {
			ts = append(ts, at)
		}
	}
	return ts
}

// longestGapWithin is the longest stretch without a finished unit inside
// [from, to], counting from from and up to to (a worker that finished
// nothing in the window was idle for all of it).
func longestGapWithin(times []time.Time, from, to time.Time) time.Duration {
	prev, gap := from, time.Duration(0)
	for _, at := range times {
		if at.Before(from) || at.After(to) {
			continue
		}
		gap = max(gap, at.Sub(prev))
		prev = at
	}
	return max(gap, to.Sub(prev))
}

// checkPerft8 checks a perft 8 job of the start position against the
// published total and divide (a local perft 8 for reference would double
// the test's time).
func checkPerft8(t *testing.T, j *arbiterv1.Job) {
	t.Helper()
	if j.GetNodes() != "84998978956" {
		t.Fatalf("perft 8 = %s, want 84998978956", j.GetNodes())
	}
	var sum uint64
	divide := map[string]string{}
	for _, d := range j.GetDivide() {
		n, err := strconv.ParseUint(d.GetNodes(), 10, 64)
		if err != nil {
			t.Fatalf("divide %s: %q: %v", d.GetMove(), d.GetNodes(), err)
		}
		sum += n
		divide[d.GetMove()] = d.GetNodes()
	}
	if len(divide) != 20 || sum != 84998978956 || divide["e2e4"] != "8102108221" || divide["a2a3"] != "2863411653" {
		t.Fatalf("perft 8 divide wrong (sum %d): %v", sum, divide)
	}
}

// answer is one observation of a coordinator: when the request started
// and ended, and whether it said (or showed, by answering gRPC) that it
// serves as the leader.
type answer struct {
	start, end time.Time
	serving    bool
}

// TestNetworkSplit: coordinator A reaches PostgreSQL only through a relay
// and leads, B reaches it directly and follows; worker 0 has both
// addresses, worker 1 only A's; a verified perft 8 job runs. The relay is
// cut (silence both ways, new connections refused). A must stop serving
// (its /readyz and its gRPC) before B leads, and exit saying it lost the
// lead because its lock went unconfirmed; B leads after the timeout;
// worker 0 goes on with B within the lease duration plus 5 s; worker 1,
// which knows only A, finishes nothing while A is gone and works again
// once A, restarted after the heal, relays to B as a follower. The perft
// total and divide are exact, no unit has two runs of one worker, and
// status is the same from both addresses.
func TestNetworkSplit(t *testing.T) {
	pg := pgtest.StartOwn(t)
	h := &haCluster{t: t, dsn: pg.NewDatabase(t), data: t.TempDir(), coords: make([]*haCoordinator, 2)}
	pgDatabases.Store(h.data, h.dsn) // for openStoreDB
	rel := startRelay(t, pg.Addr())
	if !strings.Contains(h.dsn, "@"+pg.Addr()+"/") {
		t.Fatalf("the database URL %q does not name the server's address %s", h.dsn, pg.Addr())
	}
	h.stores = []string{strings.Replace(h.dsn, "@"+pg.Addr()+"/", "@"+rel.Addr()+"/", 1), ""}
	for range 2 {
		h.grpc = append(h.grpc, proctest.FreeAddr(t))
		h.http = append(h.http, proctest.FreeAddr(t))
	}
	const a, b = 0, 1
	leads := func(i int) bool {
		code, body := h.readyz(i)
		return code == http.StatusOK && strings.Contains(body, "ready: leader")
	}
	// A first, so that it leads; then B.
	h.start(a)
	for deadline := time.Now().Add(30 * time.Second); !leads(a); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_, body := h.readyz(a)
			t.Fatalf("coordinator A does not lead: %s", body)
		}
	}
	h.start(b)
	if l := h.leader(30 * time.Second); l != a {
		t.Fatalf("coordinator %d leads, want A", l)
	}
	list := h.grpc[a] + "," + h.grpc[b]
	conn := dial(t, list, token)
	tokens := []string{workerToken(t, list), workerToken(t, list)}
	addrOf := []string{list, h.grpc[a]}
	var workers []*proc
	for i, tok := range tokens {
		workers = append(workers, start(t, "worker-"+strconv.Itoa(i), "worker", "--coordinator", addrOf[i], "--token", tok, "--threads", "1", "--hash", "1",
			"--name", "split-"+strconv.Itoa(i), "--log-level", "debug"))
	}
	// Perft 8 (84,998,978,956) with a 1 MB hash: about 15 s of work for
	// each of two single-thread workers on a quiet machine, long enough to
	// run through the split. Perft 7 took under 3 s once the
	// generator got faster, and the job ended before the cut.
	perft := submit(t, conn, &arbiterv1.PerftSpec{Depth: 8, SplitPly: 3, VerifyFraction: 0.2})
	time.Sleep(3 * time.Second)
	if j := getJob(t, conn, perft.GetJobId()); done(j) {
		t.Fatal("the perft job finished before the split: nothing to measure")
	}
	for i, w := range workers {
		if len(unitTimes(w.out.String())) == 0 {
			t.Fatalf("worker %d finished no unit before the split", i)
		}
	}

	// Watch A (its /readyz, and its gRPC answering on a connection of its
	// own) and B (/readyz) from the cut until B leads and A has exited.
	connA := dial(t, h.grpc[a], token)
	var mu sync.Mutex
	var readyA, grpcA, readyB []answer
	watch := func(into *[]answer, probe func() bool, stop <-chan struct{}) {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := time.Now()
			ok := probe()
			mu.Lock()
			*into = append(*into, answer{start: s, end: time.Now(), serving: ok})
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range []struct {
		into  *[]answer
		probe func() bool
	}{
		{&readyA, func() bool { return leads(a) }},
		{&grpcA, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := arbiterv1.NewJobServiceClient(connA).GetJob(ctx, &arbiterv1.GetJobRequest{JobId: perft.GetJobId()})
			return err == nil
		}},
		{&readyB, func() bool { return leads(b) }},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); watch(w.into, w.probe, stop) }()
	}
	time.Sleep(300 * time.Millisecond) // A seen serving before the cut
	cutAt := time.Now()
	rel.Cut()
	t.Logf("relay between A and PostgreSQL cut at %s", cutAt.Format("15:04:05.000"))
	var exitedAt time.Time
	select {
	case <-h.coords[a].exited:
		exitedAt = time.Now()
	case <-time.After(20 * time.Second):
		close(stop)
		wg.Wait()
		// Where it hangs: the Go runtime prints every goroutine on SIGQUIT.
		h.coords[a].p.cmd.Process.Signal(syscall.SIGQUIT)
		<-h.coords[a].exited
		t.Fatalf("A still ran 20 s after losing the database; its goroutines:\n%s", h.coords[a].p.out.String())
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(readyB)
		bLeads := n > 0 && readyB[n-1].serving
		mu.Unlock()
		if bLeads {
			break
		}
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			_, body := h.readyz(b)
			t.Fatalf("B does not lead 20 s after A exited: %s", body)
		}
	}
	close(stop)
	wg.Wait()
	outA := h.coords[a].p.out.String()
	if code := h.coords[a].p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(outA, "lost the lead") || !strings.Contains(outA, "lock not confirmed") {
		t.Fatalf("A exited %d without saying it lost the lead for an unconfirmed lock:\n%s", code, lastLines(outA, 20))
	}
	// Never both: every answer in which A served started before B was
	// first seen leading had ended.
	lastServed := func(as []answer) (last time.Time) {
		for _, x := range as {
			if x.serving && x.start.After(last) {
				last = x.start
			}
		}
		return last
	}
	firstB := time.Time{}
	for _, x := range readyB {
		if x.serving {
			firstB = x.end
			break
		}
	}
	lastReadyA, lastGRPCA := lastServed(readyA), lastServed(grpcA)
	if lastReadyA.IsZero() || lastGRPCA.IsZero() {
		t.Fatalf("A was never seen serving (readyz %v, gRPC %v): the watch is broken", lastReadyA, lastGRPCA)
	}
	for what, last := range map[string]time.Time{"/readyz said leader": lastReadyA, "gRPC answered": lastGRPCA} {
		if !last.Before(firstB) {
			t.Errorf("A's %s at %s, after B led at %s: two coordinators served at once", what, last.Format("15:04:05.000"), firstB.Format("15:04:05.000"))
		}
	}
	t.Logf("after the cut: A's /readyz last said leader %v, its gRPC last answered %v, it exited after %v; B led after %v",
		lastReadyA.Sub(cutAt).Round(time.Millisecond), lastGRPCA.Sub(cutAt).Round(time.Millisecond),
		exitedAt.Sub(cutAt).Round(time.Millisecond), firstB.Sub(cutAt).Round(time.Millisecond))
	for _, line := range strings.Split(outA, "\n") {
		if strings.Contains(line, "lock not confirmed") {
			t.Logf("A: %s", strings.TrimSpace(line))
			break
		}
	}

	// B serves; worker 1 has only A's address, which refuses connections.
	time.Sleep(4 * time.Second)
	restartAt := time.Now()
	rel.Heal()
	h.start(a)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body := h.readyz(a)
		if code == http.StatusOK && strings.Contains(body, "ready: follower") {
			t.Logf("A after the heal: %s", body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A restarted after the heal is not a ready follower: %d %s", code, body)
		}
	}
	if l := h.leader(10 * time.Second); l != b {
		t.Fatalf("after A's return coordinator %d leads, want B", l)
	}
	time.Sleep(3 * time.Second)
	h.sameStatusEverywhere("after the split", perft.GetJobId())

	waitFor(t, conn, perft.GetJobId(), 3*time.Minute, "perft done", done)
	doneAt := time.Now()
	checkPerft8(t, getJob(t, conn, perft.GetJobId()))
	db, err := openStoreDB(h.data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var dupRuns int
	if err := db.QueryRow("SELECT COUNT(*) FROM (SELECT unit_id, worker_id FROM runs GROUP BY unit_id, worker_id HAVING COUNT(*) > 1) AS dup").Scan(&dupRuns); err != nil || dupRuns != 0 {
		t.Fatalf("%d units with two runs of one worker (%v)", dupRuns, err)
	}
	h.sameStatusEverywhere("done", perft.GetJobId())

	// Worker 0 (both addresses): idle no longer than the lease duration
	// plus 5 s around the split. Worker 1 (A's address only): nothing
	// finished from A's exit (plus a second for a unit it was computing)
	// until A was back, and work again once A relays to B.
	units0, units1 := unitTimes(workers[0].out.String()), unitTimes(workers[1].out.String())
	idle0 := longestGapWithin(units0, cutAt, restartAt)
	t.Logf("worker 0 (A and B): longest stretch without finishing a unit from the cut to A's restart: %v", idle0.Round(time.Millisecond))
	if idle0 > 7*time.Second {
		t.Errorf("worker 0 idle for %v after the cut: more than the lease duration plus 5 s", idle0)
	}
	var during, after int
	for _, at := range units1 {
		switch {
		case at.After(exitedAt.Add(time.Second)) && at.Before(restartAt):
			during++
		case at.After(restartAt):
			after++
		}
	}
	idle1 := longestGapWithin(units1, cutAt, doneAt)
	t.Logf("worker 1 (A only): %d units finished while A was gone, %d after A's restart; idle from the cut for %v (A gone %v)",
		during, after, idle1.Round(time.Millisecond), restartAt.Sub(exitedAt).Round(time.Millisecond))
	if during != 0 {
		t.Errorf("worker 1 finished %d units while the only coordinator it knows was gone", during)
	}
	if after == 0 && len(units0) > 0 && units0[len(units0)-1].Sub(restartAt) > 3*time.Second {
		t.Errorf("worker 1 finished nothing after A came back as a follower, though worker 0 worked on until %s", units0[len(units0)-1].Format("15:04:05.000"))
	}
}
