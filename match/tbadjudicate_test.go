package match

import (
	"github.com/arbiter-chess/arbiter/internal/tbtest"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

// findKBBvKN returns a legal KBBvKN position, white to move, whose WDL is
// want (searched from a fixed seed, so the test is the same every run).
func findKBBvKN(t *testing.T, tb *syzygy.Tablebase, want syzygy.WDL) engine.Position {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 44))
	for range 200000 {
		var board [64]byte
		for _, p := range []byte("KBBkn") {
			for {
				sq := r.IntN(64)
				if board[sq] == 0 {
					board[sq] = p
					break
				}
			}
		}
		var b strings.Builder
		for rank := 7; rank >= 0; rank-- {
			empty := 0
			for f := range 8 {
				p := board[rank*8+f]
				if p == 0 {
					empty++
					continue
				}
				if empty > 0 {
					b.WriteByte(byte('0' + empty))
					empty = 0
				}
				b.WriteByte(p)
			}
			if empty > 0 {
				b.WriteByte(byte('0' + empty))
			}
			if rank > 0 {
				b.WriteByte('/')
			}
		}
		pos, err := engine.ParseFEN(b.String() + " w - - 0 1")
		if err != nil || !pos.HasLegalMove() {
			continue
		}
		if w, err := tb.ProbeWDL(&pos); err == nil && w == want {
			return pos
		}
	}
	t.Fatalf("no KBBvKN position with WDL %v found", want)
	return engine.Position{}
}

// TestTablebaseVerdict: the verdicts against the real tables, with the
// 50-move rule (a cursed win is a draw unless Ignore50), the results
// filter, and the positions never probed (nonzero counter, castling
// rights, more pieces than asked).
func TestTablebaseVerdict(t *testing.T) {
	tb := tbtest.Open(t)
	cursed := findKBBvKN(t, tb, syzygy.CursedWin)
	t.Logf("cursed win: %s", cursed.FEN())
	win := findKBBvKN(t, tb, syzygy.Win)
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
