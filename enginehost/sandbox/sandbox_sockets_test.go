//go:build linux

package sandbox

// Sockets, threads and a non-root worker (issue 41): the sandbox refuses
// every socket to engines and builds, bounds their processes and threads,
// and works the same when the worker is not root. The tests run the
// wrapper as this (root) test process and, through a copy of this test
// binary started as nobody, as an unprivileged worker would.

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/arbiter-chess/arbiter/enginehost/sandbox/sandboxtest"
)

// worker is who runs the wrapper: this process (root in CI), or nobody.
type worker struct {
	name    string
	uid     int                 // its user
	wrapper string              // the binary that serves as the wrapper
	cred    *syscall.Credential // nil: this process's user
	owner   func(dir string)    // gives a directory to the worker's user
}

// workers are the root worker (this process) and, when this process may
// change its user, a non-root one: a copy of this test binary that nobody
// can run, started as nobody.
func workers(t *testing.T) []worker {
	t.Helper()
	root := worker{name: "worker-as-" + strconv.Itoa(os.Getuid()), uid: os.Getuid(), wrapper: self(t), owner: func(string) {}}
	if os.Getuid() != 0 {
		t.Logf("not root: the non-root worker cannot be started as another user; only this user (%d) runs", os.Getuid())
		return []worker{root}
	}
	dir := sandboxtest.OpenDir(t)
	bin := filepath.Join(dir, "sandbox.test")
	in, err := os.Open(self(t))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return []worker{root, {name: "worker-as-nobody", uid: sandboxtest.Nobody, wrapper: bin, cred: sandboxtest.AsNobody().Credential,
		owner: func(dir string) {
			if err := os.Chown(dir, sandboxtest.Nobody, sandboxtest.Nobody); err != nil {
				t.Fatal(err)
			}
		}}}
}

// runKind names a run: an engine's, or a build's (Spec.Build).
func runKind(build bool) string {
	if build {
		return "build"
	}
	return "engine"
}

