package fastchesscli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	stockfish = "/usr/games/stockfish"
	fairymax  = "/usr/games/fairymax"
)

// invocation is one command line from fastchess's or cutechess-cli's
// documentation. Engines, books and files are substituted ({SF} Stockfish,
// {FM} Fair-Max, {EPD} and {PGN} books, {FRC} a Chess960 book); time
// controls keep their form but get nodes= beside them, and -rounds is cut,
// so that the table runs in a minute. refused names the option or key
// that is refused ("" when the line runs).
type invocation struct {
	source  string
	dialect Dialect
	args    string
	refused string
}

var invocations = []invocation{
	// fastchess man.md, EXAMPLES.
	{"man.md example 1", Fastchess, "-engine cmd={SF} name=Engine1 -engine cmd={SF} name=Engine2 -openings file={EPD} format=epd order=random -each tc=60+0.6 nodes=300 option.Hash=64 -rounds 1 -repeat -concurrency 2", ""},
	{"man.md example 2 (SPRT)", Fastchess, "-engine cmd={SF} name=Engine1 option.Threads=1 nodes=400 -engine cmd={SF} name=Engine2 option.Threads=1 nodes=300 -openings file={EPD} format=epd order=random -each tc=300+5 -resign movecount=3 score=600 -draw movenumber=34 movecount=8 score=20 -sprt elo0=0 elo1=2 alpha=0.05 beta=0.05 -rounds 1 -concurrency 2 -pgnout notation=san nodes=true file=./games/sprt.pgn", ""},
	// fastchess README.md.
	{"README.md example", Fastchess, "-engine cmd={SF} name=Engine1 -engine cmd={SF} name=Engine2 -each tc=10+0.1 nodes=300 -rounds 1 -repeat -concurrency 2", ""},
	// fastchess man.md, OPTIONS, one line per option as documented.
	{"man.md -quick", Fastchess, "-quick cmd={SF} cmd={SF} book={EPD} -rounds 1 -each nodes=300", ""},
	{"man.md -tournament gauntlet -seeds", Fastchess, "-engine cmd={SF} name=A nodes=300 -engine cmd={SF} name=B nodes=200 -engine cmd={SF} name=C nodes=100 -tournament gauntlet -seeds 1 -rounds 1 -games 2 -openings file={EPD} format=epd", ""},
	{"man.md -tournament roundrobin", Fastchess, "-engine cmd={SF} name=A nodes=300 -engine cmd={SF} name=B nodes=200 -engine cmd={SF} name=C nodes=100 -tournament roundrobin -rounds 1 -openings file={EPD} format=epd -ratinginterval 1", ""},
	{"man.md -variant fischerandom", Fastchess, "-variant fischerandom -engine cmd={SF} nodes=300 -engine cmd={SF} nodes=200 -openings file={FRC} format=epd -rounds 1", ""},
	{"man.md -noswap", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -noswap -rounds 1", ""},
	{"man.md -reverse", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -reverse -rounds 1", ""},
	{"man.md -wait", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -wait 100 -rounds 1", ""},
	{"man.md -tb -tbpieces", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -tb /syzygy -tbpieces 5 -rounds 1", "-tb"},
	{"man.md -tbignore50", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -tbignore50 -rounds 1", "needs --tb"},
	{"man.md -tbadjudicate", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -tbadjudicate WIN_LOSS -rounds 1", "needs --tb"},
	{"man.md -use-affinity", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -use-affinity 0-3 -rounds 1", "-use-affinity"},
	{"man.md -show-latency", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -show-latency -rounds 1", "-show-latency"},
	{"man.md -strict", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -strict -rounds 1", ""},
	{"man.md -pgnout notation=lan", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -pgnout file=lan.pgn notation=lan -rounds 1", "notation=lan"},
	{"man.md -pgnout nps=true", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -pgnout file=x.pgn nps=true -rounds 1", "nps=true"},
	{"man.md -pgnout nodes seldepth append", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -pgnout file=x.pgn nodes=true seldepth=true append=false -rounds 1", ""},
	{"man.md -epdout", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -epdout file=x.epd append=false -openings file={EPD} format=epd -rounds 1", ""},
	{"man.md -output format=cutechess", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -output format=cutechess -scoreinterval 1 -ratinginterval 1 -rounds 1", ""},
	{"man.md -report penta=false", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -report penta=false -ratinginterval 1 -rounds 1", ""},
	{"man.md -sprt model=logistic", Fastchess, "-engine cmd={SF} nodes=300 -engine cmd={SF} nodes=200 -sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 model=logistic -rounds 2 -openings file={EPD} format=epd", ""},
	{"man.md -sprt model=bayesian", Fastchess, "-engine cmd={SF} nodes=300 -engine cmd={SF} nodes=200 -sprt elo0=0 elo1=5 model=bayesian -rounds 1", ""},
	{"man.md -resign twosided=true", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -resign movecount=3 score=400 twosided=true -rounds 1", "twosided=true"},
	{"man.md -maxmoves", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -maxmoves 30 -rounds 1", ""},
	{"man.md -log engine=true", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -log file=log.txt level=info engine=true -rounds 1", "engine=true"},
	{"man.md -log", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -log file=log.txt level=warn append=false -rounds 1", ""},
	{"man.md -config outname= -autosaveinterval", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -config outname=saved.json -autosaveinterval 1 -rounds 1", ""},
	{"man.md engine st= timemargin=", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each st=0.01 timemargin=100 -rounds 1 -maxmoves 20", ""},
	{"man.md engine restart=on", Fastchess, "-engine cmd={SF} restart=on -engine cmd={SF} -each nodes=300 -rounds 1", "restart=on"},
	{"man.md engine plies= and depth=", Fastchess, "-engine cmd={SF} plies=4 -engine cmd={SF} depth=3 -rounds 1", ""},
	{"man.md -force-concurrency -startup-ms -ping-ms", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -force-concurrency -concurrency 2 -startup-ms 5000 -ping-ms 5000 -rounds 1", ""},
	{"man.md -ucinewgame-ms", Fastchess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -ucinewgame-ms 1000 -rounds 1", "-ucinewgame-ms"},
	{"man.md -version", Fastchess, "-version", ""},
	// cutechess-cli(6), EXAMPLES and options.
	{"cutechess-cli(6) example 1", Cutechess, "-engine cmd={FM} -engine cmd={FM} -each proto=xboard tc=40/1 -rounds 2", ""},
	{"cutechess-cli(6) example 2", Cutechess, "-engine name=Atak cmd={FM} dir={DIR} proto=xboard -engine cmd={SF} proto=uci option.Threads=1 -each tc=40/0:02+0.01", ""},
	{"cutechess-cli(6) example 3", Cutechess, "-engine conf=Fruit -engine conf=Crafty -each tc=4 book=book.bin -games 2 -rounds 10 -repeat", "book=book.bin"},
	{"cutechess-cli(6) -pgnout min", Cutechess, "-engine cmd={SF} -engine cmd={SF} -each nodes=300 -pgnout games.pgn min", "min"},
	{"cutechess-cli(6) -openings -repeat -srand -epdout", Cutechess, "-engine cmd={SF} -engine cmd={SF} -each tc=inf nodes=300 -openings file={PGN} order=random plies=8 -repeat -games 2 -srand 5 -epdout out.epd -pgnout games.pgn", ""},
}

func TestFastchessInvocationsTableSize(t *testing.T) {
	if len(invocations) != 40 {
		t.Fatalf("%d invocations, want the fixed list of 40", len(invocations))
	}
}

func substitute(t *testing.T, s, dir string) []string {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	r := strings.NewReplacer("{SF}", stockfish, "{FM}", fairymax, "{EPD}", abs("../../books/uho-200.epd"),
		"{PGN}", abs("../../books/8moves-200.pgn"), "{FRC}", abs("../../match/testdata/frc4.epd"), "{DIR}", dir)
	return strings.Fields(r.Replace(s))
}

// fastchessBinary is the real fastchess 1.8.2 built from its sources
// ($FASTCHESS); the comparison tests are skipped without it.
func fastchessBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("FASTCHESS")
	if bin == "" {
		t.Skip("FASTCHESS unset: set it to a fastchess 1.8.2 built from its sources to compare with it")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("fastchess not found at %s (set FASTCHESS)", bin)
	}
	return bin
}

func needEngines(t *testing.T) {
	for _, p := range []string{stockfish, fairymax} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not installed", p)
		}
	}
}

// TestFastchessDocumentedInvocations plays every line of the table that runs, and
// checks that every other is refused with an error naming its option.
func TestFastchessDocumentedInvocations(t *testing.T) {
	needEngines(t)
	for _, c := range invocations {
		t.Run(c.source, func(t *testing.T) {
			dir := t.TempDir()
			args := substitute(t, c.args, dir)
			t.Chdir(dir)
			os.Mkdir("games", 0o755)
			inv, err := Parse(args, c.dialect)
			if err == nil {
				var out, errOut bytes.Buffer
				err = Run(context.Background(), inv, RunOptions{Stdout: &out, Stderr: &errOut, Version: "test"})
				if err == nil && c.refused == "" {
					checkRan(t, inv, out.String())
					return
				}
				if err != nil && c.refused == "" {
					t.Fatalf("%s: %v\n%s%s", c.args, err, out.String(), errOut.String())
				}
			}
			if c.refused == "" {
				t.Fatalf("%s: %v", c.args, err)
			}
			if err == nil {
				t.Fatalf("%s: ran, want %s refused", c.args, c.refused)
			}
			if !strings.Contains(err.Error(), c.refused) {
				t.Fatalf("%s: error %q does not name %s", c.args, err, c.refused)
			}
		})
	}
}

var finishedLine = regexp.MustCompile(`^Finished game (\d+) \((\S+) vs (\S+)\): (1-0|0-1|1/2-1/2) \{[^}]+\}$`)

// checkRan checks a run's output: as many Finished game lines as games
// scheduled (fewer after an SPRT decision), then Finished match; and the
// files it was asked for.
func checkRan(t *testing.T, inv *Invocation, out string) {
	t.Helper()
	if inv.Version {
		if first, second, _ := strings.Cut(out, "\n"); !fishtestVersion.MatchString(first) || !strings.HasPrefix(second, "arbiter test: ") {
			t.Fatalf("-version printed %q", out)
		}
		return
	}
	finished := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Finished game") {
			if !finishedLine.MatchString(l) {
				t.Errorf("line %q is not fastchess's", l)
			}
			finished++
		}
	}
	if finished == 0 || !strings.Contains(out, "\nFinished match\n") {
		t.Fatalf("%d games, no Finished match:\n%s", finished, out)
	}
	if inv.Flags.SPRT == "" {
		f := inv.Flags
		engines := len(f.Engines)
		pairings := engines * (engines - 1) / 2
		if f.Tournament == "gauntlet" {
			pairings = engines - 1
		}
		if want := f.Rounds * f.Games * pairings; finished != want {
			t.Errorf("%d games finished, want %d:\n%s", finished, want, out)
		}
	}
	if inv.Output == "cutechess" && len(inv.Flags.Engines) == 2 && !strings.Contains(out, "Score of ") {
		t.Errorf("no Score of line in the cutechess format:\n%s", out)
	}
	if p := inv.Flags.PGNOut; p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "[Result "); n != finished {
			t.Errorf("%s: %d games, want %d", p, n, finished)
		}
		if inv.PGNNodes && !strings.Contains(string(b), ", n=") {
			t.Errorf("%s: no n= in the move comments", p)
		}
	}
	if p := inv.EPDOut; p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != finished || !strings.Contains(string(b), " hmvc ") {
			t.Errorf("%s: %d lines, want %d:\n%s", p, n, finished, b)
		}
	}
	if inv.LogFile != "" {
		b, err := os.ReadFile(inv.LogFile)
		if err != nil || !strings.Contains(string(b), "Finished match") {
			t.Errorf("log %s: %v %q", inv.LogFile, err, b)
		}
	}
	if inv.AutosaveInterval > 0 && inv.StateFile != "" {
		if _, err := os.Stat(inv.StateFile); err != nil {
			t.Errorf("state file: %v", err)
		}
	}
}

// TestSameGamesAsFastchess plays deterministic lines of the table (engines
// at fixed nodes, one thread; openings in file order or shuffled by
// -srand) with the real fastchess and with arbiter, and compares the
// openings round by round, the games move by move and the -epdout files
// line by line.
func TestSameGamesAsFastchess(t *testing.T) {
	needEngines(t)
	bin := fastchessBinary(t)
	for _, c := range []struct{ name, args string }{
		{"EPD book, node odds", "-engine cmd={SF} name=A nodes=1500 -engine cmd={SF} name=B nodes=1000 -each proto=uci option.Threads=1 option.Hash=16 -openings file={EPD} format=epd order=sequential start=3 -rounds 3 -repeat -srand 7"},
		{"PGN book, adjudication", "-engine cmd={SF} name=A nodes=800 -engine cmd={SF} name=B nodes=800 option.Hash=8 -each option.Threads=1 -openings file={PGN} format=pgn order=sequential plies=6 -rounds 2 -games 2 -resign movecount=3 score=600 -draw movenumber=34 movecount=8 score=20 -srand 1"},
		{"-maxmoves", "-engine cmd={SF} name=A nodes=1500 -engine cmd={SF} name=B nodes=1000 -each option.Threads=1 -openings file={EPD} format=epd order=sequential start=3 -rounds 3 -repeat -maxmoves 30"},
		{"-reverse", "-engine cmd={SF} name=A nodes=900 -engine cmd={SF} name=B nodes=600 -each option.Threads=1 -openings file={EPD} format=epd order=sequential start=50 -rounds 2 -reverse"},
		{"-noswap", "-engine cmd={SF} name=A nodes=600 -engine cmd={SF} name=B nodes=900 -each option.Threads=1 -openings file={EPD} format=epd order=sequential start=100 -rounds 2 -noswap"},
		// order=random: fastchess's shuffle of the book by -srand (Fishtest's
		// seed and book settings), then start=.
		{"EPD book, order=random", "-engine cmd={SF} name=A nodes=700 -engine cmd={SF} name=B nodes=500 -each option.Threads=1 -openings file={EPD} format=epd order=random start=2 -srand 3141592653 -rounds 4 -concurrency 2"},
		{"PGN book, order=random", "-engine cmd={SF} name=A nodes=700 -engine cmd={SF} name=B nodes=500 -each option.Threads=1 -openings file={PGN} format=pgn order=random plies=8 -srand 5 -rounds 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append(substitute(t, c.args, dir), "-autosaveinterval", "0")
			t.Chdir(dir)
			fc := exec.Command(bin, append(args, "-pgnout", "file=fastchess.pgn", "-epdout", "file=fastchess.epd")...)
			if out, err := fc.CombinedOutput(); err != nil {
				t.Fatalf("fastchess: %v\n%s", err, out)
			}
			inv, err := Parse(append(args, "-pgnout", "file=arbiter.pgn", "-epdout", "file=arbiter.epd"), Fastchess)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Run(context.Background(), inv, RunOptions{Stdout: &out, Stderr: &out}); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			// The opening of every round, in round order.
			wantOps, gotOps := openingsByRound(t, "fastchess.pgn"), openingsByRound(t, "arbiter.pgn")
			if !slices.Equal(wantOps, gotOps) {
				t.Errorf("openings by round differ:\nfastchess: %q\narbiter:   %q", wantOps, gotOps)
			}
			want, got := pgnGames(t, "fastchess.pgn"), pgnGames(t, "arbiter.pgn")
			if len(want) == 0 || len(want) != len(got) {
				t.Fatalf("fastchess played %d games, arbiter %d", len(want), len(got))
			}
			for i := range want {
				if want[i] != got[i] {
					t.Errorf("game %d differs:\nfastchess: %s\narbiter:   %s", i+1, want[i], got[i])
				}
			}
			// The PGN files are the same but for the clock's values, game
			// for game (as a set: games are written as they finish).
			wantPGN, gotPGN := clockMaskedGames(t, "fastchess.pgn"), clockMaskedGames(t, "arbiter.pgn")
			for i := range wantPGN {
				if i >= len(gotPGN) || wantPGN[i] != gotPGN[i] {
					t.Errorf("fastchess wrote a game arbiter did not write the same:\n%s", wantPGN[i])
					break
				}
			}
			// -epdout: the same final positions, line for line.
			wantEPD, gotEPD := sortedLines(t, "fastchess.epd"), sortedLines(t, "arbiter.epd")
			if strings.Join(wantEPD, "\n") != strings.Join(gotEPD, "\n") || len(wantEPD) != len(want) {
				t.Errorf("EPD output differs:\nfastchess:\n%s\narbiter:\n%s", strings.Join(wantEPD, "\n"), strings.Join(gotEPD, "\n"))
			}
		})
	}
}

var (
	pgnComment = regexp.MustCompile(`\{[^}]*\}`)
	pgnMoveNum = regexp.MustCompile(`\d+\.(\.\.)?`)
	pgnTag     = regexp.MustCompile(`^\[(\w+) "(.*)"\]$`)
)

// pgnGames reads each game of a PGN file as "White-Black FEN: moves
// result", comments and move numbers left out, sorted.
func pgnGames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type game struct{ text string }
	var games []game
	var cur game
	var tags = map[string]string{}
	var moves []string
	flush := func() {
		if len(tags) == 0 {
			return
		}
		text := pgnMoveNum.ReplaceAllString(pgnComment.ReplaceAllString(strings.Join(moves, " "), ""), "")
		cur.text = tags["White"] + "-" + tags["Black"] + " " + tags["FEN"] + ": " + strings.Join(strings.Fields(text), " ")
		games = append(games, cur)
		cur, tags, moves = game{}, map[string]string{}, nil
	}
	inMoves := false
	for _, l := range strings.Split(string(b), "\n") {
		if m := pgnTag.FindStringSubmatch(l); m != nil {
			if inMoves {
				flush()
				inMoves = false
			}
			tags[m[1]] = m[2]
			continue
		}
		if strings.TrimSpace(l) != "" {
			inMoves = true
			moves = append(moves, l)
		}
	}
	flush()
	// fastchess writes games as they finish, with its own Round tags:
	// compare the games as a set.
	out := make([]string, len(games))
	for i, g := range games {
		out[i] = g.text
	}
	sort.Strings(out)
	return out
}

// pgnClock is a PGN value that depends on the wall clock (the Date and
// game time tags, an engine move's time).
var pgnClock = regexp.MustCompile(`\[(Date|GameDuration|GameStartTime|GameEndTime) "[^"]*"\]| \d+\.\d{3}s([,}])`)

// clockMaskedGames are a PGN file's games as written, clock values
// masked, sorted.
func clockMaskedGames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	masked := pgnClock.ReplaceAllStringFunc(string(b), func(s string) string {
		m := pgnClock.FindStringSubmatch(s)
		if m[1] == "" {
			return " (clock)" + m[2]
		}
		return "[" + m[1] + ` "(clock)"]`
	})
	// Each game starts "[Event " and ends "\n\n": split so that every
	// piece is alike, whichever game the file holds first or last.
	games := strings.Split("\n\n"+strings.TrimSuffix(masked, "\n\n"), "\n\n[Event ")[1:]
	sort.Strings(games)
	return games
}

// openingsByRound reads a PGN's games as "round: FEN and opening moves",
// one entry per round (fastchess tags a round's games "N", arbiter
// "N.1", "N.2"), in round order. The opening moves are the first plies of
// a PGN book's games: both runners mark the end of the book with a
// "book" comment.
func openingsByRound(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	byRound := map[int]string{}
	round, fen := 0, ""
	for _, g := range strings.Split(string(b), "[Event ")[1:] {
		round, fen = 0, ""
		var moves []string
		lines := strings.Split(g, "\n")
		for _, l := range lines[1:] { // lines[0]: the rest of the Event tag
			if m := pgnTag.FindStringSubmatch(l); m != nil {
				switch m[1] {
				case "Round":
					r, _, _ := strings.Cut(m[2], ".")
					round, _ = strconv.Atoi(r)
				case "FEN":
					fen = m[2]
				}
				continue
			}
			moves = append(moves, l)
		}
		opening := fen
		if body := strings.Join(moves, " "); strings.Contains(body, "{book}") {
			// The moves up to the last one commented "book".
			head := body[:strings.LastIndex(body, "{book}")]
			opening += " " + strings.Join(strings.Fields(pgnMoveNum.ReplaceAllString(pgnComment.ReplaceAllString(head, ""), "")), " ")
		}
		if prev, ok := byRound[round]; ok && prev != opening {
			t.Errorf("%s: round %d has two openings: %q and %q", path, round, prev, opening)
		}
		byRound[round] = opening
	}
	rounds := make([]int, 0, len(byRound))
	for r := range byRound {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	out := make([]string, len(rounds))
	for i, r := range rounds {
		out[i] = fmt.Sprintf("%d: %s", r, byRound[r])
	}
	return out
}

// cancelOn cancels a context when a line containing trigger is written.
type cancelOn struct {
	bytes.Buffer
	trigger string
	cancel  context.CancelFunc
}

func (c *cancelOn) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.trigger) {
		c.cancel()
	}
	return c.Buffer.Write(b)
}

// TestFastchessConfigResume: a match stopped after its first pair resumes from the
// state -config outname= kept, with -config file=, and plays exactly the
// games missing; a complete one has nothing to play, and a config.json
// that fastchess wrote is refused with the reason.
func TestFastchessConfigResume(t *testing.T) {
	needEngines(t)
	dir := t.TempDir()
	args := substitute(t, "-engine cmd={SF} name=A nodes=400 -engine cmd={SF} name=B nodes=300 -openings file={EPD} format=epd -rounds 3 -pgnout file=m.pgn -config outname=m.json -autosaveinterval 1", dir)
	t.Chdir(dir)
	inv, err := Parse(args, Fastchess)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &cancelOn{trigger: "Finished game 2 ", cancel: cancel}
	err = Run(ctx, inv, RunOptions{Stdout: out, Stderr: out})
	if err == nil || !strings.Contains(err.Error(), "-config file=m.json") {
		t.Fatalf("interrupted run: %v\n%s", err, out.String())
	}
	inv, err = Parse([]string{"-config", "file=m.json"}, Fastchess)
	if err != nil {
		t.Fatal(err)
	}
	var out2 bytes.Buffer
	if err := Run(context.Background(), inv, RunOptions{Stdout: &out2, Stderr: &out2}); err != nil {
		t.Fatalf("resume: %v\n%s", err, out2.String())
	}
	if !strings.Contains(out2.String(), "Resuming after") || !strings.Contains(out2.String(), "Games: 6,") {
		t.Errorf("resumed run:\n%s", out2.String())
	}
	pgn, _ := os.ReadFile("m.pgn")
	if n := strings.Count(string(pgn), "[Result "); n != 6 {
		t.Errorf("PGN holds %d games, want 6", n)
	}
	if err := Run(context.Background(), inv, RunOptions{Stdout: &out2, Stderr: &out2}); err == nil || !strings.Contains(err.Error(), "nothing to play") {
		t.Errorf("complete match resumed: %v", err)
	}
	os.WriteFile("config.json", []byte(`{"config_name": "config.json", "engines": []}`), 0o644)
	inv, _ = Parse([]string{"-config", "file=config.json"}, Fastchess)
	if err := Run(context.Background(), inv, RunOptions{Stdout: &out2, Stderr: &out2}); err == nil || !strings.Contains(err.Error(), "fastchess wrote") {
		t.Errorf("fastchess's config.json: %v", err)
	}
}

// TestFastchessIncidentsInFarmWords: an engine that crashes or plays an illegal
// move ends its game with the words the farms count ("disconnects",
// "illegal"), and -strict stops the match there, naming the incident.
func TestFastchessIncidentsInFarmWords(t *testing.T) {
	needEngines(t)
	bad := buildBadEngine(t)
	for _, c := range []struct {
		mode, reason string
	}{
		{"crash", "disconnects}"},
		{"illegal", "makes an illegal move}"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			dir := t.TempDir()
			args := substitute(t, "-engine cmd="+bad+" name=Bad option.Mode="+c.mode+" option.FailAt=3 -engine cmd={SF} name=SF -each nodes=300 -rounds 2 -recover -autosaveinterval 0", dir)
			t.Chdir(dir)
			out := mustRun(t, args)
			if n := strings.Count(out, c.reason); n != 4 {
				t.Errorf("%d games end %q, want 4:\n%s", n, c.reason, out)
			}
			checkStrictStops(t, args, "Bad")
		})
	}
}

// mustRun plays a fastchess command line; its output, standard output and
// error together.
func mustRun(t *testing.T, args []string) string {
	t.Helper()
	inv, err := Parse(args, Fastchess)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), inv, RunOptions{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

// checkStrictStops runs args with -strict: the match stops with an error
// that names -strict and want, before Finished match.
func checkStrictStops(t *testing.T, args []string, want string) {
	t.Helper()
	inv, err := Parse(append(args, "-strict"), Fastchess)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = Run(context.Background(), inv, RunOptions{Stdout: &out, Stderr: &out})
	if err == nil || !strings.Contains(err.Error(), "-strict") || !strings.Contains(err.Error(), want) {
		t.Errorf("-strict: %v, want it to name %q\n%s", err, want, out.String())
	}
	if strings.Contains(out.String(), "Finished match") {
		t.Errorf("-strict: the match finished:\n%s", out.String())
	}
}

func sortedLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	sort.Strings(l)
	return l
}
