package engine

// Perft suite tests: every position of the public suites in
// testdata/perft (byte-for-byte copies of ../shared/data/perft, see the
// README there for their origin) is checked at every depth whose expected
// count is within the node budget.
//
// The budget keeps `go test ./engine/` within a few minutes on two cores:
//
//	default                   each depth whose expected count ≤ 2,000,000
//	ARBITER_PERFT_FULL=1      every depth of every position (hours on two
//	                          cores; `make perft-full` sets it)
//	ARBITER_PERFT_MAX_NODES=N each depth whose expected count ≤ N
//	go test -short            each depth whose expected count ≤ 50,000
//
// The octoprime CSV sweep (6,838 positions) uses a quarter of the budget by
// default, since it is 50 times larger than the other suites; the full run
// lifts that too.

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const defaultPerftBudget = 2_000_000

// perftFull reports whether ARBITER_PERFT_FULL=1 lifts every budget.
func perftFull() bool { return os.Getenv("ARBITER_PERFT_FULL") == "1" }

// perftBudget returns the largest expected node count a suite test checks.
func perftBudget(t testing.TB) uint64 {
	if perftFull() {
		return math.MaxUint64
	}
	if v := os.Getenv("ARBITER_PERFT_MAX_NODES"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("ARBITER_PERFT_MAX_NODES=%q: %v", v, err)
		}
		return n
	}
	if testing.Short() {
		return 50_000
	}
	return defaultPerftBudget
}

// suiteEntry is one position of a perft suite with its expected counts.
type suiteEntry struct {
	file  string
	line  int
	fen   string
	depth []int
	nodes []uint64
}

func (e suiteEntry) String() string { return fmt.Sprintf("%s:%d %q", e.file, e.line, e.fen) }

func perftDataPath(name string) string { return filepath.Join("testdata", "perft", name) }

// readLines returns the non-empty lines of a testdata/perft file.
func readLines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(perftDataPath(name))
	if err != nil {
		t.Fatalf("open suite: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadEPDSuite reads lines `FEN ;D1 n ;D2 n ...`.
func loadEPDSuite(t testing.TB, name string) []suiteEntry {
	t.Helper()
	var out []suiteEntry
	for i, line := range readLines(t, name) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, ";")
		e := suiteEntry{file: name, line: i + 1, fen: strings.TrimSpace(parts[0])}
		for _, p := range parts[1:] {
			f := strings.Fields(p)
			if len(f) != 2 || len(f[0]) < 2 || f[0][0] != 'D' {
				t.Fatalf("%s:%d: bad depth field %q", name, i+1, p)
			}
			d, err1 := strconv.Atoi(f[0][1:])
			n, err2 := strconv.ParseUint(f[1], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s:%d: bad depth field %q", name, i+1, p)
			}
			e.depth = append(e.depth, d)
			e.nodes = append(e.nodes, n)
		}
		if len(e.depth) == 0 {
			t.Fatalf("%s:%d: no depths", name, i+1)
		}
		out = append(out, e)
	}
	return out
}

// loadCSVSuite reads the octoprime format: `FEN(4 fields),D1,...,D6`.
func loadCSVSuite(t testing.TB, name string) []suiteEntry {
	t.Helper()
	var out []suiteEntry
	for i, line := range readLines(t, name) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 2 {
			t.Fatalf("%s:%d: bad line", name, i+1)
		}
		e := suiteEntry{file: name, line: i + 1, fen: f[0]}
		for d, s := range f[1:] {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: bad count %q", name, i+1, s)
			}
			e.depth = append(e.depth, d+1)
			e.nodes = append(e.nodes, n)
		}
		out = append(out, e)
	}
	return out
}

