//go:build unix

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	RunIfWrapper()
	os.Exit(m.Run())
}

// hog compiles a C program that allocates (and touches) memory without
// bound.
func hog(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "hog.c")
	os.WriteFile(src, []byte(`#include <stdlib.h>
#include <string.h>
int main(void) { for (;;) { char *p = malloc(1 << 20); if (!p) return 3; memset(p, 1, 1 << 20); } }
`), 0o644)
	exe := filepath.Join(dir, "hog")
	if out, err := exec.Command(cc, "-O1", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	return exe
}

func self(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProbeEnforcesTheForkFilter(t *testing.T) {
	got, err := Probe(self(t))
	if err != nil {
		t.Fatal(err)
	}
	if filtersForks && (!strings.Contains(got, "fork filter") || !strings.Contains(got, "no sockets")) {
		t.Fatalf("probe = %q, want the fork filter and no sockets", got)
	}
	t.Logf("sandbox: %s", got)
}

// run runs a shell command in the sandbox and returns its combined output.
func run(t *testing.T, l Limits, script string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	path, args := Command(self(t), Spec{Limits: l, Dir: dir, Env: CleanEnv(dir), Path: "/bin/sh", Args: []string{"-c", script}})
	out, err := exec.Command(path, args...).CombinedOutput()
	return string(out), err
}

func TestCleanEnvironmentAndOwnDirectory(t *testing.T) {
	t.Setenv("ARBITER_SECRET", "leak")
	// The shell's builtins only: forking is not allowed.
	out, err := run(t, Limits{}, `echo "pwd=$PWD secret=$ARBITER_SECRET home=$HOME"`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(out, "leak") || !strings.Contains(out, "pwd=/") || !strings.Contains(out, "home=/") {
		t.Fatalf("output %q", out)
	}
	if _, bad := Verdict(out); bad {
		t.Fatalf("verdict on a clean run: %q", out)
	}
}

func TestForkIsKilled(t *testing.T) {
	if !filtersForks {
		t.Skip("no fork filter here")
	}
	out, _ := run(t, Limits{}, `/bin/true; echo survived`)
	v, ok := Verdict(out)
	if !ok || !strings.HasPrefix(v, "child process") || strings.Contains(out, "survived") {
		t.Fatalf("output %q", out)
	}
}

func TestMemoryHogIsKilled(t *testing.T) {
	dir := t.TempDir()
	path, args := Command(self(t), Spec{Limits: Limits{Memory: 64 << 20}, Dir: dir, Env: CleanEnv(dir), Path: hog(t)})
	start := time.Now()
	out, err := exec.Command(path, args...).CombinedOutput()
	if err == nil {
		t.Fatal("the hog exited cleanly")
	}
	v, ok := Verdict(string(out))
	if !ok || !strings.HasPrefix(v, "memory") {
		t.Fatalf("output %q", out)
	}
	t.Logf("%s after %v", v, time.Since(start).Round(time.Millisecond))
}

func TestCPUTimeLimit(t *testing.T) {
	out, _ := run(t, Limits{CPU: time.Second}, `while :; do :; done`)
	v, ok := Verdict(out)
	if !ok || !strings.HasPrefix(v, "CPU time") {
		t.Fatalf("output %q", out)
	}
}

// The exec stage sets an address-space limit below what the Go runtime
// has mapped, so it must not grow its heap after that: when it built the
// fork filter after the limits, about one start in forty died of "fatal
// error: runtime: out of memory" (seen as an engine crashing before
// uciok). Two hundred starts with the smallest memory limit must all run
// the engine.
func TestExecStageStartsEveryTime(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	dir := t.TempDir()
	spec := Spec{Limits: Limits{Memory: 1 << 20}, Dir: dir, Env: CleanEnv(dir), Path: truePath}
	args := append([]string{execArg}, spec.encode()...)
	for i := 0; i < 200; i++ {
		out, err := exec.Command(self(t), args...).CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Fatalf("start %d: %v: %.400s", i+1, err, out)
		}
	}
}

// modes runs f with and without namespaces (Linux; elsewhere once).
func modes(t *testing.T, f func(t *testing.T, isolated bool)) {
	t.Run("namespaces", func(t *testing.T) { f(t, runtime.GOOS == "linux") })
	if runtime.GOOS == "linux" {
		t.Run("no-namespaces", func(t *testing.T) {
			t.Setenv(NamespacesEnv, "off")
			f(t, false)
		})
	}
}

// An engine reads nothing of the worker's: not a token file outside its
// directory, not /proc/WORKER/cmdline or environ (this test process plays
// the worker, with the token in both), and it has no network.
func TestEngineCannotReadTheWorkersSecrets(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("no Landlock on this kernel")
	}
	token := filepath.Join(t.TempDir(), "worker.token")
	os.WriteFile(token, []byte("arb_secret_token\n"), 0o600)
	t.Setenv("ARBITER_TOKEN", "arb_secret_token")
	pid := strconv.Itoa(os.Getpid())
	modes(t, func(t *testing.T, isolated bool) {
		// The shell's builtins only (no fork): read succeeds only if the
		// open does.
		script := `for f in ` + token + ` /proc/` + pid + `/cmdline /proc/` + pid + `/environ /proc/1/environ; do
  if read -r l < "$f"; then echo "READ $f"; else echo "refused $f"; fi
done
echo hello > own.txt && read -r l < own.txt && echo "own dir ok $l"`
		out, err := run(t, Limits{}, script)
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if strings.Contains(out, "READ") || strings.Contains(out, "arb_secret") || !strings.Contains(out, "own dir ok hello") {
			t.Fatalf("the engine read the worker's secrets or not its own file:\n%s", out)
		}
		t.Logf("%s", out)
	})
}

