package epd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

const stockfish = "/usr/games/stockfish"

func needStockfish(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(stockfish); err != nil {
		t.Skipf("%s not installed (apt-get install stockfish)", stockfish)
	}
}

func suite(t *testing.T, name string, first int) *Suite {
	t.Helper()
	s, err := ParseSuite(name, readTestdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if first > 0 && first < len(s.Positions) {
		s.Positions = s.Positions[:first]
	}
	return s
}

var (
	builtinEngine = match.EngineConfig{Name: "builtin", Proto: "builtin", Options: []match.Option{{Name: "Threads", Value: "1"}}}
	sfEngine      = match.EngineConfig{Name: "stockfish", Cmd: stockfish, Options: []match.Option{{Name: "Threads", Value: "1"}, {Name: "Hash", Value: "16"}}}
)

// stable drops what varies between runs of the same search: times.
func stable(rs []Result) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		r.Elapsed, r.SolveTime = 0, 0
		out[i] = r
	}
	return out
}

// TestWACSubset: the embedded engine and Debian's Stockfish on WAC's
// first 60 positions at nodes=20000, two searches at once. Both solve
// most (49 and 50 when this was written, on one thread); every solved result's move is a bm and its time and depth
// to solve are within the search; an unsolved one's move is not a bm.
func TestWACSubset(t *testing.T) {
	needStockfish(t)
	s := suite(t, "wac.epd", 60)
	results, err := Run(context.Background(), RunConfig{Suite: s, Engines: []match.EngineConfig{builtinEngine, sfEngine},
		Limit: Limit{Nodes: 20000}, Concurrency: 2, Builtin: builtin.New})
	if err != nil {
		t.Fatal(err)
	}
	rows := Table([]string{"builtin", "stockfish"}, results)
	t.Logf("WAC 1-60 at nodes=20000: builtin %d, stockfish %d", rows[0].Solved, rows[1].Solved)
	if rows[1].Solved < 45 || rows[0].Solved < 40 {
		t.Errorf("solved: builtin %d/60, stockfish %d/60; want at least 40 and 45", rows[0].Solved, rows[1].Solved)
	}
	for _, r := range results {
		p := &s.Positions[r.Position]
		if r.Error != "" || r.Move == "" {
			t.Errorf("%s engine %d: error %q", p.ID, r.Engine, r.Error)
		}
		if r.Solved != p.SolvesUCI(r.Move) {
			t.Errorf("%s engine %d: solved=%v for move %s (bm %v)", p.ID, r.Engine, r.Solved, r.Move, p.Best)
		}
		if r.Solved && (r.SolveDepth < 1 || r.SolveDepth > r.Depth || r.SolveTime > r.Elapsed+time.Second) {
			t.Errorf("%s engine %d: solve depth %d of %d, solve time %v of %v", p.ID, r.Engine, r.SolveDepth, r.Depth, r.SolveTime, r.Elapsed)
		}
	}
}

// TestBuiltinDeterministic: the embedded engine on one thread at nodes=N
// gives the same results every run, whatever the concurrency: each
// position is searched as a new game. The control: another node count
// gives other results.
func TestBuiltinDeterministic(t *testing.T) {
	s := suite(t, "bratko-kopec.epd", 0)
	run := func(nodes int64, conc int) []Result {
		r, err := Run(context.Background(), RunConfig{Suite: s, Engines: []match.EngineConfig{builtinEngine},
			Limit: Limit{Nodes: nodes}, Concurrency: conc, Builtin: builtin.New})
		if err != nil {
			t.Fatal(err)
		}
		return stable(r)
	}
	a, b, c := run(5000, 1), run(5000, 2), run(5000, 1)
	for i := range a {
		if a[i] != b[i] || a[i] != c[i] {
			t.Fatalf("%s: runs differ:\n%+v\n%+v\n%+v", s.Positions[a[i].Position].ID, a[i], b[i], c[i])
		}
	}
	other := run(7000, 1)
	same := 0
	for i := range a {
		if a[i] == other[i] {
			same++
		}
	}
	if same == len(a) {
		t.Error("control: nodes=7000 gave the same results as nodes=5000")
	}
}

// TestSolveWatch: the time and depth to solve are the first report of the
// last unbroken run of solving pv moves.
func TestSolveWatch(t *testing.T) {
	s, err := ParseSuite("w.epd", []byte("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - bm O-O Ra8+;"))
	if err != nil {
		t.Fatal(err)
	}
	w := &solveWatch{pos: &s.Positions[0]}
	for i, mv := range []string{"e1g1", "a1a8", "e1d1", "e1h1", "a1a8", "e1g1"} {
		w.report(match.Info{Depth: i + 1, Time: time.Duration(i+1) * time.Millisecond}, mv)
	}
	if w.since == nil || w.since.Depth != 4 {
		t.Fatalf("since %+v, want depth 4 (e1h1 is O-O)", w.since)
	}
	w.report(match.Info{Depth: 7}, "e1f1")
	if w.since != nil {
		t.Fatalf("a non-solving report must reset: %+v", w.since)
	}
}

// TestCrashingEngine: an engine that crashes on every search gives every
// position an error result (unsolved) and the run goes on, restarting it;
// the control engine in the same run solves positions.
func TestCrashingEngine(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "badengine")
	if out, err := exec.Command("go", "build", "-o", bad, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput(); err != nil {
		t.Fatalf("building badengine: %v\n%s", err, out)
	}
	s := suite(t, "bratko-kopec.epd", 4)
	crash := match.EngineConfig{Name: "crash", Cmd: bad, Args: []string{"-mode", "crash", "-at", "1"}}
	results, err := Run(context.Background(), RunConfig{Suite: s, Engines: []match.EngineConfig{crash, builtinEngine},
		Limit: Limit{Nodes: 20000}, Builtin: builtin.New})
	if err != nil {
		t.Fatal(err)
	}
	rows := Table([]string{"crash", "builtin"}, results)
	if rows[0].Errors != 4 || rows[0].Solved != 0 || rows[0].Positions != 4 {
		t.Errorf("crashing engine: %+v", rows[0])
	}
	if rows[1].Errors != 0 || rows[1].Solved == 0 {
		t.Errorf("control engine: %+v", rows[1])
	}
}

// TestChess960Engines: a Chess960 position whose only mate is castling
// (king b1, rook a1: O-O-O puts the rook on d1). Both engines get it in
// Chess960 mode and answer king takes rook, which solves; the bm was
// written in SAN.
func TestChess960Engines(t *testing.T) {
	needStockfish(t)
	s, err := ParseSuite("960.epd", []byte("2rkr3/2p1p3/8/1B6/8/8/8/RK6 w A - 0 1 bm O-O-O#; id mate960;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Positions[0]; !p.Chess960 || p.Best[0] != "b1a1" {
		t.Fatalf("parsed %+v", p)
	}
	results, err := Run(context.Background(), RunConfig{Suite: s, Engines: []match.EngineConfig{builtinEngine, sfEngine},
		Limit: Limit{Depth: 4}, Builtin: builtin.New})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Solved || r.Move != "b1a1" || r.Score.Mate != 1 {
			t.Errorf("engine %d: %+v", r.Engine, r)
		}
	}
}