// runSuite checks every (position, depth) within budget. Small jobs run on
// two goroutines with Perft; jobs above 200k nodes use RunPerft with two
// threads (so both entry points are covered). Returns the nodes checked.
func runSuite(t *testing.T, entries []suiteEntry, budget uint64, chess960 bool) uint64 {
	t.Helper()
	type job struct {
		e     *suiteEntry
		pos   Position
		depth int
		want  uint64
	}
	var small, big []job
	for i := range entries {
		e := &entries[i]
		p, err := ParseFEN(e.fen)
		if err != nil {
			t.Errorf("%v: ParseFEN: %v", e, err)
			continue
		}
		if chess960 {
			if strings.Fields(e.fen)[2] != "-" && !p.IsChess960() {
				t.Errorf("%v: Shredder-FEN castling field not recognised as Chess960", e)
			}
			p.SetChess960(true)
		}
		for k, d := range e.depth {
			if e.nodes[k] > budget {
				continue
			}
			j := job{e, p, d, e.nodes[k]}
			if e.nodes[k] > 200_000 {
				big = append(big, j)
			} else {
				small = append(small, j)
			}
		}
	}
	var checked uint64
	var failed []job
	report := func(j job, got Count) {
		if !got.IsUint64() || got.Lo != j.want {
			t.Errorf("%v depth %d: perft = %v, want %d", j.e, j.depth, got, j.want)
			failed = append(failed, j)
		}
	}
	defer func() {
		// Point at the exact position where we go wrong, if Stockfish is
		// there to ask (see stockfish_test.go).
		if len(failed) == 0 {
			return
		}
		if _, err := os.Stat(stockfishPath()); err != nil {
			return
		}
		sf := startStockfish(t)
		for _, j := range failed[:min(5, len(failed))] {
			t.Logf("%v depth %d: divergence from Stockfish %s", j.e, j.depth, divergence(t, sf, j.pos, j.depth))
		}
	}()
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan job)
	workers := min(2, runtime.GOMAXPROCS(0))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				p := j.pos
				n := Perft(&p, j.depth)
				mu.Lock()
				report(j, CountOf(n))
				checked += n
				mu.Unlock()
			}
		}()
	}
	for _, j := range small {
		ch <- j
	}
	close(ch)
	wg.Wait()
	for _, j := range big {
		res, err := RunPerft(context.Background(), j.pos, j.depth, PerftOptions{Threads: 2})
		if err != nil {
			t.Fatalf("%v depth %d: %v", j.e, j.depth, err)
		}
		report(j, res.Nodes)
		var sum Count
		for _, d := range res.Divide {
			sum = sum.AddCount(d.Nodes)
		}
		if sum != res.Nodes {
			t.Errorf("%v depth %d: divide sums to %v, total %v", j.e, j.depth, sum, res.Nodes)
		}
		checked += res.Nodes.Lo
	}
	t.Logf("%d positions, %d (position, depth) checks, %d nodes, budget %d", len(entries), len(small)+len(big), checked, budget)
	return checked
}

func TestPerftSuites(t *testing.T) {
	budget := perftBudget(t)
	for _, s := range []struct {
		file     string
		chess960 bool
		want     int // positions in the file, so a truncated copy fails
	}{
		{"perftsuite.epd", false, 126},
		{"ethereal_standard.epd", false, 128},
		{"blunder_perft_suite.epd", false, 162},
		{"ethereal_fischer960.epd", true, 960},
	} {
		t.Run(strings.TrimSuffix(s.file, ".epd"), func(t *testing.T) {
			entries := loadEPDSuite(t, s.file)
			if len(entries) != s.want {
				t.Fatalf("%s: %d positions, want %d", s.file, len(entries), s.want)
			}
			runSuite(t, entries, budget, s.chess960)
		})
	}
}

func TestPerftOctoprimeLong(t *testing.T) {
	entries := loadCSVSuite(t, "octoprime_perft_long.csv")
	// 6,838 lines: the README's "6,837" counts newlines, and the last line
	// (the start position again) has none.
	if len(entries) != 6838 {
		t.Fatalf("%d positions, want 6838", len(entries))
	}
	budget := perftBudget(t)
	if !perftFull() && os.Getenv("ARBITER_PERFT_MAX_NODES") == "" {
		budget /= 4
	}
	runSuite(t, entries, budget, false)
}

// cpwDisputed maps (position, depth, column) to the value several
// independent move generators agree on where the chessprogramming wiki's
// "Perft Results" table differs (see testdata/perft/README.md):
//   - Kiwipete d5 double checks: 2645 (CPW 2637) — reported by several
//     independent generators (TalkChess "Perft statistics -
//     chessprogrammingwiki", chess.stackexchange q/26415);
//   - startpos d8 discovered checks: 847043 (CPW 847039) — the Grand Chess
//     Tree's figure (TalkChess "Are the perft results wrong on the CPW?"),
//     which our perft's statistics give.
//
// The Grand Chess Tree also reported startpos d7 checkmates of 435765
// against CPW's 435767; our perft's statistics and a second count through
// the search's move generator (TestStartposD7MatesBySearchMovegen) both
// give CPW's 435767, so that cell is not disputed here.
//
// The last one only runs with ARBITER_PERFT_FULL=1.
var cpwDisputed = map[string]uint64{
	"kiwipete/5/double_checks":    2645,
	"startpos/8/discovery_checks": 847043,
}

