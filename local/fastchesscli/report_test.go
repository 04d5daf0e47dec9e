package fastchesscli

import (
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