// cprog compiles a C program.
func cprog(t *testing.T, name, src string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, name+".c"), []byte(src), 0o644)
	exe := filepath.Join(dir, name)
	if out, err := exec.Command(cc, "-O1", "-o", exe, filepath.Join(dir, name+".c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	return exe
}

// memfdHoard fills memfds that it never maps, so none of it is resident:
// 1.5 GB the watchdog would never see.
const memfdHoard = `#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
	static char block[1 << 20];
	memset(block, 7, sizeof block);
	long total = 0;
	for (int i = 0; i < 48; i++) {
		int fd = memfd_create("hoard", 0);
		if (fd < 0) { perror("memfd_create"); printf("held %ld MiB\n", total >> 20); return 4; }
		for (int k = 0; k < 32; k++) { if (write(fd, block, sizeof block) < 0) { perror("write"); return 5; } total += sizeof block; }
	}
	printf("held %ld MiB\n", total >> 20);
	return 0;
}
`

func TestMemfdHoardingIsRefused(t *testing.T) {
	if !filtersForks {
		t.Skip("no seccomp filter here")
	}
	exe := cprog(t, "hoard", memfdHoard)
	modes(t, func(t *testing.T, _ bool) {
		dir := t.TempDir()
		path, args := Command(self(t), Spec{Limits: Limits{Memory: 256 << 20}, Dir: dir, Env: CleanEnv(dir), Path: exe})
		out, err := exec.Command(path, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "memfd_create: Operation not permitted") || !strings.Contains(string(out), "held 0 MiB") {
			t.Fatalf("memfd hoarding: %v: %s", err, out)
		}
	})
}

// The engine's directory holds at most Limits.Disk: a tmpfs of that size
// (the write fails), or the supervisor kills it past the limit.
func TestDiskQuota(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		script := `s=0123456789abcdef; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do s=$s$s; done
n=0; while printf '%s' "$s" >> fill; do n=$((n+1)); done; echo "stopped after $n blocks of 64 KiB"`
		dir := t.TempDir()
		path, args := Command(self(t), Spec{Limits: Limits{Disk: 4 << 20}, Dir: dir, Env: CleanEnv(dir), Path: "/bin/sh", Args: []string{"-c", script}})
		out, _ := exec.Command(path, args...).CombinedOutput()
		if isolated {
			if !strings.Contains(string(out), "stopped after 6") { // 4 MiB / 64 KiB = 64 blocks
				t.Fatalf("tmpfs quota: %s", out)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("the engine's files outlived it: %v", entries)
			}
		} else if v, ok := Verdict(string(out)); !ok || !strings.HasPrefix(v, "disk") {
			t.Fatalf("disk watchdog: %s", out)
		}
		t.Logf("%s", out)
	})
}

