package fastchesscli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/match"
)

// buildBadEngine builds testing/testengines/badengine, whose modes mate,
// shortmate and longmate mate in one when they can and claim it with a
// complete, short or overlong PV.
func buildBadEngine(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "badengine")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput(); err != nil {
		t.Fatalf("build badengine: %v\n%s", err, out)
	}
	return bin
}

// The lines fastchess 1.8.2 (f618e345) printed on these games (measured:
// the same games with the real fastchess, 2026-12-05).
const (
	incompleteMate = "Warning; Incomplete mating PV - from A :: Info; info depth 1 score mate 2 nodes 1 pv a1a8 :: Position; fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1 :: Moves; "
	afterMate      = "Warning; PV continues after checkmate - move a1a8 from A :: Info; info depth 1 score mate 1 nodes 1 pv a1a8 a1a8 :: Position; fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1 :: Moves; "
)

// matePVArgs: two games from a position where White mates in one (Ra8#),
// A (badengine in mode) against B (mode mate: a complete PV).
func matePVArgs(t *testing.T, bad, mode string, check bool) []string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mate.epd"), []byte("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-engine", "cmd=" + bad, "name=A", "option.Mode=" + mode, "-engine", "cmd=" + bad, "name=B", "option.Mode=mate",
		"-each", "option.FailAt=1", "tc=10+0.1", "-openings", "file=" + filepath.Join(dir, "mate.epd"),
		"format=epd", "-rounds", "1", "-games", "2", "-testEnv", "-autosaveinterval", "0"}
	if check {
		args = append(args, "-check-mate-pvs")
	}
	return args
}

// sameWarningsAsFastchess runs the real fastchess ($FASTCHESS, if set)
// on args: it must print the warning lines got.
func sameWarningsAsFastchess(t *testing.T, args, got []string) {
	t.Helper()
	bin := os.Getenv("FASTCHESS")
	if bin == "" {
		return
	}
	real, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("fastchess: %v\n%s", err, real)
	}
	if r := warningLines(string(real)); strings.Join(r, "\n") != strings.Join(got, "\n") {
		t.Errorf("fastchess %s printed\n%q\narbiter\n%q", bin, r, got)
	}
}

func warningLines(out string) []string {
	var w []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Warning;") {
			w = append(w, l)
		}
	}
	return w
}

// TestFastchessMatePVs: with -check-mate-pvs a mate score whose PV is
// shorter than the mate prints fastchess's "Warning; Incomplete mating
// PV" line (its words, the info line, the position and the moves, joined
// by " :: " under -testEnv), once, in the game where A has White; the
// game goes on as fastchess's does (White mates). Controls: the same
// engine without -check-mate-pvs, and a complete mating PV with it, print
// no warning; a PV that goes on after the mate is warned about with or
// without -check-mate-pvs, as fastchess does. -strict stops the match on
// the warning. With FASTCHESS set the real fastchess prints the same
// warning lines on the same command lines.
func TestFastchessMatePVs(t *testing.T) {
	bad := buildBadEngine(t)
	cases := []struct {
		name, mode string
		check      bool
		want       []string
	}{
		{"short-checked", "shortmate", true, []string{incompleteMate}},
		{"short-unchecked", "shortmate", false, nil},
		{"complete-checked", "mate", true, nil},
		{"aftermate-checked", "longmate", true, []string{afterMate}},
		{"aftermate-unchecked", "longmate", false, []string{afterMate}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := matePVArgs(t, bad, c.mode, c.check)
			t.Chdir(t.TempDir())
			out := mustRun(t, args)
			got := warningLines(out)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("warnings:\n%q\nwant:\n%q\nout:\n%s", got, c.want, out)
			}
			if n := strings.Count(out, "1-0 {White mates}"); n != 2 {
				t.Errorf("%d games end 1-0 {White mates}, want 2:\n%s", n, out)
			}
			if len(c.want) > 0 {
				checkStrictStops(t, args, "Warning; ")
			}
			sameWarningsAsFastchess(t, args, got)
		})
	}
}

// TestLastInfoLine: the move's score and depth come from the last exact
// line of the main PV, as fastchess reads them (a bound line only when
// there is no exact one; another PV's line never).
func TestLastInfoLine(t *testing.T) {
	exact := "info depth 4 seldepth 2 multipv 1 score cp 133 nodes 223 nps 44600 time 5 pv c3d5"
	bound := "info depth 5 seldepth 3 multipv 1 score cp -34 upperbound nodes 400 time 5 pv c3d5 e6d5"
	second := "info depth 5 multipv 2 score cp 20 nodes 400 pv a2a3"
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{exact, bound}, exact},
		{[]string{bound}, bound},
		{[]string{exact, second}, exact},
		{[]string{second}, ""},
		{nil, ""},
	} {
		if got := lastInfoLine(c.lines); got != c.want {
			t.Errorf("lastInfoLine(%q) = %q, want %q", c.lines, got, c.want)
		}
	}
	inf := infoOfLine(exact, match.Info{})
	if want := (match.Info{HasScore: true, Score: match.Score{CP: 133}, Depth: 4, SelDepth: 2, Nodes: 223}); inf != want {
		t.Errorf("infoOfLine = %+v, want %+v", inf, want)
	}
	if inf := infoOfLine("info depth 3 score mate -2 pv a2a3", match.Info{}); inf.Score.Mate != -2 || !inf.HasScore {
		t.Errorf("mate score read as %+v", inf)
	}
}

