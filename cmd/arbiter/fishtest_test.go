package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Fishtest's worker with arbiter as its fastchess (docs/match.md,
// "Fishtest's worker").
//
// Fishtest's sources carry no licence, so they are not copied here: the
// test that runs its worker code needs FISHTEST_SRC, a fishtest checkout
// (its worker/ folder is copied) or git directory (fishtestCommit's
// worker/ is extracted), and is skipped without it. The games and the
// lines it reads are also checked without Fishtest's code
// (TestFishtestBatchSameLinesAsFastchess): every line arbiter prints
// against the lines the real fastchess 1.8.2 printed on the same games
// (testdata/fishtest/fastchess-1.8.2.out), and again against the real
// fastchess itself where it is built (FASTCHESS=path).

// fishtestCommit is the official-stockfish/fishtest commit whose worker
// these tests ran (its worker.py pins fastchess 58072f23).
const fishtestCommit = "b8eecff220b562a0dc2c4e68d1fa02521e06d72c"

// The batch: twelve games (six pairs) of Stockfish at 400 nodes (New)
// against 300 (Base), book openings shuffled by seed 6, the rest as
// Fishtest's run_games sets it. Fixed nodes, one thread and a clock so
// long (1000+10) that no time limit cuts a search make the games the same
// on every run with Debian's Stockfish 15.1, however loaded the machine;
// this seed's games
// give no PV that fastchess's checks (-check-mate-pvs among them) warn
// about.
const (
	fishtestGames       = 12
	fishtestSeed        = 6
	fishtestNodesNew    = 400
	fishtestNodesBase   = 300
	fishtestStockfishID = "Stockfish 15.1"
)

// fishtestStats are the counts Fishtest's worker posts to its server.
type fishtestStats struct {
	Wins        int    `json:"wins"`
	Losses      int    `json:"losses"`
	Draws       int    `json:"draws"`
	Crashes     int    `json:"crashes"`
	TimeLosses  int    `json:"time_losses"`
	Pentanomial [5]int `json:"pentanomial"`
}

// fishtestWant is what Fishtest's worker posted with the real fastchess
// 1.8.2 on the batch (measured; the same as the last block of
// testdata/fishtest/fastchess-1.8.2.out).
var fishtestWant = fishtestStats{Wins: 5, Losses: 7, Draws: 0, Pentanomial: [5]int{2, 0, 3, 0, 1}}

// fishtestBatch is Fishtest's fastchess command line (worker/games.py,
// run_games, as driver.py builds it) for the batch, with fixed nodes, our
// book and engine, without the SPSA placeholders.
func fishtestBatch(engine string, concurrency int) []string {
	cmd := []string{"-testEnv", "-recover", "-repeat", "-games", "2", "-rounds", strconv.Itoa(fishtestGames / 2),
		"-ratinginterval", "1", "-scoreinterval", "1", "-autosaveinterval", "0", "-report", "penta=true",
		"-pgnout", "file=batch.pgn", "append=false",
		"-crc32", "pgn=true",
		"-site", "https://tests.stockfishchess.org/tests/view/6650a1b2c3d4e5f6a7b8c9d0",
		"-event", "Batch 7: e443b245 vs e443b245",
		"-srand", strconv.Itoa(fishtestSeed),
		"-resign", "movecount=3", "score=600", "-draw", "movenumber=34", "movecount=8", "score=20",
		"-variant", "standard",
		"-concurrency", strconv.Itoa(concurrency),
		"-openings", "file=book.epd", "format=epd", "order=random", "plies=16", "start=1",
		"-check-mate-pvs",
		"-engine", "name=New-e443b2459e", "tc=1000+10", fmt.Sprintf("nodes=%d", fishtestNodesNew), "cmd=" + engine, "dir=.", "option.Hash=16",
		"-engine", "name=Base-e443b2459e", "tc=1000+10", fmt.Sprintf("nodes=%d", fishtestNodesBase), "cmd=" + engine, "dir=.", "option.Hash=16",
		"-each", "proto=uci", "option.Threads=1",
	}
	return cmd
}

