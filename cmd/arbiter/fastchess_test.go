package main

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/local/fastchesscli"
)

// Output parsers of the two testing farms that drive fastchess, kept as
// data: the regexes and substrings are copied verbatim from their
// sources, so that these tests read our output as the farms would.
//
// Fishtest: worker/games.py, parse_fastchess_output (official-stockfish/
// fishtest, master as of 2026-12).
var (
	fishtestWLD   = regexp.MustCompile(`Games: ([0-9]+), Wins: ([0-9]+), Losses: ([0-9]+), Draws: ([0-9]+), Points: ([0-9.]+) \(`)
	fishtestPtnml = regexp.MustCompile(`Ptnml\(0-2\): \[([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+)\]`)
	// fishtestErrors: a line matching any of these stops the run.
	fishtestErrors = []*regexp.Regexp{
		regexp.MustCompile(`Warning;.*doesn't have option`),
		regexp.MustCompile(`Warning; Invalid value for option`),
		regexp.MustCompile(`Warning; Failed to set.*option`),
		regexp.MustCompile(`Warning; No info line available to extract score from engine`),
		regexp.MustCompile(`Warning; Illegal move`),
		regexp.MustCompile(`Warning; Could not extract score from engine`),
		regexp.MustCompile(`Warning; Move does not match uci move format`),
		regexp.MustCompile(`Warning; Sign mismatch in mate scores`),
	}
	// fishtestPVErrors also stop the run, but they judge the engine's
	// PVs: Stockfish 15.1 under a clock sometimes gives a mate score with
	// a PV short of the mate, and fastchess, like arbiter, then prints
	// "Warning; Incomplete mating PV" (docs/match.md, "PV checks"). The
	// test accepts them in fastchess's -testEnv form, naming an engine and
	// carrying the engine's own info line.
	fishtestPVErrors = []*regexp.Regexp{
		regexp.MustCompile(`Warning; Illegal PV move`),
		regexp.MustCompile(`Warning; PV continues after checkmate`),
		regexp.MustCompile(`Warning; PV continues after stalemate`),
		regexp.MustCompile(`Warning; PV continues after threefold`),
		regexp.MustCompile(`Warning; PV continues after fifty-move rule`),
		regexp.MustCompile(`Warning; Incomplete mating PV`),
		regexp.MustCompile(`Warning; Too long mating PV`),
		regexp.MustCompile(`Warning; Mating PV does not end with checkmate`),
		regexp.MustCompile(`Warning; Bestmove does not match beginning of last PV`),
	}
	pvWarningForm = regexp.MustCompile(`^Warning; [^:]* from (New|Base)-e443b2459e :: Info; info .* pv .* :: Position; (startpos|fen .*) :: Moves; `)
)

// fishtestCommand is Fishtest's fastchess command line (worker/games.py,
// run_games: the list handed to launch_fastchess), with our engines, book
// and a short time control substituted and no SPSA parameters.
func fishtestCommand(engine, book, pgn string, rounds, concurrency int) []string {
	newName, baseName := "New-e443b2459e", "Base-e443b2459e"
	cmd := []string{
		"-testEnv",
		"-recover",
		"-repeat",
		"-games", "2",
		"-rounds", strconv.Itoa(rounds),
		"-ratinginterval", "1",
		"-scoreinterval", "1",
		"-autosaveinterval", "0",
		"-report", "penta=true",
		"-pgnout", "file=" + pgn, "append=false",
		"-crc32", "pgn=true",
		"-site", "tests.stockfishchess.org/tests/view/6650a1b2c3d4e5f6a7b8c9d0",
		"-event", "Batch 7: e443b245 vs e443b245",
		"-srand", "3141592653",
		"-resign", "movecount=3", "score=600",
		"-draw", "movenumber=34", "movecount=8", "score=20",
		"-variant", "standard",
		"-concurrency", strconv.Itoa(concurrency),
		"-openings", "file=" + book, "format=epd", "order=random", "plies=16", "start=1",
		"-check-mate-pvs",
		"-engine", "name=" + newName, "tc=1+0.01", "cmd=" + engine, "dir=.", "option.Hash=16",
		"-engine", "name=" + baseName, "tc=1+0.01", "cmd=" + engine, "dir=.", "option.Hash=16",
		"-each", "proto=uci",
		"option.Threads=1",
	}
	return cmd
}

