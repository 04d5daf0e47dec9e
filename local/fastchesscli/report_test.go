package fastchesscli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/sprt"
)

// TestFastchessBlockFigures: the report block's figures for counts whose
// block fastchess 1.8.2 printed (copied from its output on real games),
// the undefined ones included: -nan and nan by their sign, inf, -inf and
// -0.00 as fastchess prints them; the pentanomial DrawRatio (pairs WL+DD
// over pairs), not draws over games.
func TestFastchessBlockFigures(t *testing.T) {
	penta := func(w, l, d int64, p ...int64) sprt.Results {
		return sprt.Results{Wins: w, Losses: l, Draws: d, Pentanomial: &sprt.Pentanomial{p[0], p[1], p[2], p[3], p[4]}}
	}
	for _, c := range []struct {
		res   sprt.Results
		penta bool
		want  string
	}{
		{penta(1, 1, 0, 0, 0, 1, 0, 0), true, `Elo: -0.00 +/- 0.00, nElo: -nan +/- -nan
LOS: -nan %, DrawRatio: 100.00 %, PairsRatio: -nan
Games: 2, Wins: 1, Losses: 1, Draws: 0, Points: 1.0 (50.00 %)
Ptnml(0-2): [0, 0, 1, 0, 0], WL/DD Ratio: inf`},
		{penta(0, 2, 0, 1, 0, 0, 0, 0), true, `Elo: -inf +/- -nan, nElo: -inf +/- -nan
LOS: 0.00 %, DrawRatio: 0.00 %, PairsRatio: 0.00
Games: 2, Wins: 0, Losses: 2, Draws: 0, Points: 0.0 (0.00 %)
Ptnml(0-2): [1, 0, 0, 0, 0], WL/DD Ratio: -nan`},
		{penta(3, 1, 0, 0, 0, 1, 0, 1), true, `Elo: 190.85 +/- nan, nElo: 245.67 +/- 340.48
LOS: 92.14 %, DrawRatio: 50.00 %, PairsRatio: inf`},
		{penta(9, 2, 1, 0, 0, 2, 1, 3), true, `Elo: 231.91 +/- 265.97, nElo: 319.34 +/- 196.58
LOS: 99.93 %, DrawRatio: 33.33 %, PairsRatio: inf
Games: 12, Wins: 9, Losses: 2, Draws: 1, Points: 9.5 (79.17 %)
Ptnml(0-2): [0, 0, 2, 1, 3], WL/DD Ratio: inf`},
		// -report penta=false: W/D/L figures, no pentanomial lines.
		{sprt.Results{Wins: 2, Losses: 4}, false, `Elo: -120.41 +/- nan, nElo: -122.84 +/- 278.00
LOS: 19.32 %, DrawRatio: 0.00 %
Games: 6, Wins: 2, Losses: 4, Draws: 0, Points: 2.0 (33.33 %)
-----`},
		{sprt.Results{Wins: 0, Losses: 2}, false, `Elo: -inf +/- -nan, nElo: -inf +/- -nan
LOS: 0.00 %, DrawRatio: 0.00 %
Games: 2`},
	} {
		got := fastchessBlock("Results of A vs B (10+0.1, 1t, 16MB, book.epd)", statsOf(c.res), c.penta, "")
		want := reportRule + "\nResults of A vs B (10+0.1, 1t, 16MB, book.epd):\n" + c.want
		if !strings.HasPrefix(got, want) {
			t.Errorf("%+v:\ngot:\n%s\nwant (a prefix):\n%s", c.res, got, want)
		}
	}
}

