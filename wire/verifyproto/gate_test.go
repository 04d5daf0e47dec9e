package verifyproto

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/verify"
)

// Every planted bug's real verdict (brokenperft through verify's gate)
// passes the coordinator's check on the wire, Chess960 ones included;
// the same verdict with its claim turned around, or named for another
// engine, is refused.
func TestGateFailureOnTheWire(t *testing.T) {
	bp := filepath.Join(t.TempDir(), "brokenperft")
	if out, err := exec.Command("go", "build", "-o", bp, "../../testing/testengines/brokenperft").CombinedOutput(); err != nil {
		t.Fatalf("building brokenperft: %v\n%s", err, out)
	}
	for _, bug := range []string{"ep", "castle-through-check", "castle-out-of-check", "underpromo", "960-king-stays", "960-rook-dest"} {
		t.Run(bug, func(t *testing.T) {
			v := verify.GateEngine(context.Background(), verify.EngineSpec{Cmd: bp, Args: []string{"-bug", bug}, Proto: verify.ProtoUCI}, "dev", time.Minute, 1)
			if v.Outcome != verify.GateFailed {
				t.Fatalf("outcome %d: %s", v.Outcome, v.Message)
			}
			f := GateFailureToProto(v)
			if err := CheckGateFailure(f, []string{"dev"}); err != nil {
				t.Fatalf("a true verdict refused: %v\n%s", err, v.Message)
			}
			if err := CheckGateFailure(f, []string{"other"}); err == nil || !strings.Contains(err.Error(), "not an engine of this test") {
				t.Errorf("another engine's verdict: %v", err)
			}
			f.Illegal, f.Missed = f.Missed, f.Illegal
			if err := CheckGateFailure(f, []string{"dev"}); err == nil {
				t.Errorf("the claim turned around was accepted: illegal %v, missed %v", f.Illegal, f.Missed)
			}
		})
	}
}

// An engine's stderr in a no-perft message becomes one line the
// coordinator takes.
func TestGateMessageOneLine(t *testing.T) {
	v := verify.GateVerdict{Outcome: verify.GateFailed, NoPerft: true, Engine: "x", Message: "movegen gate: engine \"x\" does not answer: line\nnext\x1b[31m\u202e"}
	f := GateFailureToProto(v)
	if err := CheckGateFailure(f, []string{"x"}); err != nil {
		t.Fatalf("%q: %v", f.GetMessage(), err)
	}
}
