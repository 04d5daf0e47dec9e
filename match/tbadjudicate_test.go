package match

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/testing/tbtest"
)

// KBBvKN positions, white to move: a cursed win (won, but not within the
// 50-move rule) and a win, found by a seeded search of random positions
// and checked with Fathom (which gives 1/2-1/2 and 1-0 for them).
const (
	cursedWinFEN = "8/2BBK3/8/3k4/8/8/8/7n w - - 0 1"
	winFEN       = "5k2/8/5B2/n2B4/8/8/8/K7 w - - 0 1"
)

func mustFEN(t *testing.T, fen string) engine.Position {
	t.Helper()
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// TestTablebaseVerdict: the verdicts against the real tables, with the
// 50-move rule (a cursed win is a draw unless Ignore50), the results
// filter, and the positions never probed (nonzero counter, castling
// rights, more pieces than asked).
func TestTablebaseVerdict(t *testing.T) {
	tb := tbtest.Open(t)
	cursed, win := mustFEN(t, cursedWinFEN), mustFEN(t, winFEN)
	for fen, want := range map[string]syzygy.WDL{cursedWinFEN: syzygy.CursedWin, winFEN: syzygy.Win} {
		pos := mustFEN(t, fen)
		if got, err := tb.ProbeWDL(&pos); err != nil || got != want {
			t.Fatalf("%s: WDL %v %v, want %v", fen, got, err, want)
		}
	}
	both := &TablebaseAdjudication{Tables: tb}
	cases := []struct {
		name   string
		adj    *TablebaseAdjudication
		pos    engine.Position
		want   Result
		reason string
	}{
		{"win", both, win, WhiteWins, "White wins by adjudication: SyzygyTB"},
		{"cursed win is a draw", both, cursed, Draw, TBDrawReason},
		{"cursed win, -tbignore50", &TablebaseAdjudication{Tables: tb, TBRule: TBRule{Ignore50: true}}, cursed, WhiteWins, "White wins by adjudication: SyzygyTB"},
		{"cursed win, WIN_LOSS only", &TablebaseAdjudication{Tables: tb, TBRule: TBRule{Results: TBWinLoss}}, cursed, NoResult, ""},
		{"win, DRAW only", &TablebaseAdjudication{Tables: tb, TBRule: TBRule{Results: TBDraw}}, win, NoResult, ""},
		{"win, 4 pieces asked", &TablebaseAdjudication{Tables: tb, TBRule: TBRule{Pieces: 4}}, win, NoResult, ""},
	}
	for _, c := range cases {
		r, reason, ok := c.adj.TablebaseVerdict(&c.pos)
		if r != c.want || reason != c.reason || ok != (c.want != NoResult) {
			t.Errorf("%s (%s): got %v %q %v, want %v %q", c.name, c.pos.FEN(), r, reason, ok, c.want, c.reason)
		}
	}
	// Black to move in a lost position: the win is White's.
	lost, _ := engine.ParseFEN("8/8/8/8/8/3k4/8/3K2Q1 b - - 0 1")
	if r, reason, _ := both.TablebaseVerdict(&lost); r != WhiteWins || reason != "White wins by adjudication: SyzygyTB" {
		t.Errorf("KQvK, black to move: %v %q", r, reason)
	}
	// Never probed: a nonzero counter, castling rights.
	for _, fen := range []string{"8/8/8/8/8/3k4/8/3K2Q1 b - - 1 1", "4k3/8/8/8/8/8/8/4K2R w K - 0 1"} {
		pos, err := engine.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := both.TablebaseVerdict(&pos); ok {
			t.Errorf("%s was adjudicated; it must not be probed", fen)
		}
	}
}

func TestParseTBResults(t *testing.T) {
	for in, want := range map[string]TBResults{"WIN_LOSS": TBWinLoss, "draw": TBDraw, "Both": TBBoth, "win-loss": TBWinLoss} {
		if got, err := ParseTBResults(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseTBResults("WIN"); err == nil || !strings.Contains(err.Error(), "WIN_LOSS, DRAW or BOTH") {
		t.Errorf("WIN: %v", err)
	}
}
