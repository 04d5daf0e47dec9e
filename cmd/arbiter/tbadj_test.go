package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/testing/tbtest"
)

// Tablebase adjudication of `arbiter match`, run as processes: every
// adjudicated game's final position is given to Fathom (an independent
// prober), whose result must be the game's.

// syzygyDir is the shared test tables (every 3-4 piece table, KQRvKR and
// KBBvKN: no five-piece table with pawns).
func syzygyDir(t *testing.T) string { return tbtest.Dir(t) }

// fathomPath is Debian's fathom; CI installs it, so it is only skipped
// outside CI.
func fathomPath(t *testing.T) string {
	t.Helper()
	p := "/usr/games/fathom"
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("fathom is not installed (%s): CI must have it", p)
		}
		t.Skipf("fathom is not installed (%s)", p)
	}
	return p
}

// pgnGame is what the check reads of one game.
type pgnGame struct {
	tags  map[string]string
	moves []string // SAN
	last  string   // the last comment (the game loop's reason)
}

var (
	pgnTag     = regexp.MustCompile(`^\[(\w+) "(.*)"\]$`)
	pgnComment = regexp.MustCompile(`\{[^}]*\}`)
	moveNumber = regexp.MustCompile(`^\d+\.+$|^\d+\.\.\.$`)
)

func parseGames(t *testing.T, text string) []pgnGame {
	t.Helper()
	var games []pgnGame
	for _, block := range strings.Split(text, "\n\n[") {
		g := pgnGame{tags: map[string]string{}}
		var movetext strings.Builder
		for _, line := range strings.Split(strings.TrimPrefix(block, "["), "\n") {
			if m := pgnTag.FindStringSubmatch("[" + strings.TrimPrefix(line, "[")); m != nil && strings.HasSuffix(line, "]") {
				g.tags[m[1]] = m[2]
				continue
			}
			movetext.WriteString(line + " ")
		}
		mt := movetext.String()
		if cs := pgnComment.FindAllString(mt, -1); len(cs) > 0 {
			g.last = strings.Trim(cs[len(cs)-1], "{}")
		}
		for _, tok := range strings.Fields(pgnComment.ReplaceAllString(mt, " ")) {
			if moveNumber.MatchString(tok) || tok == "1-0" || tok == "0-1" || tok == "1/2-1/2" || tok == "*" {
				continue
			}
			if i := strings.LastIndex(tok, "."); i >= 0 {
				tok = tok[i+1:]
			}
			g.moves = append(g.moves, tok)
		}
		if len(g.tags) > 0 {
			games = append(games, g)
		}
	}
	return games
}

// finalPosition replays g from its FEN tag.
func finalPosition(g pgnGame) (engine.Position, error) {
	pos, err := engine.ParseFEN(g.tags["FEN"])
	if err != nil {
		return pos, err
	}
	for i, san := range g.moves {
		m, err := pos.ParseSAN(san)
		if err != nil {
			return pos, fmt.Errorf("ply %d %q: %v", i+1, san, err)
		}
		pos.MakeMove(m)
	}
	return pos, nil
}

// checkTBAdjudications asks Fathom about the final position of every game
// the tables adjudicated and returns how many it checked.
func checkTBAdjudications(t *testing.T, fathom, tables string, games []pgnGame) (int, error) {
	t.Helper()
	n := 0
	for k, g := range games {
		if !strings.HasSuffix(g.last, "by adjudication: SyzygyTB") {
			continue
		}
		if g.tags["Termination"] != "adjudication" {
			return n, fmt.Errorf("game %d: a SyzygyTB reason with Termination %q", k, g.tags["Termination"])
		}
		pos, err := finalPosition(g)
		if err != nil {
			return n, fmt.Errorf("game %d: %v", k, err)
		}
		if pos.HalfmoveClock() != 0 {
			return n, fmt.Errorf("game %d: adjudicated with the 50-move counter at %d", k, pos.HalfmoveClock())
		}
		out, err := exec.Command(fathom, "--path="+tables, "--test", pos.FEN()).CombinedOutput()
		if err != nil {
			return n, fmt.Errorf("game %d: fathom %s: %v: %s", k, pos.FEN(), err, out)
		}
		if got := strings.TrimSpace(string(out)); got != g.tags["Result"] {
			return n, fmt.Errorf("game %d: adjudicated %s (%s) in %s; fathom says %s", k, g.tags["Result"], g.last, pos.FEN(), got)
		}
		n++
	}
	return n, nil
}