// needFishtestStockfish skips unless Stockfish is the version the batch
// was measured with (another version plays other games).
func needFishtestStockfish(t *testing.T) {
	t.Helper()
	needSF(t)
	out, _ := exec.Command("sh", "-c", "echo quit | "+matchSF).Output()
	if first, _, _ := strings.Cut(string(out), "\n"); !strings.HasPrefix(first, fishtestStockfishID+" ") {
		t.Skipf("the batch's games were measured with %s; %s is %q", fishtestStockfishID, matchSF, first)
	}
}

// fastchessLink makes dir/fastchess, a symlink to this test binary, which
// TestMain then runs as arbiter called through a fastchess symlink.
func fastchessLink(t *testing.T, dir string) string {
	t.Helper()
	link := filepath.Join(dir, "fastchess")
	if err := os.Symlink(os.Args[0], link); err != nil {
		t.Fatal(err)
	}
	return link
}

var (
	totalTimeLine = regexp.MustCompile(`^Total Time: \d\d:\d\d:\d\d `)
	crcLine       = regexp.MustCompile(`^File (\S+) has CRC32: (0x[0-9a-f]+)$`)
)

// batchRun is what a fastchess (the real one or arbiter's symlink)
// printed and wrote on the batch.
type batchRun struct {
	lines []string // standard output, the run's time and the CRC32 values masked
	crcs  []string // the CRC32 values printed, in order
	pgn   []byte   // the PGN file
}

// runBatch runs a fastchess on the batch in a fresh folder.
func runBatch(t *testing.T, fastchess string, concurrency int) batchRun {
	t.Helper()
	dir := t.TempDir()
	copyBook(t, filepath.Join(dir, "book.epd"))
	cmd := exec.Command(fastchess, fishtestBatch(matchSF, concurrency)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", fastchess, err, out, stderr.Bytes())
	}
	var r batchRun
	for _, l := range strings.Split(string(out), "\n") {
		switch m := crcLine.FindStringSubmatch(l); {
		case totalTimeLine.MatchString(l):
			l = "Total Time: (the run's)"
		case m != nil:
			r.crcs = append(r.crcs, m[2])
			l = "File " + m[1] + " has CRC32: (the file's so far)"
		}
		r.lines = append(r.lines, l)
	}
	if r.pgn, err = os.ReadFile(filepath.Join(dir, "batch.pgn")); err != nil {
		t.Fatal(err)
	}
	return r
}

const (
	fastchessGolden    = "testdata/fishtest/fastchess-1.8.2.out"
	fastchessGoldenPGN = "testdata/fishtest/fastchess-1.8.2.pgn"
)

// fastchessGoldenCRCs are the CRC32 lines fastchess 1.8.2 printed in the
// run that wrote fastchess-1.8.2.pgn (2026-12-05), one after each game:
// the CRC32 of the file up to that game.
var fastchessGoldenCRCs = []string{"0x735325e9", "0xc98e9d42", "0xf3ef5d8", "0x3563c7f", "0x6567517e", "0xfd3412cf",
	"0xe10e748b", "0x9ff6de9b", "0x427ff08e", "0xc9313f56", "0x55bdd02a", "0x4918327e"}

// pgnClockValue is every value of a fastchess PGN that depends on the
// wall clock: the Date, GameDuration, GameStartTime and GameEndTime tags
// and each engine move's time.
var pgnClockValue = regexp.MustCompile(`\[(?:Date|GameDuration|GameStartTime|GameEndTime) "([^"]*)"\]| (\d+\.\d{3}s)[,}]`)

// clockValues are the clock values of a PGN text, in order.
func clockValues(pgn []byte) []string {
	var v []string
	for _, m := range pgnClockValue.FindAllSubmatch(pgn, -1) {
		v = append(v, string(m[1])+string(m[2]))
	}
	return v
}

