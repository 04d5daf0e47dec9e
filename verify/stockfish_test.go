package verify

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const stockfishPath = "/usr/games/stockfish"

func openStockfish(t testing.TB) Engine {
	t.Helper()
	if _, err := os.Stat(stockfishPath); err != nil {
		t.Skip("no Stockfish at " + stockfishPath)
	}
	e, err := Open(context.Background(), EngineSpec{Cmd: stockfishPath, Proto: ProtoUCI, Options: []Option{{"Threads", "1"}}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func loadEPDFile(t testing.TB, path string, depth int) []Target {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, err := LoadEPD(f, filepath.Base(path), depth, false)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// runAll verifies every target and fails on anything but "ok".
func runAll(t *testing.T, eng Engine, ts []Target) {
	t.Helper()
	for _, tg := range ts {
		rep := Verify(context.Background(), eng, tg, Options{Threads: 1})
		if rep.Status != "ok" {
			t.Errorf("%s %s: %s: %+v", tg.ID, tg.FEN, rep.Status, rep)
		}
	}
}

// Stockfish is right: a sample of the shared suites (standard, Sedlak's edge
// cases, Chess960) and some random positions, at depth 3, find nothing.
func TestStockfishFindsNoBug(t *testing.T) {
	eng := openStockfish(t)
	start := time.Now()
	ts := loadEPDFile(t, "testdata/stockfish_sample.epd", 3)
	ts = append(ts, RandomTargets(20, 1, RandomOptions{Depth: 3})...)
	runAll(t, eng, ts)
	t.Logf("%d positions at depth 3 in %v", len(ts), time.Since(start).Round(time.Millisecond))
}

// TestStockfishFull is the long run: every shared suite and 1,000 random
// positions. ARBITER_VERIFY_FULL=1 turns it on; ARBITER_VERIFY_DEPTH sets
// the depth (default 4); ARBITER_PERFT_DATA the suites' folder.
func TestStockfishFull(t *testing.T) {
	if os.Getenv("ARBITER_VERIFY_FULL") == "" {
		t.Skip("set ARBITER_VERIFY_FULL=1 for the full suites and 1,000 random positions against Stockfish")
	}
	depth := 4
	if s := os.Getenv("ARBITER_VERIFY_DEPTH"); s != "" {
		d, err := strconv.Atoi(s)
		if err != nil || d < 1 {
			t.Fatalf("ARBITER_VERIFY_DEPTH=%q: want a depth", s)
		}
		depth = d
	}
	eng := openStockfish(t)
	// The shared data sits beside the project root; ARBITER_PERFT_DATA
	// points elsewhere (a checkout outside the shared tree).
	dir := filepath.Join("..", "..", "shared", "data", "perft")
	if d := os.Getenv("ARBITER_PERFT_DATA"); d != "" {
		dir = d
	}
	for _, suite := range []string{"perftsuite.epd", "ethereal_standard.epd", "blunder_perft_suite.epd", "ethereal_fischer960.epd"} {
		start := time.Now()
		ts := loadEPDFile(t, filepath.Join(dir, suite), depth)
		runAll(t, eng, ts)
		t.Logf("%s: %d positions at depth %d in %v", suite, len(ts), depth, time.Since(start).Round(time.Millisecond))
	}
	start := time.Now()
	ts := RandomTargets(1000, 2024, RandomOptions{Depth: depth})
	runAll(t, eng, ts)
	t.Logf("random: %d positions (seed 2024) at depth %d in %v", len(ts), depth, time.Since(start).Round(time.Millisecond))
}
