package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
)

// The perft scripts the README and docs/verify.md name ship and work with
// arbiter verify: scripts/perft/uci-perftree.sh runs a UCI engine's go
// perft as a perftree script (Stockfish here, standard and Chess960
// positions), and scripts/perft/brokenperft.sh builds and runs the test
// engine whose e.p. bug verify must find.
func TestShippedPerftScripts(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("no awk")
	}
	if _, err := os.Stat("/usr/games/stockfish"); err == nil {
		out, _, err := runArbiter(t, "", "verify", "--engine", "cmd=../../scripts/perft/uci-perftree.sh,args=/usr/games/stockfish,proto=perftree",
			"--random", "4", "--seed", "3", "--depth", "2")
		if err != nil || !strings.Contains(out, "4 positions at depth 2: 4 ok, 0 with bugs") || !strings.Contains(out, "(Chess960)") {
			t.Errorf("uci-perftree.sh with Stockfish: %v\n%s", err, out)
		}
	} else {
		t.Log("no /usr/games/stockfish: uci-perftree.sh not run")
	}
	out, _, err := runArbiter(t, "", "verify", "--engine", "cmd=../../scripts/perft/brokenperft.sh,args=-bug ep -perftree,proto=perftree",
		"--fen", "8/2p5/8/KP5r/8/8/8/4k3 b - - 0 1", "--depth", "4")
	if cliexit.Code(err, 0) != 1 || !strings.Contains(out, "illegal move listed: b5c6") {
		t.Errorf("brokenperft.sh -bug ep: %v\n%s", err, out)
	}
}