func TestPerftCPWStats(t *testing.T) {
	rows := readLines(t, "cpw_perft_results_stats.csv")
	header := strings.Split(rows[0], ",")
	wantHeader := "position,fen,depth,nodes,captures,ep,castles,promotions,checks,discovery_checks,double_checks,checkmates"
	if rows[0] != wantHeader {
		t.Fatalf("header %q, want %q", rows[0], wantHeader)
	}
	budget := perftBudget(t)
	if perftFull() {
		// Even the full run stops at 1e11 leaves (startpos d8, about an hour
		// on two cores with statistics): d9 would take days and d10..d15 are
		// cluster jobs (d14 and d15 do not even fit in uint64).
		budget = 100_000_000_000
	}
	checkedRows := 0
	for i, row := range rows[1:] {
		f := strings.Split(row, ",")
		if len(f) != len(header) {
			t.Fatalf("line %d: %d fields", i+2, len(f))
		}
		name, fen := f[0], f[1]
		depth, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("line %d: depth %q", i+2, f[2])
		}
		want, ok := ParseCount(f[3])
		if !ok {
			t.Fatalf("line %d: nodes %q", i+2, f[3])
		}
		if !want.IsUint64() || want.Lo > budget {
			continue
		}
		hasStats := false
		for _, c := range f[4:] {
			hasStats = hasStats || c != ""
		}
		p, err := ParseFEN(fen)
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		res, err := RunPerft(context.Background(), p, depth, PerftOptions{Threads: 2, Stats: hasStats})
		if err != nil {
			t.Fatal(err)
		}
		checkedRows++
		if res.Nodes != want {
			t.Errorf("%s d%d: nodes %v, want %v", name, depth, res.Nodes, want)
		}
		if !hasStats {
			continue
		}
		st := res.Stats
		if st == nil {
			t.Fatalf("%s d%d: Stats requested, got nil", name, depth)
		}
		got := map[string]uint64{
			"nodes": st.Nodes, "captures": st.Captures, "ep": st.EnPassant, "castles": st.Castles,
			"promotions": st.Promotions, "checks": st.Checks, "discovery_checks": st.DiscoveryChecks,
			"double_checks": st.DoubleChecks, "checkmates": st.Checkmates,
		}
		for c := 3; c < len(header); c++ {
			if f[c] == "" {
				continue // the table gives no value
			}
			w, err := strconv.ParseUint(f[c], 10, 64)
			if err != nil {
				t.Fatalf("line %d: %s %q", i+2, header[c], f[c])
			}
			if d, ok := cpwDisputed[fmt.Sprintf("%s/%d/%s", name, depth, header[c])]; ok {
				w = d
			}
			if got[header[c]] != w {
				t.Errorf("%s d%d: %s = %d, want %d", name, depth, header[c], got[header[c]], w)
			}
		}
	}
	if checkedRows < 20 {
		t.Errorf("only %d rows within budget %d", checkedRows, budget)
	}
}

// TestPerftStatsKiwipete5 checks the disputed Kiwipete d5 statistics row
// even under the default budget (1.9e8 leaves, a few seconds on two cores;
// skipped with -short).
func TestPerftStatsKiwipete5(t *testing.T) {
	if testing.Short() || perftFull() || perftBudget(t) >= 193690690 {
		t.Skip("covered by TestPerftCPWStats at this budget, or -short")
	}
	p, err := ParseFEN("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunPerft(context.Background(), p, 5, PerftOptions{Threads: 2, Stats: true})
	if err != nil {
		t.Fatal(err)
	}
	want := PerftStats{Nodes: 193690690, Captures: 35043416, EnPassant: 73365, Castles: 4993637,
		Promotions: 8392, Checks: 3309887, DiscoveryChecks: 19883, DoubleChecks: 2645 /* CPW: 2637, disputed */, Checkmates: 30171}
	if *res.Stats != want {
		t.Errorf("Kiwipete d5 stats\n got %+v\nwant %+v", *res.Stats, want)
	}
}