// OpenBench: Client/worker.py, MatchRunner.update_results and
// run_and_parse_runner (AndyGrant/OpenBench, master as of 2026-12): a
// "Finished game" line is split at blanks, token 2 the game number and
// token 6 the result; games 2k-1 and 2k are a pair; the part after the
// first ':' is searched for the reasons below.
var openbenchResults = map[string]int{"0-1": 0, "1/2-1/2": 1, "1-0": 2}

// openbenchCommand is OpenBench's match runner command line, as
// build_runner_command joins it (basic, concurrency, adjudication, the two
// engines, book, pgnout settings), with our engines and book.
func openbenchCommand(rounds int) string {
	flags := " " + "-recover -variant standard -testEnv"
	flags += " " + fmt.Sprintf("-concurrency %d -rounds %d -games %d", 2, rounds, 2)
	flags += " " + fmt.Sprintf("%s %s %s", "-resign movecount=3 score=400", "-draw movenumber=40 movecount=8 score=10", "")
	flags += " " + fmt.Sprintf("-engine dir=Engines/ cmd=./%s proto=uci %s%s name=%s-%s", "dev", "tc=inf nodes=2000", " option.Threads=1 option.Hash=16", "Ethereal", "dev")
	flags += " " + fmt.Sprintf("-engine dir=Engines/ cmd=./%s proto=uci %s%s name=%s-%s", "base", "tc=inf nodes=2000", " option.Threads=1 option.Hash=16", "Arbiter", "base")
	flags += " " + fmt.Sprintf("-openings file=Books/%s format=%s order=random start=%d -srand %d", "uho-200.epd", "epd", 1, 1177)
	flags += " " + fmt.Sprintf("-pgnout file=%s seldepth=true nodes=true match_line=%s", "PGNs/12.34.1700000000.0.pgn", "'^info string pgncomment .*'")
	return "./fastchess-ob" + flags
}

