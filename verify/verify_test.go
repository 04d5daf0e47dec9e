package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// brokenPerft is the path of the deliberately broken test engine, built
// once for all tests.
var brokenPerft string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "verify-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	brokenPerft = filepath.Join(dir, "brokenperft")
	out, err := exec.Command("go", "build", "-o", brokenPerft, "../testing/testengines/brokenperft").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building brokenperft: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func openBroken(t testing.TB, proto string, args ...string) Engine {
	t.Helper()
	spec := EngineSpec{Cmd: brokenPerft, Args: args, Proto: proto}
	e, err := Open(context.Background(), spec, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// bugCases are the deliberately broken engines, each with a position that
// shows its bug a few plies down, and the reason the report must give.
var bugCases = []struct {
	bug, fen string
	depth    int
	wantKind string // "illegal" or "missed"
	wantMove string
	reason   string // prefix of the reason
}{
	{"ep", "8/2p5/8/KP5r/8/8/8/4k3 b - - 0 1", 3, "illegal", "b5c6", "e.p. capture exposes the king along the rank"},
	{"castle-through-check", "4k3/3r4/8/8/8/8/8/R3K2R b KQ - 0 1", 3, "illegal", "e1c1", "castling through an attacked square (d1"},
	{"castle-out-of-check", "4k3/8/3r4/8/8/8/8/R3K2R b KQ - 0 1", 3, "illegal", "", "castling out of check"},
	{"underpromo", "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", 3, "missed", "a7a8n", "missing under-promotion to knight"},
	{"960-king-stays", "6k1/8/8/8/8/8/8/6KR b H - 0 1", 3, "missed", "g1h1", "missing Chess960 castling kingside where the king does not move"},
	{"960-rook-dest", "6k1/8/8/8/8/8/8/5K1R b H - 0 1", 3, "missed", "f1h1", "missing Chess960 castling kingside: the rook's destination f1 is the king's own square"},
}

func TestBrokenEnginesFoundAndExplained(t *testing.T) {
	for _, tc := range bugCases {
		t.Run(tc.bug, func(t *testing.T) {
			for _, proto := range []string{ProtoUCI, ProtoPerftree} {
				args := []string{"-bug", tc.bug}
				if proto == ProtoPerftree {
					args = append(args, "-perftree")
				}
				eng := openBroken(t, proto, args...)
				rep := Verify(context.Background(), eng, Target{ID: tc.bug, FEN: tc.fen, Depth: tc.depth}, Options{Threads: 1})
				if rep.Status != "bug" {
					t.Fatalf("%s: status %q, want bug: %+v", proto, rep.Status, rep)
				}
				found := false
				for _, f := range rep.Findings {
					issues := f.Illegal
					if tc.wantKind == "missed" {
						issues = f.Missed
					}
					for _, is := range issues {
						if (tc.wantMove == "" || is.Move == tc.wantMove) && strings.HasPrefix(is.Reason, tc.reason) {
							found = true
							if len(f.Moves) == 0 {
								t.Errorf("%s: found at the root; the test positions hide the bug at least one ply down", proto)
							}
							t.Logf("%s: after %v in %s: %s %s: %s", proto, f.Moves, f.FEN, tc.wantKind, is.Move, is.Reason)
						}
					}
				}
				if !found {
					t.Errorf("%s: no %s move with reason %q in %+v", proto, tc.wantKind, tc.reason, rep.Findings)
				}
			}
		})
	}
}

// The same engine without a bug finds nothing on the same positions.
func TestCleanEngineFindsNothing(t *testing.T) {
	eng := openBroken(t, ProtoUCI, "-bug", "none")
	for _, tc := range bugCases {
		rep := Verify(context.Background(), eng, Target{ID: tc.bug, FEN: tc.fen, Depth: tc.depth}, Options{Threads: 1})
		if rep.Status != "ok" {
			t.Errorf("%s: status %q: %+v", tc.fen, rep.Status, rep)
		}
	}
	for _, tg := range RandomTargets(12, 7, RandomOptions{Depth: 3}) {
		rep := Verify(context.Background(), eng, tg, Options{Threads: 1})
		if rep.Status != "ok" {
			t.Errorf("%s %s: status %q: %+v", tg.ID, tg.FEN, rep.Status, rep)
		}
	}
}

// Two bugs in one engine: both are found, as distinct findings, on one
// position that shows both.
func TestDistinctBugsInOnePosition(t *testing.T) {
	eng := openBroken(t, ProtoUCI, "-bug", "underpromo,castle-through-check")
	fen := "r3k3/1P6/8/8/8/8/8/R3K2R b KQq - 0 1" // 1.Rd8 pins nothing, but ...Rd8 attacks d1; b7 promotes
	rep := Verify(context.Background(), eng, Target{FEN: fen, Depth: 3}, Options{Threads: 1})
	var reasons []string
	for _, f := range rep.Findings {
		for _, m := range f.Illegal {
			reasons = append(reasons, m.Reason)
		}
		for _, m := range f.Missed {
			reasons = append(reasons, m.Reason)
		}
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"castling through an attacked square", "missing under-promotion to knight"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q among the findings:\n%s", want, all)
		}
	}
	if rep.Duplicates == 0 {
		t.Logf("no duplicates (fine, depends on the order of the descent)")
	}
}

func TestMaxFindingsStops(t *testing.T) {
	eng := openBroken(t, ProtoUCI, "-bug", "underpromo,castle-through-check")
	fen := "r3k3/1P6/8/8/8/8/8/R3K2R b KQq - 0 1"
	rep := Verify(context.Background(), eng, Target{FEN: fen, Depth: 3}, Options{Threads: 1, MaxFindings: 1})
	if len(rep.Findings) != 1 || !rep.Truncated {
		t.Fatalf("findings %d truncated %v, want 1 and true", len(rep.Findings), rep.Truncated)
	}
}

// An EPD count that disagrees with the engine starts the descent even if
// the engine agrees with nothing else.
func TestExpectedFromEPD(t *testing.T) {
	eng := openBroken(t, ProtoUCI, "-bug", "underpromo")
	fen := "4k3/8/P7/8/8/8/8/4K3 w - - 0 1"
	tg := Target{FEN: fen, Depth: 3}
	ours := Verify(context.Background(), openBroken(t, ProtoUCI), tg, Options{Threads: 1})
	n, _ := engine.ParseCount(ours.Reference)
	tg.Expected = &n
	rep := Verify(context.Background(), eng, tg, Options{Threads: 1})
	if rep.Status != "bug" || rep.ReferenceFrom != "epd" || rep.ReferenceMismatch != "" {
		t.Fatalf("%+v", rep)
	}
}

func TestOutputFormats(t *testing.T) {
	for _, args := range [][]string{
		{"-format", "colon"},
		{"-format", "space", "-total", "Nodes"},
		{"-format", "dash", "-total", "Total"},
		{"-format", "space", "-total", "Total nodes"},
	} {
		eng := openBroken(t, ProtoUCI, args...)
		rep := Verify(context.Background(), eng, Target{FEN: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Depth: 2}, Options{Threads: 1})
		if rep.Status != "ok" || rep.EngineTotal != "2039" {
			t.Errorf("%v: %+v", args, rep)
		}
	}
}

func TestParseDivideOutput(t *testing.T) {
	ok := []struct {
		out   string
		lines int
		total string
	}{
		{"info string NNUE\na2a3: 380\nb2b3: 420\n\nNodes searched: 800\n", 2, "800"},
		{"a2a3 380\nb2b3 420\n\n800\n", 2, "800"},
		{"a2a3 - 380\ne7e8q - 1 (0.1 ms)\nNodes: 381\n", 2, "381"},
		{"Perft 2\na2a3: 380\nTotal: 380\n", 1, "380"},
		{"version 1.0 build 3\n12\na2a3 1\n\n1\n", 1, "1"},
	}
	for _, c := range ok {
		d, err := ParseDivideOutput(c.out)
		if err != nil || len(d.Lines) != c.lines || d.Total.String() != c.total {
			t.Errorf("%q: %+v %v", c.out, d, err)
		}
	}
	for _, bad := range []string{"a2a3: 1\n", "a2a3: 1\nNodes searched: lots\n", "bestmove e2e4\n", ""} {
		if _, err := ParseDivideOutput(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Timeouts, crashes and garbage are errors naming the engine and the
// position; the engine is restarted for the next query.
func TestEngineFailures(t *testing.T) {
	fen := "4k3/8/P7/8/8/8/8/4K3 w - - 0 1"
	for _, c := range []struct {
		fail, kind string
	}{
		{"crash", "crash"}, {"hang", "timeout"}, {"garbage", "garbage"}, {"search", "garbage"},
	} {
		for _, proto := range []string{ProtoUCI, ProtoPerftree} {
			if proto == ProtoPerftree && c.fail == "search" {
				continue
			}
			args := []string{"-fail", c.fail, "-fail-once", filepath.Join(t.TempDir(), "failed")}
			if proto == ProtoPerftree {
				args = append(args, "-perftree")
			}
			spec := EngineSpec{Cmd: brokenPerft, Args: args, Proto: proto}
			eng, err := Open(context.Background(), spec, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rep := Verify(context.Background(), eng, Target{FEN: fen, Depth: 2}, Options{Threads: 1})
			if rep.Status != "error" || rep.EngineError == nil || rep.EngineError.Kind != c.kind {
				t.Errorf("%s/%s: %+v", c.fail, proto, rep)
			} else if !strings.Contains(rep.Error, "brokenperft") || !strings.Contains(rep.Error, fen) {
				t.Errorf("%s/%s: error does not name the engine and position: %s", c.fail, proto, rep.Error)
			} else {
				t.Logf("%s/%s: %s", c.fail, proto, rep.Error)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("%s/%s: took %v", c.fail, proto, time.Since(start))
			}
			if proto == ProtoUCI {
				// -fail-at 1: the second query runs on a fresh, healthy process.
				rep = Verify(context.Background(), eng, Target{FEN: fen, Depth: 2}, Options{Threads: 1})
				if rep.Status != "ok" {
					t.Errorf("%s: after a restart: %+v", c.fail, rep)
				}
			}
			eng.Close()
		}
	}
	if _, err := Open(context.Background(), EngineSpec{Cmd: "/nonexistent/engine", Proto: ProtoUCI}, time.Second); err == nil {
		t.Error("a missing engine opened")
	}
}

// A finding's command names its position and remaining depth; verifying
// there finds the same bug right at the root.
func TestReproduceCommand(t *testing.T) {
	tc := bugCases[3] // underpromo
	eng := openBroken(t, ProtoUCI, "-bug", tc.bug)
	arg := "cmd=" + brokenPerft + ",args=-bug " + tc.bug
	rep := Verify(context.Background(), eng, Target{FEN: tc.fen, Depth: tc.depth}, Options{Threads: 1, Reproduce: arg})
	if len(rep.Findings) == 0 {
		t.Fatalf("no finding: %+v", rep)
	}
	f := rep.Findings[0]
	want := "arbiter verify --engine '" + arg + "' --fen '" + f.FEN + "' --depth " + fmt.Sprint(f.Depth)
	if f.Command != want {
		t.Fatalf("command\n %s\nwant\n %s", f.Command, want)
	}
	again := Verify(context.Background(), eng, Target{FEN: f.FEN, Depth: f.Depth}, Options{Threads: 1})
	if len(again.Findings) == 0 || len(again.Findings[0].Moves) != 0 {
		t.Fatalf("verifying at the finding's position: %+v", again)
	}
	found := false
	for _, m := range again.Findings[0].Missed {
		found = found || m.Move == tc.wantMove
	}
	if !found {
		t.Fatalf("missed moves at the root: %+v, want %s", again.Findings[0].Missed, tc.wantMove)
	}
	if got := ReproduceCommand("cmd=it's", Finding{FEN: "x", Depth: 0}, true); got != `arbiter verify --engine 'cmd=it'\''s' --fen x --depth 1 --chess960` {
		t.Fatalf("quoting: %s", got)
	}
}
