package gamepairs

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoGamePairsWithoutTheKinds: a worker program that links a kind
// (perft) but neither kinds/test nor kinds/spsa, so not this package,
// offers no game-pair capability: nothing in worker/ plays game pairs on
// its own. The control is the same program with this package linked
// (-tags gamepairs), which offers them.
func TestNoGamePairsWithoutTheKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	caps := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append(append([]string{"run"}, args...), "./testdata/caps")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go run %v ./testdata/caps: %v\n%s", args, err, out)
		}
		return strings.Fields(string(out))
	}
	game := []string{"game-pair", "engine-limits", "movegen-gate"}
	without := caps()
	if !slices.Contains(without, "perft") {
		t.Fatalf("the program's worker offers %q, without perft", without)
	}
	with := caps("-tags", "gamepairs")
	for _, c := range game {
		if slices.Contains(without, c) {
			t.Errorf("without kinds/test and kinds/spsa the worker offers %q", without)
		}
		if !slices.Contains(with, c) {
			t.Errorf("with worker/gamepairs linked the worker offers %q, without %q", with, c)
		}
	}
	t.Logf("without: %v; with worker/gamepairs: %v", without, with)
}