// withClockValues is pgn with its clock values replaced, in order, by vals.
func withClockValues(t *testing.T, pgn []byte, vals []string) []byte {
	t.Helper()
	idx := pgnClockValue.FindAllSubmatchIndex(pgn, -1)
	if len(idx) != len(vals) {
		t.Fatalf("%d clock values, %d to put in", len(idx), len(vals))
	}
	var out []byte
	last := 0
	for i, m := range idx {
		a, b := m[2], m[3]
		if a < 0 {
			a, b = m[4], m[5]
		}
		out = append(append(out, pgn[last:a]...), vals[i]...)
		last = b
	}
	return append(out, pgn[last:]...)
}

// gameCRCs is the CRC32 of pgn up to the end of each game.
func gameCRCs(pgn []byte) []string {
	var sums []string
	for i := 0; i < len(pgn); {
		j := bytes.Index(pgn[i:], []byte("\n\n[Event "))
		end := len(pgn)
		if j >= 0 {
			end = i + j + 2
		}
		sums = append(sums, fmt.Sprintf("%#x", crc32.ChecksumIEEE(pgn[:end])))
		i = end
	}
	return sums
}

// comparePGN fails on the first line of got that differs from want's
// other than in a clock value, showing both.
func comparePGN(t *testing.T, who string, want, got []byte) {
	t.Helper()
	mask := func(b []byte) []string {
		masked := make([]string, len(clockValues(b)))
		for i := range masked {
			masked[i] = "(clock)"
		}
		return strings.Split(string(withClockValues(t, b, masked)), "\n")
	}
	compareLines(t, who+"'s PGN", mask(want), mask(got))
}

// TestFishtestBatchSameLinesAsFastchess: on the batch's games (one at a
// time, so that the lines come in one order), arbiter as fastchess prints
// every line the real fastchess 1.8.2 printed, in the same places: the
// Started and Finished lines, each report block (Elo, nElo, LOS,
// DrawRatio, PairsRatio, W/L/D, pentanomial, WL/DD, nan as fastchess
// prints it), a CRC32 line after each game, and the last CRC32 line is
// the PGN file's. Its PGN file is fastchess's
// (testdata/fishtest/fastchess-1.8.2.pgn) line for line but for the
// clock's values (Date, GameDuration, GameStartTime, GameEndTime, the
// time of each move); with the recording's clock values put in, it is
// the recording byte for byte, and the CRC32 after each game is the one
// fastchess printed (fastchessGoldenCRCs, which the recording's own
// prefixes give too). Only the clock keeps the CRC32 lines of two runs
// apart. With FASTCHESS set the real fastchess runs too and must print
// the recorded lines and write the recorded PGN but for its clock (the
// recordings stay true).
func TestFishtestBatchSameLinesAsFastchess(t *testing.T) {
	needFishtestStockfish(t)
	want, err := os.ReadFile(fastchessGolden)
	if err != nil {
		t.Fatal(err)
	}
	wantPGN, err := os.ReadFile(fastchessGoldenPGN)
	if err != nil {
		t.Fatal(err)
	}
	if got := gameCRCs(wantPGN); !slices.Equal(got, fastchessGoldenCRCs) {
		t.Fatalf("the recorded PGN's CRC32 after each game %v, fastchess printed %v", got, fastchessGoldenCRCs)
	}
	wantLines := strings.Split(string(want), "\n")
	got := runBatch(t, fastchessLink(t, t.TempDir()), 1)
	compareLines(t, "arbiter", wantLines, got.lines)
	if own := gameCRCs(got.pgn); !slices.Equal(got.crcs, own) {
		t.Errorf("arbiter printed CRC32 %v, its PGN file's after each game are %v", got.crcs, own)
	}
	comparePGN(t, "arbiter", wantPGN, got.pgn)
	same := withClockValues(t, got.pgn, clockValues(wantPGN))
	if !bytes.Equal(same, wantPGN) {
		t.Errorf("arbiter's PGN with fastchess's clock values is not fastchess's PGN")
	}
	if sums := gameCRCs(same); !slices.Equal(sums, fastchessGoldenCRCs) {
		t.Errorf("with fastchess's clock values, arbiter's CRC32 lines would be %v, fastchess printed %v", sums, fastchessGoldenCRCs)
	}
	if bin := os.Getenv("FASTCHESS"); bin != "" {
		real := runBatch(t, bin, 1)
		compareLines(t, "fastchess "+bin, wantLines, real.lines)
		if own := gameCRCs(real.pgn); !slices.Equal(real.crcs, own) {
			t.Errorf("fastchess printed CRC32 %v, its PGN file's after each game are %v", real.crcs, own)
		}
		comparePGN(t, "fastchess "+bin, wantPGN, real.pgn)
	} else {
		t.Log("FASTCHESS unset: compared with the recorded output and PGN of fastchess 1.8.2 only")
	}
}