// shlexSplit splits a command line as Python's shlex.split does for the
// quoting OpenBench uses (single quotes).
func shlexSplit(s string) []string {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// runCompat runs `arbiter match ARGS` as a separate process in dir (the
// test binary as main), returning its standard output and error merged
// as the farms read them, line by line.
func runCompat(t *testing.T, dir string, args ...string) ([]string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--", "match"}, args...)...)
	cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	return lines, err
}

// uciScript writes a program that is the embedded engine: this test
// binary as `arbiter uci`.
func uciScript(t *testing.T, path string) {
	t.Helper()
	script := fmt.Sprintf("#!/bin/sh\nARBITER_TEST_MAIN=1 exec %q -test.run='^TestHelperArbiterMain$' -- uci\n", os.Args[0])
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func copyBook(t *testing.T, dst string) {
	t.Helper()
	b, err := os.ReadFile("../../books/uho-200.epd")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFastchessFishtestCommandLine runs Fishtest's command line and reads
// the output as Fishtest's worker does: every report block gives W/L/D and
// the pentanomial (games = 2 × pairs), the last one the whole batch, then
// "Finished match", the PGN's CRC32, and no line Fishtest takes for an
// error.
func TestFastchessFishtestCommandLine(t *testing.T) {
	needSF(t)
	dir := t.TempDir()
	copyBook(t, filepath.Join(dir, "book.epd"))
	const rounds = 3
	lines, err := runCompat(t, dir, fishtestCommand(matchSF, "book.epd", "batch.pgn", rounds, 2)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	gamesToPlay := 2 * rounds
	var wld []int
	var ptnml []int
	updated, blocks, crc, finished := 0, 0, "", false
	for _, line := range lines {
		if strings.Contains(line, "has CRC32:") {
			f := strings.Fields(line)
			crc = f[len(f)-1]
		}
		if strings.Contains(line, "Finished match") {
			finished = true
			if updated != gamesToPlay {
				t.Errorf("Finished match uncleanly %d vs. required %d", updated, gamesToPlay)
			}
		}
		for _, re := range fishtestErrors {
			if re.MatchString(line) {
				t.Errorf("Fishtest would stop the run on: %s", line)
			}
		}
		for _, re := range fishtestPVErrors {
			if re.MatchString(line) && !pvWarningForm.MatchString(line) {
				t.Errorf("a PV warning not in fastchess's -testEnv form: %s", line)
			}
		}
		if m := fishtestWLD.FindStringSubmatch(line); m != nil {
			wld = nil
			for _, s := range m[1:5] {
				n, _ := strconv.Atoi(s)
				wld = append(wld, n)
			}
			if _, err := strconv.ParseFloat(m[5], 64); err != nil {
				t.Errorf("points %q: %v", m[5], err)
			}
		}
		if m := fishtestPtnml.FindStringSubmatch(line); m != nil {
			ptnml = nil
			for _, s := range m[1:] {
				n, _ := strconv.Atoi(s)
				ptnml = append(ptnml, n)
			}
		}
		if wld != nil && ptnml != nil {
			pairs := 0
			for _, c := range ptnml {
				pairs += c
			}
			games := wld[0]
			if games != 2*pairs || wld[1]+wld[2]+wld[3] != games {
				t.Errorf("block games %d, W/L/D %v, pentanomial %v: Fishtest's assertions fail", games, wld, ptnml)
			}
			if games > updated+2 || games > gamesToPlay {
				t.Errorf("block of %d games after %d: more than a batch", games, updated)
			}
			updated = games
			blocks++
			wld, ptnml = nil, nil
		}
	}
	if !finished || blocks != rounds || crc == "" {
		t.Fatalf("finished %v, %d report blocks (want %d), CRC32 %q:\n%s", finished, blocks, rounds, crc, strings.Join(lines, "\n"))
	}
	sum, err := strconv.ParseUint(strings.TrimPrefix(crc, "0x"), 16, 32)
	if err != nil {
		t.Fatalf("CRC32 %q: %v", crc, err)
	}
	pgn, err := os.ReadFile(filepath.Join(dir, "batch.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(pgn), "[Event \"Batch 7: e443b245 vs e443b245\"]"); n != gamesToPlay {
		t.Errorf("PGN has %d games of the batch, want %d", n, gamesToPlay)
	}
	if got := crc32.ChecksumIEEE(pgn); uint64(got) != sum {
		t.Errorf("CRC32 printed %s, the file's is %#x", crc, got)
	}
}

// TestFastchessOpenBenchCommandLine runs OpenBench's command line (one
// engine Stockfish, the other the embedded engine through `arbiter uci`)
// and counts the games as OpenBench's worker does, from the "Finished
// game" lines alone.
func TestFastchessOpenBenchCommandLine(t *testing.T) {
	needSF(t)
	dir := t.TempDir()
	for _, d := range []string{"Engines", "Books", "PGNs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(matchSF, filepath.Join(dir, "Engines", "dev")); err != nil {
		t.Fatal(err)
	}
	uciScript(t, filepath.Join(dir, "Engines", "base"))
	copyBook(t, filepath.Join(dir, "Books", "uho-200.epd"))
	const rounds = 2
	argv := shlexSplit(openbenchCommand(rounds))
	if argv[0] != "./fastchess-ob" {
		t.Fatalf("command %q", argv)
	}
	lines, err := runCompat(t, dir, argv[1:]...)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	games := map[int]string{}
	var penta [5]int
	var trinomial [3]int
	finishedLines := 0
	for _, line := range lines {
		if !strings.Contains(line, "Finished game") {
			continue
		}
		finishedLines++
		parts := strings.SplitN(line, ":", 3)
		if len(parts) < 2 {
			t.Fatalf("no ':' in %q", line)
		}
		reason := parts[1]
		if strings.Contains(reason, "disconnect") || strings.Contains(reason, "stalls") || strings.Contains(reason, "on time") || strings.Contains(reason, "illegal") {
			t.Errorf("an incident in %q", line)
		}
		tokens := strings.Fields(line)
		g, err := strconv.Atoi(tokens[2])
		if err != nil {
			t.Fatalf("game number in %q: %v", line, err)
		}
		res := tokens[6]
		if _, ok := openbenchResults[res]; !ok {
			t.Fatalf("result %q in %q", res, line)
		}
		games[g] = res
		first, second := g-1, g
		if g%2 == 1 {
			first, second = g, g+1
		}
		r1, ok1 := games[first]
		r2, ok2 := games[second]
		if !ok1 || !ok2 {
			continue
		}
		penta[openbenchResults[r1]+2-openbenchResults[r2]]++
		trinomial[openbenchResults[r1]]++
		trinomial[2-openbenchResults[r2]]++
		delete(games, first)
		delete(games, second)
	}
	pairs := 0
	for _, c := range penta {
		pairs += c
	}
	if finishedLines != 2*rounds || pairs != rounds || len(games) != 0 {
		t.Fatalf("%d Finished game lines, %d pairs %v (want %d), unpaired %v:\n%s", finishedLines, pairs, penta, rounds, games, strings.Join(lines, "\n"))
	}
	// OpenBench reads each game's Termination from the PGN it named.
	pgn, err := os.ReadFile(filepath.Join(dir, "PGNs", "12.34.1700000000.0.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(pgn), "[Termination "); n != 2*rounds {
		t.Errorf("PGN has %d Termination tags, want %d", n, 2*rounds)
	}
	if !regexp.MustCompile(`\{[+-]?[0-9.M]+/\d+ \d+\.\d+s, n=\d+, sd=\d+\}`).Match(pgn) {
		t.Errorf("no move comment with n= and sd= (nodes=true seldepth=true) in:\n%.600s", pgn)
	}
}

// TestFastchessArgsDetection: how `arbiter` decides a command line is
// fastchess's or cutechess-cli's.
func TestFastchessArgsDetection(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		ok      bool
		dialect fastchesscli.Dialect
	}{
		{[]string{"/usr/local/bin/fastchess", "-engine", "cmd=sf"}, true, fastchesscli.Fastchess},
		{[]string{"cutechess-cli", "-engine", "cmd=sf"}, true, fastchesscli.Cutechess},
		{[]string{"arbiter", "match", "-engine", "cmd=sf", "name=sf"}, true, fastchesscli.Fastchess},
		{[]string{"arbiter", "match", "--cutechess-cli", "-engine", "cmd=sf"}, true, fastchesscli.Cutechess},
		{[]string{"arbiter", "match", "--fastchess", "-engine", "cmd=sf"}, true, fastchesscli.Fastchess},
		{[]string{"arbiter", "fastchess", "-engine", "cmd=sf"}, true, fastchesscli.Fastchess},
		{[]string{"arbiter", "fastchess", "--version"}, true, fastchesscli.Fastchess},
		{[]string{"arbiter", "match", "--engine", "cmd=sf", "--games", "2"}, false, 0},
		{[]string{"arbiter", "perft", "-engine"}, false, 0},
		{[]string{"arbiter"}, false, 0},
	} {
		_, d, ok := fastchessArgs(c.argv)
		if ok != c.ok || (ok && d != c.dialect) {
			t.Errorf("%q: got %v %v, want %v %v", c.argv, ok, d, c.ok, c.dialect)
		}
	}
}

// TestFastchessSymlink: the binary called as fastchess or cutechess-cli
// (a symlink) takes that runner's command line and prints its lines.
func TestFastchessSymlink(t *testing.T) {
	needSF(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, want string }{
		{"fastchess", "Ptnml(0-2): [0, 0, 1, 0, 0]"},
		{"cutechess-cli", "Score of A vs B: "},
	} {
		link := filepath.Join(dir, c.name)
		if err := os.Symlink(os.Args[0], link); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(link, "-engine", "cmd="+matchSF, "name=A", "-engine", "cmd="+matchSF, "name=B",
			"-each", "nodes=200", "-games", "2", "-repeat", "-rounds", "1", "-ratinginterval", "1")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "Finished match") {
			t.Errorf("%s: %v, want %q in:\n%s", c.name, err, c.want, out)
		}
	}
}

// TestFastchessFlagNotFirst: --fastchess among arbiter's own flags is not
// silently dropped.
func TestFastchessFlagNotFirst(t *testing.T) {
	_, err := runMatchCmd(t, "--games", "2", "--fastchess")
	if err == nil || !strings.Contains(err.Error(), "--fastchess: give it first") {
		t.Fatalf("got %v", err)
	}
}