// run runs s through the worker's wrapper and returns its combined output.
func (w worker) run(t *testing.T, s Spec) (string, error) {
	t.Helper()
	path, args := Command(w.wrapper, s)
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: w.cred}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// spec is a run of program in a fresh directory of the worker's user.
func (w worker) spec(t *testing.T, l Limits, build bool, program string, args ...string) Spec {
	t.Helper()
	dir := filepath.Join(sandboxtest.OpenDir(t), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w.owner(dir)
	return Spec{Limits: l, Dir: dir, Env: CleanEnv(dir), Path: program, Args: args, Build: build}
}

// An engine, and a build, reach no socket of any kind: not a pathname
// UNIX socket that any user of the host may connect to (PostgreSQL's,
// Docker's, a session bus), not an abstract one, not TCP, not even a
// socket pair; seccomp refuses the socket itself (EPERM). Run by a root
// worker and by a worker as nobody, with and without namespaces. The
// control: the same program, run as nobody outside the sandbox, connects
// to all three listeners and makes its pair.
func TestSandboxRefusesEverySocket(t *testing.T) {
	if !filtersForks {
		t.Skip("no seccomp filter on this architecture")
	}
	services := sandboxtest.Listen(t)
	exe := sandboxtest.Program(t, "sockets", services.Defines()...)
	services.Control(t, exe)
	for _, w := range workers(t) {
		for _, build := range []bool{false, true} {
			what := runKind(build)
			t.Run(w.name+"/"+what, func(t *testing.T) {
				modes(t, func(t *testing.T, _ bool) {
					out, err := w.run(t, w.spec(t, Limits{}, build, exe))
					if err != nil {
						t.Fatalf("%v: %s", err, out)
					}
					services.CheckRefused(t, "the sandboxed "+what, out)
				})
			})
		}
	}
}

// A thread bomb is bounded: at most Limits.Threads tasks in its run (its
// main thread included), thread creation then fails with EAGAIN and the
// bomb exits with its own error; the supervisor (the worker's side)
// reports its exit. Root worker (a pids cgroup) and worker as nobody
// (RLIMIT_NPROC in its user namespace; without namespaces, on top of
// the user's tasks), with and without namespaces. The control: outside
// the sandbox the same bomb starts four times the limit.
func TestThreadBombIsBounded(t *testing.T) {
	const limit = 64
	exe := sandboxtest.Program(t, "threadbomb", "-pthread")
	out, err := exec.Command(exe, strconv.Itoa(4*limit)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "all 256 threads started") {
		t.Fatalf("control: the bomb does not start %d threads outside the sandbox: %v: %s", 4*limit, err, out)
	}
	for _, w := range workers(t) {
		for _, build := range []bool{false, true} {
			t.Run(w.name+"/"+runKind(build), func(t *testing.T) {
				modes(t, func(t *testing.T, isolated bool) {
					out, err := w.run(t, w.spec(t, Limits{Threads: limit}, build, exe))
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.ExitCode() != 3 {
						t.Fatalf("the bomb's exit: %v (want its own status 3):\n%s", err, out)
					}
					n := sandboxtest.BombThreads(t, out)
					if n >= limit {
						t.Fatalf("the bomb started %d threads, the limit is %d tasks", n, limit)
					}
					t.Logf("stopped after %d threads", n)
				})
			})
		}
	}
}

// A worker that is not root, the recommended setup, gets the whole
// sandbox: the probe sees namespaces, the socket refusal and a thread
// cap, and a source build (cc, in its tree) builds and its program runs.
// Before, its uid mapped onto itself lost its capabilities at the exec,
// mounting the tmpfs failed, and every run ended with status 126.
func TestNonRootWorkerBuildsAndRuns(t *testing.T) {
	ws := workers(t)
	w := ws[len(ws)-1]
	if w.uid == 0 {
		t.Skip("root, and no other user to run the worker as")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("unprivileged user namespaces are off on this host (kernel.unprivileged_userns_clone=0)")
	}
	features := probeAs(t, w)
	for _, want := range []string{"namespaces (user, PID, mount, network, IPC)", "no sockets", "threads (RLIMIT_NPROC in its user namespace)"} {
		if !strings.Contains(features, want) {
			t.Errorf("probe as uid %d lacks %q: %s", w.uid, want, features)
		}
	}
	t.Logf("probe as uid %d: %s", w.uid, features)
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	modes(t, func(t *testing.T, _ bool) {
		s := w.spec(t, Limits{}, true, "/bin/sh", "-c", `cc -o engine e.c && ./engine && echo "built by uid $(id -u)"`)
		os.WriteFile(filepath.Join(s.Dir, "e.c"), []byte("#include <stdio.h>\nint main(void) { puts(\"engine runs\"); return 0; }\n"), 0o644)
		out, err := w.run(t, s)
		if err != nil || !strings.Contains(out, "engine runs") {
			t.Fatalf("source build as uid %d: %v:\n%s", w.uid, err, out)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(s.Dir, "engine"), &st); err != nil || int(st.Uid) != w.uid {
			t.Fatalf("the built program is not the worker's (uid %d): %v", st.Uid, err)
		}
		t.Logf("%s", strings.TrimSpace(out))
	})
}

// probeAs runs the probe as the worker w: here, or through the copy of
// this binary as w's user (TestNonRootProbe).
func probeAs(t *testing.T, w worker) string {
	t.Helper()
	if w.cred == nil {
		got, err := Probe(w.wrapper)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	cmd := exec.Command(w.wrapper, "-test.run=^TestNonRootProbe$", "-test.v")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: w.cred}
	cmd.Env = append(os.Environ(), "ARBITER_SANDBOX_PROBE_AS_NOBODY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe as uid %d: %v\n%s", w.uid, err, out)
	}
	m := regexp.MustCompile(`sandbox as uid \d+: (.*)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("probe as uid %d said nothing:\n%s", w.uid, out)
	}
	return m[1]
}

// TestNonRootProbe is TestNonRootWorkerBuildsAndRuns's probe, run by the
// copy of this binary as nobody (it skips otherwise).
func TestNonRootProbe(t *testing.T) {
	if os.Getenv("ARBITER_SANDBOX_PROBE_AS_NOBODY") != "1" {
		t.Skip("run by TestNonRootWorkerBuildsAndRuns")
	}
	got, err := Probe(self(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sandbox as uid %d: %s", os.Getuid(), got)
}

// capabilityLines prints the shell's capability sets (builtins only: no
// fork).
const capabilityLines = `while read -r k v; do case $k in Cap*) echo "$k $v";; esac; done < /proc/self/status`

// The engine is root of its user namespace (the worker's uid maps to 0)
// but holds no capability in any set, so it can undo none of its
// confinement (unmount its tmpfs, raise its limits); a root worker
// without namespaces does not hand it the host's either. The control:
// the same shell outside the sandbox, as root, has capabilities.
func TestEngineHasNoCapabilities(t *testing.T) {
	if os.Getuid() == 0 {
		out, err := exec.Command("/bin/sh", "-c", capabilityLines).CombinedOutput()
		if err != nil || !regexp.MustCompile(`CapEff: [0-9a-f]*[1-9a-f]`).Match(out) {
			t.Fatalf("control: root outside the sandbox shows no capability: %v: %s", err, out)
		}
	}
	for _, w := range workers(t) {
		for _, build := range []bool{false, true} {
			t.Run(w.name+"/"+runKind(build), func(t *testing.T) {
				modes(t, func(t *testing.T, isolated bool) {
					out, err := w.run(t, w.spec(t, Limits{}, build, "/bin/sh", "-c", capabilityLines))
					if err != nil || strings.Count(out, "Cap") != 5 {
						t.Fatalf("%v: %s", err, out)
					}
					// A non-root worker without namespaces has no capability to
					// give, nor CAP_SETPCAP to empty its bounding set, which
					// without a set-uid program (no_new_privs) grants nothing.
					keepsBounding := w.uid != 0 && !isolated
					for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
						if keepsBounding && strings.HasPrefix(line, "CapBnd:") {
							continue
						}
						if f := strings.Fields(line); len(f) != 2 || strings.Trim(f[1], "0") != "" {
							t.Errorf("capability set not empty: %s", line)
						}
					}
				})
			})
		}
	}
}