// compareLines fails on the first line that differs, showing both.
func compareLines(t *testing.T, who string, want, got []string) {
	t.Helper()
	for i := range max(len(want), len(got)) {
		w, g := "(none)", "(none)"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("%s: line %d differs from fastchess 1.8.2's:\nfastchess: %s\n%-9s: %s", who, i+1, w, "got", g)
			return
		}
	}
}

// driverResult is driver.py's last line.
type driverResult struct {
	Kept    bool            `json:"kept"`
	Alive   bool            `json:"alive"`
	Raised  string          `json:"raised"`
	Stats   fishtestStats   `json:"stats"`
	CRC     string          `json:"crc"`
	PGNCRC  string          `json:"pgn_crc32"`
	Updates []fishtestStats `json:"updates"`
}

// fishtestWorkerDir is Fishtest's worker/ folder from FISHTEST_SRC,
// copied or extracted into a folder of the test's own (the worker writes
// its log beside its sources).
func fishtestWorkerDir(t *testing.T) string {
	t.Helper()
	src := os.Getenv("FISHTEST_SRC")
	if src == "" {
		t.Skip("FISHTEST_SRC unset: Fishtest's sources carry no licence and are not in this repository; set it to a checkout or git directory of official-stockfish/fishtest")
	}
	dir := t.TempDir()
	var cmd *exec.Cmd
	if _, err := os.Stat(filepath.Join(src, "worker", "games.py")); err == nil {
		cmd = exec.Command("cp", "-R", filepath.Join(src, "worker"), dir)
	} else {
		cmd = exec.Command("sh", "-c", `git --git-dir="$1" archive "$2" worker | tar -x -C "$3"`, "sh", src, fishtestCommit, dir)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("FISHTEST_SRC=%s: no worker/ folder, and not a git directory with commit %s: %v\n%s", src, fishtestCommit, err, out)
	}
	return filepath.Join(dir, "worker")
}

// debianPython is Debian's python3 (the one a Fishtest worker on Debian
// runs), else the first on PATH.
func debianPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return p
}

// runDriver runs Fishtest's worker code (driver.py) with fastchess as its
// fastchess, two games at once, on the batch.
func runDriver(t *testing.T, python, worker, fastchess string) driverResult {
	t.Helper()
	dir := t.TempDir()
	copyBook(t, filepath.Join(dir, "book.epd"))
	driver, err := filepath.Abs("testdata/fishtest/driver.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, driver, worker, fastchess, "book.epd", matchSF, strconv.Itoa(fishtestGames), "2",
		strconv.Itoa(fishtestSeed), strconv.Itoa(fishtestNodesNew), strconv.Itoa(fishtestNodesBase))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("driver.py with %s: %v\n%s", fastchess, err, out)
	}
	i := bytes.LastIndex(out, []byte("DRIVER_RESULT "))
	if i < 0 {
		t.Fatalf("driver.py with %s printed no result:\n%s", fastchess, out)
	}
	var r driverResult
	if err := json.Unmarshal(bytes.TrimSpace(out[i+len("DRIVER_RESULT "):]), &r); err != nil {
		t.Fatalf("driver.py result: %v\n%s", err, out)
	}
	if r.Raised != "" || !r.Alive {
		t.Errorf("with %s, Fishtest's worker raised %q (alive %v):\n%s", fastchess, r.Raised, r.Alive, out)
	}
	return r
}