// TestMatchTBAdjudicationAgreesWithFathom plays a small match from 5- and
// 6-piece endings in both command-line forms (Arbiter's and fastchess's)
// with the tables up to 4 pieces (the embedded engine in Arbiter's form,
// Stockfish in fastchess's), and checks every adjudication with
// Fathom. Controls: the same match without tables has no tablebase
// adjudication, and the check refuses a game whose result was changed.
func TestMatchTBAdjudicationAgreesWithFathom(t *testing.T) {
	tables, fathom := syzygyDir(t), fathomPath(t)
	if _, err := os.Stat(matchSF); err != nil {
		t.Skipf("no Stockfish for the fastchess-form run: %v", err)
	}
	book := filepath.Join(repoRoot, "cmd", "arbiter", "testdata", "tb-endgames.epd")
	dir := t.TempDir()
	runs := map[string][]string{
		"arbiter": {"match", "--engine", "builtin", "--engine", "builtin,name=B", "--each", "nodes=3000",
			"--openings", "file=" + book + ",order=sequential", "--games", "12", "--concurrency", "2",
			"--tb", tables, "--tb-pieces", "4", "--quiet", "--pgnout", filepath.Join(dir, "arbiter.pgn")},
		"fastchess": {"match", "--fastchess", "-engine", "cmd=" + matchSF, "name=A", "-engine", "cmd=" + matchSF, "name=B", "-each", "nodes=3000",
			"-openings", "file=" + book, "format=epd", "order=sequential", "-rounds", "6", "-games", "2", "-concurrency", "2",
			"-tb", tables, "-tbpieces", "4", "-tbadjudicate", "BOTH", "-autosaveinterval", "0", "-pgnout", "file=" + filepath.Join(dir, "fastchess.pgn")},
		"control": {"match", "--engine", "builtin", "--engine", "builtin,name=B", "--each", "nodes=3000",
			"--openings", "file=" + book + ",order=sequential", "--games", "12", "--concurrency", "2",
			"--quiet", "--pgnout", filepath.Join(dir, "control.pgn")},
	}
	for name, args := range runs {
		_, stderr, code := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, name+".pgn"))
		if err != nil {
			t.Fatal(err)
		}
		games := parseGames(t, string(data))
		if len(games) != 12 {
			t.Fatalf("%s: %d games in the PGN, want 12", name, len(games))
		}
		n, err := checkTBAdjudications(t, fathom, tables, games)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d of %d games adjudicated by the tables, each as Fathom says", name, n, len(games))
		switch {
		case name == "control" && n != 0:
			t.Errorf("control: %d tablebase adjudications without --tb", n)
		case name != "control" && n == 0:
			t.Errorf("%s: no game was adjudicated by the tables", name)
		}
		if name != "arbiter" {
			continue
		}
		// The check is not blind: a flipped result is caught.
		flipped := false
		for k := range games {
			if strings.HasSuffix(games[k].last, "SyzygyTB") && games[k].tags["Result"] != "1/2-1/2" {
				games[k].tags["Result"] = map[string]string{"1-0": "0-1", "0-1": "1-0"}[games[k].tags["Result"]]
				if _, err := checkTBAdjudications(t, fathom, tables, games[k:k+1]); err == nil {
					t.Errorf("the check accepted game %d with its result flipped", k)
				}
				flipped = true
				break
			}
		}
		if !flipped {
			t.Errorf("arbiter: no decisive tablebase adjudication to flip; the control did not run")
		}
	}
}