// sameLinesCases are matches whose standard output fastchess 1.8.2
// printed (testdata/fastchess-1.8.2-*.out, the run's time masked), on
// games that are the same on every run: Stockfish 15.1 at fixed nodes,
// one thread, a time control long enough that no clock cuts a search.
var sameLinesCases = []struct{ golden, args string }{
	// An SPRT that fastchess stops at its bound after 16 games (the sprt
	// package's Sequential, with Fishtest's overshoot correction, would
	// stop after 4): every report with its LLR line, the final block
	// twice, then the verdict.
	{"sprt", "-repeat -games 2 -rounds 8 -ratinginterval 1 -srand 6 -openings file=book.epd format=epd order=random -engine name=A nodes=400 cmd={SF} -engine name=B nodes=300 cmd={SF} -each proto=uci option.Threads=1 tc=1000+10 -sprt elo0=0 elo1=20 alpha=0.45 beta=0.45"},
	// -report penta=false: W/D/L figures every two games.
	{"wdl", "-repeat -games 2 -rounds 3 -ratinginterval 2 -report penta=false -srand 6 -openings file=book.epd format=epd order=random -engine name=A nodes=400 cmd={SF} -engine name=B nodes=300 cmd={SF} -each proto=uci option.Threads=1 tc=1000+10"},
	// Engines without name=: stockfish and stockfish_2.
	{"names", "-games 2 -rounds 2 -ratinginterval 1 -srand 6 -openings file=book.epd format=epd order=random -engine cmd={SF} nodes=400 -engine cmd={SF} nodes=300 -each proto=uci option.Threads=1 tc=1000+10"},
	// -check-mate-pvs: six games in which Stockfish's mate scores come
	// with PVs that stop short of the mate, 25 times: fastchess's
	// "Warning; Incomplete mating PV" lines (-testEnv: one line each,
	// the info line, position and moves), in their places between the
	// Started and Finished lines.
	{"matepvs", "-repeat -games 2 -rounds 3 -ratinginterval 1 -srand 42 -openings file=book.epd format=epd order=random start=2 -engine name=A nodes=700 cmd={SF} -engine name=B nodes=500 cmd={SF} -each proto=uci option.Threads=1 tc=1000+10 -check-mate-pvs -testEnv"},
}

var (
	totalTime = regexp.MustCompile(`^Total Time: \d\d:\d\d:\d\d `)
	infoClock = regexp.MustCompile(` (nps|time) \d+`)
)

// maskTime replaces the run's time, the one figure that differs between
// two runs of the same games, and in a warning's copy of an info line
// the engine's nps and time (the recording has them left out).
func maskTime(out string) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = totalTime.ReplaceAllString(l, "Total Time: (the run's) ")
		if strings.HasPrefix(l, "Warning; ") {
			lines[i] = infoClock.ReplaceAllString(l, "")
		}
	}
	return lines
}

// TestSameLinesAsFastchess plays sameLinesCases and compares standard
// output with fastchess 1.8.2's line by line; with FASTCHESS set, the
// real fastchess plays them too and must print the recorded lines.
func TestSameLinesAsFastchess(t *testing.T) {
	needEngines(t)
	if out, _ := exec.Command("sh", "-c", "echo quit | "+stockfish).Output(); !strings.HasPrefix(string(out), "Stockfish 15.1 ") {
		t.Skipf("the recorded games are Stockfish 15.1's, not %.40q's", out)
	}
	book, err := os.ReadFile("../../books/uho-200.epd")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sameLinesCases {
		t.Run(c.golden, func(t *testing.T) {
			b, err := os.ReadFile("testdata/fastchess-1.8.2-" + c.golden + ".out")
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(string(b), "\n")
			t.Chdir(t.TempDir())
			if err := os.WriteFile("book.epd", book, 0o644); err != nil {
				t.Fatal(err)
			}
			args := strings.Fields(strings.ReplaceAll(c.args, "{SF}", stockfish))
			inv, err := Parse(args, Fastchess)
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if err := Run(context.Background(), inv, RunOptions{Stdout: &out, Stderr: &errOut}); err != nil {
				t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
			}
			sameLines(t, "arbiter", want, maskTime(out.String()))
			if bin := os.Getenv("FASTCHESS"); bin != "" {
				real, err := exec.Command(bin, args...).Output()
				if err != nil {
					t.Fatalf("%s: %v\n%s", bin, err, real)
				}
				sameLines(t, bin, want, maskTime(string(real)))
			}
		})
	}
}

func sameLines(t *testing.T, who string, want, got []string) {
	t.Helper()
	for i := range max(len(want), len(got)) {
		if i >= len(want) || i >= len(got) || want[i] != got[i] {
			t.Errorf("%s: from line %d on, not fastchess 1.8.2's lines:\nfastchess:\n%s\n%s:\n%s", who, i+1,
				strings.Join(want[i:], "\n"), who, strings.Join(got[min(i, len(got)):], "\n"))
			return
		}
	}
}
