//go:build unix

package gamepairs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

// The gate runs once per build: the same program with the same arguments
// and options is not started again (a test's other batches, a later test
// of the same build), while other arguments, a changed program, or a
// verdict the engine's trouble left unsure run it again.
func TestMovegenGateCachedByBuild(t *testing.T) {
	dir := t.TempDir()
	bp := filepath.Join(dir, "brokenperft")
	if out, err := exec.Command("go", "build", "-o", bp, "../../testing/testengines/brokenperft").CombinedOutput(); err != nil {
		t.Fatalf("building brokenperft: %v\n%s", err, out)
	}
	starts := filepath.Join(dir, "starts")
	wrapper := filepath.Join(dir, "engine.sh")
	writeWrapper := func(extra string) {
		script := "#!/bin/sh\necho started >> " + starts + "\n" + extra + "exec " + bp + " \"$@\"\n"
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "started")
	}
	writeWrapper("")
	var c gateCache
	engine := func(args ...string) *arbiterv1.EngineSpec {
		return &arbiterv1.EngineSpec{Name: "dev", Command: wrapper, Args: args, MovegenGate: verify.GateProtoUCI}
	}
	check := func(e *arbiterv1.EngineSpec, want verify.GateOutcome, wantStarts int) {
		t.Helper()
		v := c.verdict(context.Background(), e, e)
		if v.Outcome != want || count() != wantStarts {
			t.Fatalf("args %v: outcome %d after %d starts, want %d after %d: %s", e.GetArgs(), v.Outcome, count(), want, wantStarts, v.Message)
		}
	}
	check(engine("-bug", "ep"), verify.GateFailed, 1)
	check(engine("-bug", "ep"), verify.GateFailed, 1) // cached
	check(engine("-bug", "none"), verify.GatePassed, 2)
	check(engine("-bug", "none"), verify.GatePassed, 2) // cached
	writeWrapper("# rebuilt\n")
	check(engine("-bug", "none"), verify.GatePassed, 3) // a new build
	check(engine("-fail", "crash"), verify.GateUnsure, 4)
	check(engine("-fail", "crash"), verify.GateUnsure, 5) // not cached
}
