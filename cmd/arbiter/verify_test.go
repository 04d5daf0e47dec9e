package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
)

var (
	brokenOnce sync.Once
	brokenPath string
	brokenErr  error
	brokenDir  string
)

// brokenPerftBinary builds the deliberately broken test engine once.
func brokenPerftBinary(t *testing.T) string {
	t.Helper()
	brokenOnce.Do(func() {
		brokenDir, brokenErr = os.MkdirTemp("", "arbiter-verify-cli")
		if brokenErr != nil {
			return
		}
		brokenPath = filepath.Join(brokenDir, "brokenperft")
		var out []byte
		out, brokenErr = exec.Command("go", "build", "-o", brokenPath, "../../testing/testengines/brokenperft").CombinedOutput()
		if brokenErr != nil {
			brokenErr = errors.New(brokenErr.Error() + "\n" + string(out))
		}
	})
	if brokenErr != nil {
		t.Fatal(brokenErr)
	}
	return brokenPath
}

// exitCode is the status main exits with for err.
func exitCode(err error) int { return cliexit.Code(err, 2) }

// carriedCode is the status err carries itself; -1 for an error that
// carries none (cobra's own, which main also ends with 2).
func carriedCode(err error) int { return cliexit.Code(err, -1) }

func TestVerifyCommandFindsBug(t *testing.T) {
	bp := brokenPerftBinary(t)
	out, _, err := runArbiter(t, "", "verify", "--engine", "cmd="+bp+",args=-bug ep", "--fen", "8/2p5/8/KP5r/8/8/8/4k3 b - - 0 1", "--depth", "3", "--threads", "1")
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s", exitCode(err), err, out)
	}
	for _, want := range []string{"BUG", "after c7c5", "illegal move listed: b5c6", "e.p. capture exposes the king along the rank"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Every spelling of an argument with a comma (the older continuation, the
// quoted value, the escaped comma, one arg= per argument) passes the same
// arguments to the engine.
func TestVerifyCommandJSON(t *testing.T) {
	bp := brokenPerftBinary(t)
	for _, args := range []string{
		"args=-bug underpromo,castle-through-check -perftree",
		`args="-bug underpromo,castle-through-check -perftree"`,
		`args=-bug underpromo\,castle-through-check -perftree`,
		`arg=-bug,arg="underpromo,castle-through-check",arg=-perftree`,
	} {
		t.Run(args, func(t *testing.T) { verifyTwoBugsJSON(t, bp, args) })
	}
}

func verifyTwoBugsJSON(t *testing.T, bp, args string) {
	out, _, err := runArbiter(t, "", "verify", "--engine", "cmd="+bp+","+args+",proto=perftree",
		"--fen", "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", "--depth", "3", "--json", "--threads", "1")
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s", exitCode(err), err, out)
	}
	var doc struct {
		Summary struct {
			Positions, Bugs int
		}
		Positions []struct {
			Status   string
			Findings []struct {
				Moves  []string
				FEN    string
				Missed []struct{ Move, Reason string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Summary.Positions != 1 || doc.Summary.Bugs != 1 || len(doc.Positions[0].Findings) == 0 {
		t.Fatalf("%+v", doc)
	}
	f := doc.Positions[0].Findings[0]
	if len(f.Moves) != 2 || len(f.Missed) != 3 || !strings.HasPrefix(f.Missed[0].Reason, "missing under-promotion") {
		t.Errorf("%+v", f)
	}
}

func TestVerifyCommandCleanAndRandom(t *testing.T) {
	bp := brokenPerftBinary(t)
	out, _, err := runArbiter(t, "", "verify", "--engine", "cmd="+bp, "--random", "5", "--seed", "3", "--depth", "2", "--threads", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "5 positions at depth 2: 5 ok") {
		t.Errorf("%s", out)
	}
}

func TestVerifyCommandStockfishEPD(t *testing.T) {
	if _, err := os.Stat("/usr/games/stockfish"); err != nil {
		t.Skip("no stockfish")
	}
	out, _, err := runArbiter(t, "", "verify", "--engine", "cmd=/usr/games/stockfish,option.Threads=1", "--epd", "../../verify/testdata/stockfish_sample.epd", "--depth", "2", "--threads", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "40 positions at depth 2: 40 ok") {
		t.Errorf("%s", out)
	}
}

func TestVerifyCommandBadInput(t *testing.T) {
	bp := brokenPerftBinary(t)
	for _, args := range [][]string{
		{"verify", "--depth", "3"},
		{"verify", "--engine", "cmd=" + bp, "--depth", "0"},
		{"verify", "--engine", "cmd=" + bp, "--depth", "3", "--fen", "not a fen"},
		{"verify", "--engine", "cmd=" + bp, "--depth", "3", "--epd", "/nonexistent.epd"},
		{"verify", "--engine", "cmd=/nonexistent/engine", "--depth", "3"},
		{"verify", "--engine", "cmd=" + bp + ",proto=xboard", "--depth", "3"},
		{"verify", "--engine", "name=no/such", "--depth", "3", "--cluster", "localhost:7000"},
		{"verify", "--engine", "cmd=" + bp + ",dir=/tmp", "--depth", "3", "--cluster", "localhost:7000"},
	} {
		_, _, err := runArbiter(t, "", args...)
		if exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}