// TestInfoLinesCapped: an engine that floods a search with info lines
// costs at most maxInfoLines of them, and the last line, which the move's
// score comes from, is always kept.
func TestInfoLinesCapped(t *testing.T) {
	f := newFastchessPlayer(nil, "A", true, true, func(string) {})
	for i := range 3 * maxInfoLines {
		f.record([]byte("info depth " + strconv.Itoa(i) + " score cp 1 pv e2e4"))
	}
	f.record([]byte("info string not a score"))
	if len(f.lines) != maxInfoLines {
		t.Errorf("%d lines kept, want at most %d", len(f.lines), maxInfoLines)
	}
	if last := lastInfoLine(f.lines); last != "info depth "+strconv.Itoa(3*maxInfoLines-1)+" score cp 1 pv e2e4" {
		t.Errorf("last line kept: %q", last)
	}
}

// TestCheckPV: each of fastchess's PV warnings on a position where it
// applies, and none on a PV that is right (the control).
func TestCheckPV(t *testing.T) {
	const mateIn1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
	for _, c := range []struct {
		fen   string
		moves []string
		line  string
		want  string
	}{
		{mateIn1, nil, "info depth 1 score mate 1 pv a1a8", ""},
		{mateIn1, nil, "info depth 1 score mate 2 pv a1a8", "Warning; Incomplete mating PV - from %s"},
		{mateIn1, nil, "info depth 1 score mate 2 lowerbound pv a1a8", ""},
		{mateIn1, nil, "info depth 3 score mate 1 pv a1a2 g8f8 a2a8", "Warning; Too long mating PV - from %s"},
		{mateIn1, nil, "info depth 1 score mate 1 pv a1a7", "Warning; Mating PV does not end with checkmate - from %s"},
		{mateIn1, nil, "info depth 1 score cp 500 pv a1a9", ""}, // a1a9 is not a UCI move: the PV is empty
		{mateIn1, nil, "info depth 1 score cp 500 pv a1b2", "Warning; Illegal PV move - move a1b2 from %s"},
		{mateIn1, nil, "info depth 2 score cp 500 pv a1a8 g8f8", "Warning; PV continues after checkmate - move g8f8 from %s"},
		{"7k/8/8/8/8/8/8/K5Q1 w - - 0 1", nil, "info depth 1 score cp 0 pv g1g2 a1b3", "Warning; Illegal PV move - move a1b3 from %s"},
		{"k7/8/1Q6/8/8/8/8/7K w - - 0 1", nil, "info depth 2 score cp 0 pv h1g1 a8a7", "Warning; PV continues after stalemate - move a8a7 from %s"},
		{"k7/8/8/8/8/8/8/K6R w - - 99 80", nil, "info depth 2 score cp 900 pv h1h2 a8b8", "Warning; PV continues after fifty-move rule - move a8b8 from %s"},
		// Knights back and forth: the start position a third time.
		{"", []string{"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"}, "info depth 2 score cp 0 pv f6g8 e2e4", "Warning; PV continues after threefold repetition - move e2e4 from %s"},
		{"", []string{"g1f3", "g8f6", "f3g1"}, "info depth 2 score cp 0 pv f6g8 e2e4", ""},
	} {
		g, err := replay(c.fen, false, c.moves)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.checkPV(c.line, true); got != c.want {
			t.Errorf("%s %v: %q: got %q, want %q", c.fen, c.moves, c.line, got, c.want)
		}
	}
}

// The line fastchess 1.8.2 printed in game 1 of signArgs (measured,
// 2026-12-05; game 2 prints it with the colours' names swapped).
const signMismatch = "Warning; Sign mismatch in mate scores 1 and 1 from A (White) and B (Black) :: Infos; info depth 1 score mate 1 nodes 1 pv c4a5 ; info depth 1 score mate 1 nodes 1 pv f6e8 :: Position; fen r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ - 0 9 :: Moves; c4a5 f6e8"

// signArgs: a pair from book's first opening, badengine in mode modeA
// (A) and modeB (B) on its first move, six moves long.
func signArgs(bad, book, modeA, modeB string) []string {
	return []string{"-engine", "cmd=" + bad, "name=A", "option.Mode=" + modeA, "-engine", "cmd=" + bad, "name=B", "option.Mode=" + modeB,
		"-each", "option.FailAt=1", "tc=10+0.1", "-openings", "file=" + book, "format=epd",
		"-rounds", "1", "-games", "2", "-maxmoves", "6", "-testEnv", "-autosaveinterval", "0"}
}

// TestFastchessMateSignMismatch: two engines that each claim to mate in
// one on their first move make fastchess's "Sign mismatch in mate
// scores" line (both info lines, the position, the moves with the
// second claim's) after the second claim, in each game; the control, an
// engine that claims nothing, makes none. With FASTCHESS set the real
// fastchess prints the same lines.
func TestFastchessMateSignMismatch(t *testing.T) {
	bad := buildBadEngine(t)
	book, err := filepath.Abs("../../books/uho-200.epd")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		modeB string
		want  []string
	}{
		{"claimmate", []string{signMismatch, strings.NewReplacer("A (White)", "B (White)", "B (Black)", "A (Black)").Replace(signMismatch)}},
		{"none", nil},
	} {
		t.Run(c.modeB, func(t *testing.T) {
			args := signArgs(bad, book, "claimmate", c.modeB)
			t.Chdir(t.TempDir())
			got := warningLines(mustRun(t, args))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("warnings:\n%q\nwant:\n%q", got, c.want)
			}
			sameWarningsAsFastchess(t, args, got)
		})
	}
}
