package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/eval"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/engine/syzygy/syzygytest"
)

// testTablesDir is the shared Syzygy test tables (every 3-4 piece table,
// KQRvKR and KBBvKN); without them the tests skip (syzygytest.Dir).
func testTablesDir(t testing.TB) string {
	t.Helper()
	return syzygytest.Dir(t, "KBBvKN.rtbz")
}

// rootWDLs returns the tables' result of every legal move of fen.
func rootWDLs(t *testing.T, tb *syzygy.Tablebase, p *engine.Position) map[engine.Move]syzygy.WDL {
	t.Helper()
	rm, err := tb.RootMoves(p)
	if err != nil {
		t.Fatal(err)
	}
	out := map[engine.Move]syzygy.WDL{}
	for _, m := range rm {
		out[m.Move] = m.WDL
	}
	return out
}

func openTestTables(t *testing.T) *syzygy.Tablebase {
	t.Helper()
	tb, err := tablebaseCache.open(testTablesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestTablebaseOptions: the four options as Stockfish has them, a path
// that does not exist or holds no tables refused with an error naming the
// option and the path, and one Tablebase per directory in the process.
func TestTablebaseOptions(t *testing.T) {
	dir := testTablesDir(t)
	specs := map[string]OptionSpec{}
	for _, s := range newTestEngine(t, nil).Options() {
		specs[s.Name] = s
	}
	want := map[string]OptionSpec{
		OptSyzygyPath:       {Name: OptSyzygyPath, Type: "string", Default: "<empty>", NamesFile: true},
		OptSyzygyProbeDepth: {Name: OptSyzygyProbeDepth, Type: "spin", Default: "1", Min: 1, Max: 100},
		OptSyzygy50MoveRule: {Name: OptSyzygy50MoveRule, Type: "check", Default: "true"},
		OptSyzygyProbeLimit: {Name: OptSyzygyProbeLimit, Type: "spin", Default: "7", Min: 0, Max: 7},
	}
	for name, w := range want {
		if specs[name] != w {
			t.Errorf("option %s: %+v, want %+v", name, specs[name], w)
		}
	}
	if !NamesFile("syzygypath") || !NamesFile(OptEvalFile) || NamesFile(OptSyzygyProbeDepth) || NamesFile(OptHash) {
		t.Error("NamesFile: want SyzygyPath and EvalFile only")
	}

	emptyDir := t.TempDir()
	notDir := filepath.Join(emptyDir, "file")
	os.WriteFile(notDir, []byte("x"), 0o600)
	for _, c := range []struct{ name, value, want string }{
		{OptSyzygyPath, "/no/such/tables", `option "SyzygyPath": directory "/no/such/tables" does not exist`},
		{OptSyzygyPath, "/no/such:/other", "one directory, not a list"},
		{OptSyzygyPath, notDir, "is not a directory"},
		{OptSyzygyPath, emptyDir, "no tables"},
		{OptSyzygyProbeDepth, "0", `option "SyzygyProbeDepth": value 0 out of range [1, 100]`},
		{OptSyzygyProbeLimit, "8", `option "SyzygyProbeLimit": value 8 out of range [0, 7]`},
		{OptSyzygy50MoveRule, "maybe", `option "Syzygy50MoveRule": value "maybe" is not true or false`},
	} {
		_, err := NewEngine(map[string]string{c.name: c.value})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: %v, want an error with %q", c.name, c.value, err, c.want)
		}
	}

	// The control: the real directory is taken, and opened once.
	a := newTestEngine(t, map[string]string{OptSyzygyPath: dir})
	b := newTestEngine(t, nil)
	if err := b.SetOption("syzygypath", dir+string(filepath.Separator)); err != nil {
		t.Fatal(err)
	}
	if a.tbs.tb == nil || a.tbs.tb != b.tbs.tb {
		t.Errorf("two engines on one directory hold tables %p and %p, want one shared", a.tbs.tb, b.tbs.tb)
	}
	if s := a.TablebaseSummary(); !strings.Contains(s, "up to 5-man") {
		t.Errorf("summary %q, want the tables counted up to 5 pieces", s)
	}
	if err := b.SetOption(OptSyzygyPath, "<empty>"); err != nil || b.tbs.tb != nil || b.TablebaseSummary() != "" {
		t.Errorf("<empty> must drop the tables: %v, %v", err, b.tbs.tb)
	}
}

// TestTablebaseRootWins: KQvKR and KRvK, won at the root, with tables:
// the best move keeps the win and tbhits counts the ranked root moves.
func TestTablebaseRootWins(t *testing.T) {
	dir := testTablesDir(t)
	tb := openTestTables(t)
	for _, fen := range []string{
		"8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1",  // KQvKR
		"8/8/8/8/4k3/8/8/R3K3 w - - 17 40", // KRvK
	} {
		p := mustFEN(t, fen)
		wdl := rootWDLs(t, tb, &p)
		e := newTestEngine(t, map[string]string{OptSyzygyPath: dir})
		m, info := e.Go(context.Background(), p, nil, Limits{Depth: 6})
		if wdl[m] != syzygy.Win {
			t.Errorf("%s: played %s, which the tables call %v", fen, p.UCIMove(m), wdl[m])
		}
		if info.TBHits == 0 {
			t.Errorf("%s: tbhits 0 with the root in the tables", fen)
		}
	}
}

// TestTablebaseRootFilter: the root is restricted to the moves that keep
// its best result (all winning moves of a KRvK, the drawing moves of a
// drawn KRvKR), and after a repetition to the fastest win.
func TestTablebaseRootFilter(t *testing.T) {
	dir := testTablesDir(t)
	tb := openTestTables(t)
	e := newTestEngine(t, map[string]string{OptSyzygyPath: dir})
	for _, c := range []struct {
		fen  string
		want syzygy.WDL
	}{
		{"8/8/8/8/8/8/1k6/R3K3 w - - 0 1", syzygy.Win},    // KRvK, the rook attacked
		{"8/8/3k4/8/8/3r4/8/R3K3 w - - 0 1", syzygy.Draw}, // KRvKR: some rook moves lose it
		{"8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1", syzygy.Win},
	} {
		p := mustFEN(t, c.fen)
		wdl := rootWDLs(t, tb, &p)
		e.searchMoves = e.searchMoves[:0]
		e.prepareTablebases(&p, nil)
		if len(e.searchMoves) == 0 || len(e.searchMoves) == len(wdl) {
			t.Errorf("%s: kept %d of %d moves, want a restriction", c.fen, len(e.searchMoves), len(wdl))
		}
		for _, m := range e.searchMoves {
			if wdl[m] != c.want {
				t.Errorf("%s: kept %s, a %v", c.fen, p.UCIMove(m), wdl[m])
			}
		}
		if e.tbRun.cardinality != 0 {
			t.Errorf("%s: probing inside the tree with the root ranked by DTZ", c.fen)
		}
	}

	// A repetition since the last zeroing move leaves only the fastest wins.
	p := mustFEN(t, "8/8/8/8/4k3/8/8/R3K3 w - - 8 5")
	ranked, err := tb.RootMoves(&p)
	if err != nil {
		t.Fatal(err)
	}
	fastest := ranked[0].DTZ
	for _, r := range ranked {
		if r.Rank == ranked[0].Rank {
			fastest = min(fastest, r.DTZ)
		}
	}
	e.searchMoves = e.searchMoves[:0]
	e.prepareTablebases(&p, nil)
	all := len(e.searchMoves)
	e.searchMoves = e.searchMoves[:0]
	e.prepareTablebases(&p, []uint64{1, 2, 3, p.Key(), 5, 6})
	if len(e.searchMoves) == 0 || len(e.searchMoves) >= all {
		t.Errorf("after a repetition kept %d moves of the %d winning ones, want only the fastest", len(e.searchMoves), all)
	}
	for _, m := range e.searchMoves {
		for _, r := range ranked {
			if r.Move == m && r.DTZ != fastest {
				t.Errorf("after a repetition kept %s with DTZ %d, want only DTZ %d", p.UCIMove(m), r.DTZ, fastest)
			}
		}
	}
}

// TestTablebaseCorrectsLowDepth: positions the search gets wrong at low
// depth without tables (the controls) and right with them. KPvK is in the
// tables at the root (the DTZ ranking decides); in KBBvKN with
// SyzygyProbeLimit=4 the root is not, and only the WDL probes after
// captures inside the tree (into KBvKN, KBBvK, ...) tell the one winning
// move.
func TestTablebaseCorrectsLowDepth(t *testing.T) {
	dir := testTablesDir(t)
	tb := openTestTables(t)
	for _, c := range []struct {
		fen   string
		depth int
		limit string
	}{
		{"8/8/8/6k1/8/4K3/5P2/8 w - - 0 1", 2, "7"},
		{"6Bk/2n5/8/8/8/8/5B2/6K1 w - - 0 1", 3, "4"},
	} {
		p := mustFEN(t, c.fen)
		wdl := rootWDLs(t, tb, &p)
		without := newTestEngine(t, map[string]string{OptSyzygyProbeLimit: c.limit})
		m, info := without.Go(context.Background(), p, nil, Limits{Depth: c.depth})
		if wdl[m] == syzygy.Win || info.TBHits != 0 {
			t.Errorf("%s control: without tables played %s (%v), tbhits %d; want a move that throws the win (else this test proves nothing)", c.fen, p.UCIMove(m), wdl[m], info.TBHits)
		}
		with := newTestEngine(t, map[string]string{OptSyzygyPath: dir, OptSyzygyProbeLimit: c.limit})
		m, info = with.Go(context.Background(), p, nil, Limits{Depth: c.depth})
		if wdl[m] != syzygy.Win {
			t.Errorf("%s: with tables played %s, a %v", c.fen, p.UCIMove(m), wdl[m])
		}
		if info.TBHits == 0 {
			t.Errorf("%s: tbhits 0", c.fen)
		}
	}
}

// TestTablebaseProbeRules: which positions the tree probes (halfmove clock
// 0, no castling rights, pieces and depth against the limits) and the
// scores and bounds a WDL becomes.
func TestTablebaseProbeRules(t *testing.T) {
	dir := testTablesDir(t)
	e := newTestEngine(t, map[string]string{OptSyzygyPath: dir, OptSyzygyProbeDepth: "3"})
	w := e.workers[0]
	e.tbRun = tbSearch{cardinality: 4}
	for _, c := range []struct {
		fen   string
		depth int
		probe bool
	}{
		{"8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1", 3, true},   // 4 pieces at the probe depth
		{"8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1", 2, false},  // … below it
		{"8/8/8/3k4/8/8/8/KQ6 w - - 0 1", 1, true},     // fewer pieces: any depth
		{"8/8/8/3k4/8/8/2r5/KQ6 w - - 1 1", 5, false},  // not right after a zeroing move
		{"8/8/8/3k4/8/8/8/R3K3 w Q - 0 1", 5, false},   // castling rights
		{"8/8/8/3k4/8/8/2r5/KQR5 w - - 0 1", 9, false}, // 5 pieces over the cardinality
	} {
		p := mustFEN(t, c.fen)
		w.tbHits.Store(0)
		w.stack[0] = p
		w.resetAccumulators()
		_, _ = w.probeTB(&w.stack[0], -Infinity, Infinity, c.depth, 0, p.InCheck())
		if got := w.tbHits.Load() == 1; got != c.probe {
			t.Errorf("%s at depth %d: probed %v, want %v", c.fen, c.depth, got, c.probe)
		}
	}
	for _, c := range []struct {
		wdl    syzygy.WDL
		rule50 bool
		score  int
		bound  Bound
	}{
		{syzygy.Win, true, TBWinScore - 5, BoundLower},
		{syzygy.CursedWin, true, 2, BoundExact},
		{syzygy.CursedWin, false, TBWinScore - 5, BoundLower},
		{syzygy.Draw, true, 0, BoundExact},
		{syzygy.BlessedLoss, true, -2, BoundExact},
		{syzygy.Loss, false, -TBWinScore + 5, BoundUpper},
	} {
		if s, b := tbScore(c.wdl, 5, c.rule50); s != c.score || b != c.bound {
			t.Errorf("%v (50-move rule %v): %d %v, want %d %v", c.wdl, c.rule50, s, b, c.score, c.bound)
		}
	}
	if TBWinBound <= eval.MaxEval || TBWinScore >= MateBound {
		t.Errorf("TB scores (%d, %d] must lie between evaluations and mates", TBWinBound, TBWinScore)
	}
}

// playOut plays pos to its end with white and black, at most maxPlies
// plies, and says how it ended: "checkmate", "stalemate", "fifty-move",
// "repetition" or "unfinished".
func playOut(t *testing.T, pos engine.Position, white, black *Engine, lim Limits, maxPlies int) (string, int) {
	t.Helper()
	var history []uint64
	for ply := 0; ply < maxPlies; ply++ {
		switch {
		case pos.LegalMoveCount() == 0 && pos.InCheck():
			return "checkmate", ply
		case pos.LegalMoveCount() == 0:
			return "stalemate", ply
		case pos.HalfmoveClock() >= 100:
			return "fifty-move", ply
		case pos.InsufficientMaterial():
			return "insufficient", ply
		}
		seen := 0
		for _, k := range history {
			if k == pos.Key() {
				seen++
			}
		}
		if seen >= 2 {
			return "repetition", ply
		}
		e := white
		if pos.SideToMove() == engine.Black {
			e = black
		}
		m, _ := e.Go(context.Background(), pos, history, lim)
		history = append(history, pos.Key())
		pos.MakeMove(m)
	}
	return "unfinished", maxPlies
}

// TestTablebaseConverts: KQvKR at depth 3 per move. With tables the engine
// mates within the 50-move rule; the control, the same engine without
// tables, does not.
func TestTablebaseConverts(t *testing.T) {
	dir := testTablesDir(t)
	p := mustFEN(t, "8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1")
	lim := Limits{Depth: 3}
	defender := newTestEngine(t, map[string]string{OptSyzygyPath: dir})
	end, plies := playOut(t, p, newTestEngine(t, nil), defender, lim, 300)
	if end == "checkmate" {
		t.Errorf("control: without tables the engine mated in %d plies; want a position it fails to convert (else this test proves nothing)", plies)
	}
	t.Logf("without tables: %s after %d plies", end, plies)
	end, plies = playOut(t, p, newTestEngine(t, map[string]string{OptSyzygyPath: dir}), defender, lim, 300)
	t.Logf("with tables: %s after %d plies", end, plies)
	if end != "checkmate" {
		t.Errorf("with tables: %s after %d plies, want checkmate", end, plies)
	}
}

// TestTablebaseProbesWithHelpers: Lazy SMP helpers probe the shared tables
// at once and the reported tbhits is every thread's sum (run under -race).
func TestTablebaseProbesWithHelpers(t *testing.T) {
	dir := testTablesDir(t)
	p := mustFEN(t, "6Bk/2n5/8/8/8/8/5B2/6K1 w - - 0 1")
	e := newTestEngine(t, map[string]string{OptSyzygyPath: dir, OptSyzygyProbeLimit: "4", OptThreads: "3"})
	ctx, cancel := context.WithCancel(context.Background())
	run := e.Start(ctx, p, nil, Limits{Infinite: true})
	deadline := time.Now().Add(60 * time.Second)
	for _, w := range e.workers {
		for w.tbHits.Load() == 0 {
			if time.Now().After(deadline) {
				cancel()
				run.Wait()
				t.Fatalf("thread %d never probed", w.id)
			}
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	_, info := run.Wait()
	var sum int64
	for _, w := range e.workers {
		sum += w.tbHits.Load()
	}
	if info.TBHits != sum {
		t.Errorf("tbhits %d, want every thread's: %d", info.TBHits, sum)
	}
}

// TestTablebaseDamagedTableReported: a damaged table is no result (the
// engine still plays) and the search reports it in Info.TBError, naming the
// file; a table missing from a partial set is not an error; the intact
// tables (the control) report nothing.
func TestTablebaseDamagedTableReported(t *testing.T) {
	shared := testTablesDir(t)
	// Two directories: the process keeps each directory's listing.
	partial, damaged := t.TempDir(), t.TempDir()
	list, err := os.ReadDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range list {
		name := f.Name()
		if !strings.HasPrefix(name, "K") {
			continue
		}
		for _, dir := range []string{partial, damaged} {
			if strings.HasPrefix(name, "KRvK.") {
				continue
			}
			if err := os.Symlink(filepath.Join(shared, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := mustFEN(t, "8/8/8/8/8/8/1k6/R3K3 w - - 0 1") // KRvK
	missing := newTestEngine(t, map[string]string{OptSyzygyPath: partial})
	if _, info := missing.Go(context.Background(), p, nil, Limits{Depth: 4}); info.TBError != nil {
		t.Errorf("a missing table reported: %v", info.TBError)
	}
	for _, ext := range []string{".rtbw", ".rtbz"} {
		data, err := os.ReadFile(filepath.Join(shared, "KRvK"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(damaged, "KRvK"+ext), data[:len(data)/3], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := newTestEngine(t, map[string]string{OptSyzygyPath: damaged})
	m, info := e.Go(context.Background(), p, nil, Limits{Depth: 4})
	if !p.IsLegal(m) || info.TBError == nil || !strings.Contains(info.TBError.Error(), "KRvK") {
		t.Errorf("damaged KRvK: move %v, TBError %v; want a legal move and the file named", m, info.TBError)
	}
	_, info = newTestEngine(t, map[string]string{OptSyzygyPath: shared}).Go(context.Background(), p, nil, Limits{Depth: 4})
	if info.TBError != nil {
		t.Errorf("control, the intact tables: %v", info.TBError)
	}
}