// TestMatchTBAbsentTableWarnsOnce: with --tb-pieces 5 and no KRPvKR table,
// KRPvKR positions are not adjudicated and the log says so once, however
// many of them the games reach at counter 0. Control: the same games
// reach several such positions (counted by replaying the PGN).
func TestMatchTBAbsentTableWarnsOnce(t *testing.T) {
	tables := syzygyDir(t)
	book := filepath.Join(repoRoot, "cmd", "arbiter", "testdata", "tb-krpvkr.epd")
	pgn := filepath.Join(t.TempDir(), "g.pgn")
	_, stderr, code := runMain(t, "match", "--engine", "builtin", "--engine", "builtin,name=B", "--each", "nodes=2000",
		"--openings", "file="+book+",order=sequential", "--games", "4", "--concurrency", "2", "--maxmoves", "40",
		"--tb", tables, "--tb-pieces", "5", "--quiet", "--pgnout", pgn)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Count(stderr, "table KRPvKR is absent"); got != 1 {
		t.Errorf("the log names the absent KRPvKR table %d times, want once:\n%s", got, stderr)
	}
	data, err := os.ReadFile(pgn)
	if err != nil {
		t.Fatal(err)
	}
	reached := 0
	for _, g := range parseGames(t, string(data)) {
		pos, err := engine.ParseFEN(g.tags["FEN"])
		if err != nil {
			t.Fatal(err)
		}
		for _, san := range g.moves {
			m, err := pos.ParseSAN(san)
			if err != nil {
				t.Fatal(err)
			}
			pos.MakeMove(m)
			if pos.HalfmoveClock() == 0 && pos.Occupied().Count() == 5 && pos.Pieces(engine.White, engine.Pawn) != 0 && pos.Pieces(engine.White, engine.Rook) != 0 && pos.Pieces(engine.Black, engine.Rook) != 0 {
				reached++
			}
		}
		if g.tags["Termination"] == "adjudication" && strings.Contains(g.last, "SyzygyTB") {
			if fp, _ := finalPosition(g); fp.Occupied().Count() == 5 && fp.Pieces(engine.White, engine.Pawn) != 0 {
				t.Errorf("a KRPvKR position was adjudicated without its table: %s", fp.FEN())
			}
		}
	}
	t.Logf("the games reached %d KRPvKR positions at counter 0", reached)
	if reached < 2 {
		t.Errorf("the games reached %d KRPvKR positions at counter 0; the test needs at least 2 to show the warning is not per position", reached)
	}
}

// TestTBAdjudicationsInPGNFile checks every tablebase adjudication of the
// PGN file named by ARBITER_TB_CHECK_PGN against Fathom with the tables
// in ARBITER_TB_CHECK_TABLES (default: the shared test tables): the check
// of a long match run by hand (docs/tablebases.md, "Adjudication").
// Skipped without ARBITER_TB_CHECK_PGN.
func TestTBAdjudicationsInPGNFile(t *testing.T) {
	file := os.Getenv("ARBITER_TB_CHECK_PGN")
	if file == "" {
		t.Skip("ARBITER_TB_CHECK_PGN names no PGN file")
	}
	tables := os.Getenv("ARBITER_TB_CHECK_TABLES")
	if tables == "" {
		tables = syzygyDir(t)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	games := parseGames(t, string(data))
	n, err := checkTBAdjudications(t, fathomPath(t), tables, games)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s: no tablebase adjudication among %d games", file, len(games))
	}
	t.Logf("%s: %d games, %d tablebase adjudications, each as Fathom says", file, len(games), n)
}

// TestDatagenTablebase runs `arbiter datagen` as a process from 5- and
// 6-piece endings: with --tb (4 pieces) games end by the tables and the
// summary counts them; --tb-rescore rescoring is counted too; the control
// without --tb has no tablebase end. The format's own results are the
// datagen package's (TestRescoreRecords checks which records change).
func TestDatagenTablebase(t *testing.T) {
	tables := syzygyDir(t)
	book := filepath.Join(repoRoot, "cmd", "arbiter", "testdata", "tb-endgames.epd")
	dir := t.TempDir()
	run := func(name string, extra ...string) string {
		args := append([]string{"datagen", "--engine", "name=dev,builtin", "--each", "nodes=500,option.Hash=4",
			"--openings", "file=" + book, "--random-plies", "0-1", "--filters", "none", "--positions", "60", "--random-seed", "3",
			"--batch-games", "4", "--concurrency", "2", "--out", filepath.Join(dir, name+".txt")}, extra...)
		stdout, stderr, code := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", name, code, stdout, stderr)
		}
		return stdout + stderr
	}
	tb := regexp.MustCompile(`tablebase\s+(\d+) games adjudicated by the tables, (\d+) records rescored`)
	with := run("tb", "--tb", tables, "--tb-pieces", "4", "--tb-rescore")
	m := tb.FindStringSubmatch(with)
	if m == nil {
		t.Fatalf("no tablebase line in the summary:\n%s", with)
	}
	t.Logf("with --tb: %s", m[0])
	if m[1] == "0" {
		t.Errorf("no game was adjudicated by the tables:\n%s", with)
	}
	without := run("control")
	if tb.MatchString(without) {
		t.Errorf("the control without --tb reports tablebase adjudications:\n%s", without)
	}
	_, stderr, code := runMain(t, "datagen", "--engine", "name=dev,builtin", "--each", "nodes=500", "--positions", "10",
		"--tb-rescore", "--out", filepath.Join(dir, "x.txt"))
	if code == 0 || !strings.Contains(stderr, "need --tb DIR") {
		t.Errorf("--tb-rescore without --tb: exit %d: %s", code, stderr)
	}
}