// TestFishtestWorkerKeepsArbiter runs Fishtest's worker code, unmodified,
// with arbiter (a fastchess symlink) as its fastchess: verify_fastchess
// keeps the binary; launch_fastchess runs the batch, two games at once,
// and parse_fastchess_output reads every line without raising, posts one
// update per pair to a stub server, and ends with the W/L/D and
// pentanomial the real fastchess 1.8.2 gives on these games, and the PGN
// file's CRC32. Controls: a binary printing arbiter's former version line
// is refused by the same verify_fastchess, and its (empty) output posts
// no results; with FASTCHESS set, the real fastchess runs through the
// same code and must post the same results.
func TestFishtestWorkerKeepsArbiter(t *testing.T) {
	needFishtestStockfish(t)
	python := debianPython(t)
	worker := fishtestWorkerDir(t)

	got := runDriver(t, python, worker, fastchessLink(t, t.TempDir()))
	if !got.Kept {
		t.Errorf("Fishtest's verify_fastchess deleted arbiter: its pinned fastchess commit is not the one arbiter's --version names (local/fastchesscli/compat.go)")
	}
	if got.Stats != fishtestWant {
		t.Errorf("Fishtest's worker posted %+v with arbiter, fastchess 1.8.2's results are %+v", got.Stats, fishtestWant)
	}
	if got.CRC == "" || got.CRC != got.PGNCRC {
		t.Errorf("the worker read CRC32 %q, the PGN file's is %s", got.CRC, got.PGNCRC)
	}
	if len(got.Updates) != fishtestGames/2 {
		t.Errorf("%d updates posted, want one per pair (%d)", len(got.Updates), fishtestGames/2)
	}
	for i, u := range got.Updates {
		pairs := 0
		for _, c := range u.Pentanomial {
			pairs += c
		}
		if 2*pairs != u.Wins+u.Losses+u.Draws || pairs != i+1 {
			t.Errorf("update %d: %+v is not %d complete pairs", i+1, u, i+1)
		}
	}

	// Control: arbiter's former version line, which the issue saw the
	// worker refuse.
	stale := filepath.Join(t.TempDir(), "fastchess")
	if err := os.WriteFile(stale, []byte("#!/bin/sh\necho 'arbiter v0.0.0-20261204000000-0123456789ab (fastchess and cutechess-cli command lines)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := runDriver(t, python, worker, stale)
	if control.Kept || control.Stats == fishtestWant || len(control.Updates) != 0 {
		t.Errorf("control: a binary with arbiter's former version line was kept %v, posted %+v in %d updates", control.Kept, control.Stats, len(control.Updates))
	}

	if bin := os.Getenv("FASTCHESS"); bin != "" {
		real := runDriver(t, python, worker, bin)
		if real.Stats != got.Stats {
			t.Errorf("Fishtest's worker posted %+v with fastchess %s, %+v with arbiter", real.Stats, bin, got.Stats)
		}
		if real.CRC == "" || real.CRC != real.PGNCRC {
			t.Errorf("fastchess: the worker read CRC32 %q, the PGN file's is %s", real.CRC, real.PGNCRC)
		}
		t.Logf("fastchess %s: kept by verify_fastchess: %v (only the commit Fishtest pins is kept)", bin, real.Kept)
	} else {
		t.Log("FASTCHESS unset: arbiter's results compared with fastchess 1.8.2's as measured")
	}
}
