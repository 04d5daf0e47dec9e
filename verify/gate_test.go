package verify

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestGateCatchesEachBug: every planted bug of brokenperft fails the gate,
// naming the engine, an exact position and the divide that differs; the
// same engine without a bug passes (the control).
func TestGateCatchesEachBug(t *testing.T) {
	for _, bug := range []string{"none", "ep", "castle-through-check", "castle-out-of-check", "underpromo", "960-king-stays", "960-rook-dest"} {
		t.Run(bug, func(t *testing.T) {
			eng := openBroken(t, ProtoUCI, "-bug", bug)
			v := Gate(context.Background(), eng, "dev", 1)
			if bug == "none" {
				if v.Outcome != GatePassed {
					t.Fatalf("a correct generator failed the gate: %s", v.Message)
				}
				return
			}
			if v.Outcome != GateFailed || v.NoPerft {
				t.Fatalf("outcome %d (no perft %v), want failed: %s", v.Outcome, v.NoPerft, v.Message)
			}
			f := v.Finding()
			if f == nil || len(f.Illegal)+len(f.Missed) == 0 {
				t.Fatalf("no illegal or missed move in the finding: %s", v.Message)
			}
			if len(v.Differ) == 0 {
				t.Fatalf("no divide line that differs: %s", v.Message)
			}
			t.Log(v.Message)
			for _, want := range []string{`engine "dev"`, "at position " + f.FEN, v.Target.ID, "divide at depth", "exact"} {
				if !strings.Contains(v.Message, want) {
					t.Errorf("message lacks %q: %s", want, v.Message)
				}
			}
		})
	}
}

// TestGateNoPerft: an engine that searches on `go perft` fails the gate
// saying it does not answer go perft; one that crashes is unsure (a
// worker's trouble, not a verdict on the generator).
func TestGateNoPerft(t *testing.T) {
	eng := openBroken(t, ProtoUCI, "-fail", "search")
	v := Gate(context.Background(), eng, "searcher", 1)
	if v.Outcome != GateFailed || !v.NoPerft || !strings.Contains(v.Message, "does not answer `go perft`") {
		t.Fatalf("outcome %d no perft %v: %s", v.Outcome, v.NoPerft, v.Message)
	}
	eng = openBroken(t, ProtoUCI, "-fail", "crash")
	v = Gate(context.Background(), eng, "crasher", 1)
	if v.Outcome != GateUnsure {
		t.Fatalf("a crash: outcome %d, want unsure: %s", v.Outcome, v.Message)
	}
}

// TestGateStockfish: Stockfish's generator passes the gate, Chess960
// positions included.
func TestGateStockfish(t *testing.T) {
	eng := openStockfish(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v := Gate(ctx, eng, "sf", 1)
	if v.Outcome != GatePassed || len(v.Skipped) > 0 {
		t.Fatalf("Stockfish: outcome %d, skipped %v: %s", v.Outcome, v.Skipped, v.Message)
	}
}
