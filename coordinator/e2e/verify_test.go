//go:build unix

package e2e

// Distributed `arbiter verify`: the real binary as coordinator, workers
// (with and without the engine under test) and client, on loopback.

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/testing/proctest"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

var (
	bpOnce sync.Once
	bpPath string
	bpErr  error
)

// brokenPerft builds the deliberately broken test engine once.
func brokenPerft(t *testing.T) string {
	t.Helper()
	bpOnce.Do(func() {
		bpPath = filepath.Join(filepath.Dir(bin), "brokenperft")
		out, err := exec.Command("go", "build", "-o", bpPath, "github.com/arbiter-chess/arbiter/testing/testengines/brokenperft").CombinedOutput()
		if err != nil {
			bpErr = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if bpErr != nil {
		t.Fatal(bpErr)
	}
	return bpPath
}

// runVerify runs `arbiter verify --cluster addr ...` and returns its
// stdout, stderr and exit status.
func runVerify(t *testing.T, addr string, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"verify", "--cluster", addr, "--token", token}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("verify %v: no answer within %v\nstdout:\n%s\nstderr:\n%s", args, limit, out.String(), errOut.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// bugCases: each broken engine's bug, a position that shows it, and what
// the report must say.
var bugCases = []struct {
	bug, fen string
	depth    int
	want     []string
}{
	{"ep", "8/2p5/8/KP5r/8/8/8/4k3 b - - 0 1", 4,
		[]string{"after c7c5", "illegal move listed: b5c6", "e.p. capture exposes the king along the rank"}},
	{"castle-through-check", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3,
		[]string{"illegal move listed: e1g1", "castling through an attacked square (f1, attacked by a6)"}},
	{"underpromo", "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", 3,
		[]string{"legal move missed:   a7a8n", "missing under-promotion to knight"}},
	{"960-king-stays", "nqbbrnkr/5ppp/3pp3/pp6/P2pPP2/8/1PP3PP/NQBBRNKR w HEhe - 0 7", 3,
		[]string{"(Chess960)", "legal move missed:   g1h1", "missing Chess960 castling kingside where the king does not move"}},
	{"960-rook-dest", "6k1/8/8/8/8/8/8/5K1R b H - 0 1", 3,
		[]string{"legal move missed:   f1h1", "the rook's destination f1 is the king's own square"}},
}

// workersOf reads the client's "by worker" line: worker id → units.
func workersOf(t *testing.T, out string) map[string]int {
	t.Helper()
	i := strings.Index(out, "(by worker: ")
	if i < 0 {
		t.Fatalf("no worker line in:\n%s", out)
	}
	line := out[i+len("(by worker: "):]
	line = line[:strings.IndexByte(line, ')')]
	m := map[string]int{}
	for _, item := range strings.Split(line, ", ") {
		id, n, _ := strings.Cut(item, " ")
		m[id], _ = strconv.Atoi(n)
	}
	return m
}

// TestVerifyClusterUp: `arbiter up` with two local workers that have the
// broken engine finds and explains every bug, and nothing in the control.
func TestVerifyClusterUp(t *testing.T) {
	bp := brokenPerft(t)
	addr, httpAddr := proctest.FreeAddr(t), proctest.FreeAddr(t)
	start(t, "up", "up", "--temp", "--workers", "2", "--listen", addr, "--http", httpAddr, "--token", token, "--verify-engine", "cmd="+bp)
	coordinatorUp(t, addr)
	waitWorkers(t, dial(t, addr, token), 2)
	seen := map[string]int{} // worker id → units over every session
	reported := regexp.MustCompile(`arbiter verify: session (\S+) reported to the coordinator \(1 positions with findings kept; page /verify/(\S+)\)`)
	for _, c := range bugCases {
		out, errOut, code := runVerify(t, addr, time.Minute, "--engine", "cmd="+bp+",args=-bug "+c.bug, "--fen", c.fen, "--depth", strconv.Itoa(c.depth))
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s%s", c.bug, code, out, errOut)
			continue
		}
		for _, w := range append(c.want, "BUG", "(cluster)", "engine queries as units") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: report lacks %q:\n%s", c.bug, w, out)
			}
		}
		// The client reported its findings: the coordinator's page of the
		// session shows the reason.
		m := reported.FindStringSubmatch(errOut)
		if m == nil || m[1] != m[2] {
			t.Errorf("%s: no report to the coordinator in stderr:\n%s", c.bug, errOut)
			continue
		}
		resp, err := http.Get("http://" + httpAddr + "/verify/" + m[1])
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if reason := c.want[len(c.want)-1]; resp.StatusCode != http.StatusOK || !strings.Contains(html.UnescapeString(string(page)), reason) {
			t.Errorf("%s: /verify/%s: %d, want %q in the page", c.bug, m[1], resp.StatusCode, reason)
		}
		for w, n := range workersOf(t, out) {
			seen[w] += n
		}
	}
	// Which worker takes a session's units is the lease race's; over the
	// sessions, both must have worked (one may start late on a busy machine).
	if len(seen) != 2 {
		t.Errorf("units of the bug sessions went to %v, want both workers", seen)
	}
	// The control: the same positions and 12 random ones, no bug.
	args := []string{"--engine", "cmd=" + bp + ",args=-bug none", "--random", "12", "--seed", "3", "--depth", "3"}
	out, errOut, code := runVerify(t, addr, time.Minute, args...)
	if code != 0 || !strings.Contains(out, "12 positions at depth 3: 12 ok, 0 with bugs") {
		t.Errorf("clean engine: exit %d, want 0\n%s%s", code, out, errOut)
	}
	for _, c := range bugCases {
		out, errOut, code := runVerify(t, addr, time.Minute, "--engine", "cmd="+bp, "--fen", c.fen, "--depth", strconv.Itoa(c.depth))
		if code != 0 || strings.Contains(out, "BUG") {
			t.Errorf("clean engine on %s: exit %d, want 0\n%s%s", c.fen, code, out, errOut)
		}
	}
	// Several bugs and --json through the cluster.
	out, _, code = runVerify(t, addr, time.Minute, "--engine", "cmd="+bp+",args=-bug underpromo,castle-through-check",
		"--fen", "r3k3/1P6/8/8/8/8/8/R3K2R b KQq - 0 1", "--depth", "3", "--json")
	var js struct {
		Summary struct{ Bugs, Findings int }
		Cluster struct {
			Units    int  `json:"units"`
			Reported bool `json:"reported"`
		}
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || code != 1 || js.Summary.Bugs != 1 || js.Summary.Findings < 2 || js.Cluster.Units < 2 ||
		!js.Cluster.Reported {
		t.Errorf("two bugs, --json: exit %d, %+v (%v)\n%s", code, js, err, out)
	}
}

// coordinatorUp waits until addr answers health checks.
func coordinatorUp(t *testing.T, addr string) {
	t.Helper()
	h := healthpb.NewHealthClient(dial(t, addr, token))
	waitUntil(t, 20*time.Second, "the coordinator at "+addr, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
}

// TestVerifyClusterCapabilities: a separate coordinator and workers. A
// worker without the engine gets no verify units (the client waits and
// says so); once a worker with it joins, the bug is found, and every unit
// ran there.
func TestVerifyClusterCapabilities(t *testing.T) {
	bp := brokenPerft(t)
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	plain := startWorker(t, addr, "--log-level", "debug")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "verify", "--cluster", addr, "--token", token,
		"--engine", "name=bp,args=-bug ep", "--fen", bugCases[0].fen, "--depth", "4")
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the client's notice", func() bool { return strings.Contains(errOut.String(), `no worker has engine "bp"`) })
	time.Sleep(1500 * time.Millisecond) // the plain worker keeps leasing meanwhile
	if strings.Contains(plain.out.String(), "verify") {
		t.Fatalf("the worker without the engine touched a verify unit:\n%s", plain.out.String())
	}
	capable := startWorker(t, addr, "--verify-engine", "name=bp,cmd="+bp, "--log-level", "debug")
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("verify: %v, want exit 1\n%s%s", err, out.String(), errOut.String())
	}
	for _, w := range bugCases[0].want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
	if ws := workersOf(t, out.String()); len(ws) != 1 {
		t.Errorf("units went to %v, want only the worker with the engine", ws)
	}
	if strings.Contains(plain.out.String(), "verify unit") || !strings.Contains(capable.out.String(), "verify unit computed") {
		t.Errorf("verify units ran on the wrong worker\n--- plain:\n%s\n--- capable:\n%s", lastLines(plain.out.String(), 10), lastLines(capable.out.String(), 10))
	}
	// A worker refuses an engine it cannot run.
	bad := exec.Command(bin, "worker", "--coordinator", addr, "--token", token, "--verify-engine", "name=x,cmd=/nonexistent/engine")
	if o, err := bad.CombinedOutput(); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(o), "/nonexistent/engine") {
		t.Errorf("worker with a missing engine: %v\n%s", err, o)
	}
}