// A build may start processes and compile in its tree, which stays; it
// reads nothing outside the system's directories and the tree.
func TestBuildMode(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	secret := filepath.Join(t.TempDir(), "worker.token")
	os.WriteFile(secret, []byte("arb_secret_token\n"), 0o600)
	modes(t, func(t *testing.T, _ bool) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "e.c"), []byte("int main(void) { return 0; }\n"), 0o644)
		script := `cc -o engine e.c && ./engine && echo built; cat ` + secret + ` || echo "secret refused"`
		path, args := Command(self(t), Spec{Dir: dir, Env: CleanEnv(dir), Path: "/bin/sh", Args: []string{"-c", script}, Build: true})
		out, err := exec.Command(path, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "built") || !strings.Contains(string(out), "secret refused") ||
			strings.Contains(string(out), "arb_secret") {
			t.Fatalf("%v: %s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "engine")); err != nil {
			t.Fatalf("the build's output did not stay: %v", err)
		}
	})
}

// connectTo tries a TCP connection to 127.0.0.1:PORT (argv[1]) and says
// what came of it.
const connectTo = `#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
int main(int argc, char **argv) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0) { printf("socket: %s\n", strerror(errno)); return 0; }
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) { printf("connect: %s\n", strerror(errno)); return 0; }
	printf("CONNECTED\n");
	return 0;
}
`

// An engine reaches no network: the worker's coordinator, here a listener
// of this test on loopback, is out of reach (its own network namespace,
// or Landlock's TCP rules). The control: the same program outside the
// sandbox connects.
func TestEngineHasNoNetwork(t *testing.T) {
	if landlockABI() < 4 && runtime.GOOS == "linux" {
		t.Skip("no Landlock TCP rules on this kernel")
	}
	exe := cprog(t, "connect", connectTo)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if out, _ := exec.Command(exe, port).CombinedOutput(); !strings.Contains(string(out), "CONNECTED") {
		t.Fatalf("control: the program does not connect outside the sandbox: %s", out)
	}
	modes(t, func(t *testing.T, _ bool) {
		dir := t.TempDir()
		path, args := Command(self(t), Spec{Dir: dir, Env: CleanEnv(dir), Path: exe, Args: []string{port}})
		out, err := exec.Command(path, args...).CombinedOutput()
		// seccomp refuses the socket (amd64, arm64); elsewhere Landlock
		// and the network namespace refuse the connection.
		refused := "connect: "
		if filtersForks {
			refused = "socket: Operation not permitted"
		}
		if err != nil || strings.Contains(string(out), "CONNECTED") || !strings.Contains(string(out), refused) {
			t.Fatalf("%v: %s", err, out)
		}
		t.Logf("%s", out)
	})
}

// A wrapper that is not one (its main does not call RunIfWrapper) and
// probes in its turn, as a test binary whose tests start a worker does:
// the probe it started answers at once instead of starting another, so
// the chain stops at one level and the first probe reports the wrapper.
// Without the guard each level started the next (208 processes spun on
// a 2-core machine before they were killed).
func TestProbeOfAWrapperThatIsNotOneStops(t *testing.T) {
	if !Supported() {
		t.Skip("no sandbox here")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "notawrapper")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/notawrapper").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	count := filepath.Join(dir, "count")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "NOTAWRAPPER_COUNT="+count)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	runs, _ := os.ReadFile(count)
	// Itself, and once as the wrapper of each probe (on Linux a failed
	// probe is tried again without namespaces).
	if n := strings.Count(string(runs), "\n"); n < 2 || n > 3 {
		t.Errorf("the program ran %d times, want 2 or 3 (itself, then once for each probe it made)", n)
	}
	if !strings.Contains(string(out), "does not run") || !strings.Contains(string(out), "call sandbox.RunIfWrapper first") {
		t.Errorf("the probe's error does not say why:\n%s", out)
	}
}
