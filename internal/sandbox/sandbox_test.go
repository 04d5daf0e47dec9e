//go:build unix

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
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
	if filtersForks && !strings.Contains(got, "fork filter") {
		t.Fatalf("probe = %q, want the fork filter", got)
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