// TestVerifyClusterWorkerKilled: the worker computing a unit is killed;
// its lease expires and the unit is re-issued to another worker.
func TestVerifyClusterWorkerKilled(t *testing.T) {
	bp := brokenPerft(t)
	addr := proctest.FreeAddr(t)
	co := coordinator(t, addr, t.TempDir())
	first := startWorker(t, addr, "--verify-engine", "cmd="+bp)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Perft 6 of the start position: the engine needs a few seconds.
	cmd := exec.CommandContext(ctx, bin, "verify", "--cluster", addr, "--token", token, "--engine", "cmd="+bp, "--depth", "6")
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var engine int
	waitUntil(t, 20*time.Second, "the first worker's engine", func() bool {
		engine = childOf(first.cmd.Process.Pid)
		return engine != 0
	})
	time.Sleep(300 * time.Millisecond)
	first.kill(t)
	// The orphaned engine would finish its perft and exit; end it now.
	syscall.Kill(engine, syscall.SIGKILL)
	second := startWorker(t, addr, "--verify-engine", "cmd="+bp)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("verify: %v, want exit 0\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "1 positions at depth 6: 1 ok") {
		t.Errorf("report:\n%s", out.String())
	}
	if !strings.Contains(co.out.String(), "lease expired") {
		t.Errorf("no lease expiry in the coordinator's log")
	}
	_ = second
}

// childOf returns a child process id of pid, or 0.
func childOf(pid int) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			n, _ := strconv.Atoi(fs[0])
			return n
		}
	}
	return 0
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a strings.Builder safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestVerifyClusterCoordinatorKilled: the coordinator is SIGKILLed while a
// worker computes a verify unit and restarted on the same address and
// store; the client asks again under the same unit names and finishes.
func TestVerifyClusterCoordinatorKilled(t *testing.T) {
	bp := brokenPerft(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co := coordinator(t, addr, data)
	w := startWorker(t, addr, "--verify-engine", "cmd="+bp)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "verify", "--cluster", addr, "--token", token, "--engine", "cmd="+bp, "--depth", "6")
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the worker's engine", func() bool { return childOf(w.cmd.Process.Pid) != 0 })
	co.kill(t)
	time.Sleep(500 * time.Millisecond)
	coordinator(t, addr, data)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("verify: %v, want exit 0\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "1 positions at depth 6: 1 ok") || !strings.Contains(errOut.String(), "coordinator unavailable") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
}
