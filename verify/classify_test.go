package verify

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// Each illegal move is explained by the rule it breaks.
func TestClassifyIllegal(t *testing.T) {
	for _, c := range []struct{ fen, move, want string }{
		{"8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2", "b5c6", "e.p. capture exposes the king along the rank"},
		{"4k3/8/8/1KPp3q/8/8/8/8 w - d6 0 1", "c5d6", "e.p. capture exposes the king along the rank"},
		{"4k3/8/8/2Pp4/8/8/8/r3K3 w - d6 0 1", "c5d6", "e.p. capture leaves the king in check"},
		{"4k3/6b1/8/3pP3/8/2K5/8/8 w - d6 0 1", "e5d6", "e.p. capture exposes the king along a diagonal"},
		{"4k3/8/8/8/8/8/8/4K3 w - - 0 1", "d4e5", "no piece on d4"},
		{"4k3/8/8/8/8/8/8/4K3 w - - 0 1", "e8e7", "moves the opponent's king"},
		{"4k3/8/8/8/8/8/3r4/4K3 w - - 0 1", "e1e2", "king moves into check"},
		{"4k3/8/8/8/8/8/8/r3K3 w - - 0 1", "e1f1", "king steps back along the line of the checking piece"},
		{"4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1", "d2e4", "pinned piece leaves its line"},
		{"4k3/4r3/8/8/8/8/3N4/4K3 w - - 0 1", "d2b3", "leaves the king in check"},
		{"4k3/4r3/8/8/1b6/8/8/3NK3 w - - 0 1", "d1e3", "only the king may move in double check"},
		{"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1e3", "a king on e1 cannot move to e3"},
		{"4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1", "e1c1", "castling queenside with pieces between king and rook (b1)"},
		{"4k3/8/8/8/8/8/8/R3K2R w K - 0 1", "e1c1", "castling queenside without the castling right"},
		{"4k3/4r3/8/8/8/8/8/R3K2R w KQ - 0 1", "e1g1", "castling out of check"},
		{"4k3/8/8/8/8/8/5r2/R3K2R w KQ - 0 1", "e1g1", "castling through an attacked square (f1"},
		{"4k3/8/8/8/8/8/6r1/R3K2R w KQ - 0 1", "e1g1", "castling into check (g1"},
		{"4k3/8/8/8/8/8/8/1R1BK3 w B - 0 1", "e1b1", "castling queenside with pieces between king and rook (d1)"},
		{"4k3/8/8/8/8/8/8/RK1B4 w A - 0 1", "b1a1", "Chess960 castling: rook's destination d1 occupied"},
		{"4k3/8/8/8/8/8/8/1KR3N1 w C - 0 1", "b1c1", "castling kingside with the king's destination g1 occupied"},
		{"4k3/8/8/8/8/8/8/rRK5 w B - 0 1", "c1b1", "Chess960 castling: the king stays on c1, which the rook no longer shields"},
		{"4k3/8/8/8/8/8/8/5RKr w F - 0 1", "g1f1", "castling out of check"},
		{"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8", "pawn reaches the last rank without promoting"},
		{"4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "a2a3q", "promotion suffix on a move that does not promote"},
		{"4k3/8/8/8/8/8/PP6/4K3 w - - 0 1", "a2b3", "pawn captures diagonally onto an empty square"},
		{"4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "a1e1", "rook captures its own king"},
	} {
		p, err := engine.ParseFEN(c.fen)
		if err != nil {
			t.Fatalf("%s: %v", c.fen, err)
		}
		if got := ClassifyIllegal(&p, c.move); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %s: %q, want %q...", c.fen, c.move, got, c.want)
		}
	}
}

func TestClassifyMissed(t *testing.T) {
	for _, c := range []struct{ fen, move, want string }{
		{"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8r", "missing under-promotion to rook"},
		{"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q", "missing promotion to queen"},
		{"4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", "missing e.p. capture"},
		{"4k3/8/8/2Pp4/2K5/8/8/8 w - d6 0 1", "c5d6", "missing e.p. capture that resolves the check"},
		{"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1c1", "missing castling queenside"},
		{"4k3/8/8/8/8/8/8/6KR w H - 0 1", "g1h1", "missing Chess960 castling kingside where the king does not move"},
		{"4k3/8/8/8/8/8/8/5K1R w H - 0 1", "f1h1", "missing Chess960 castling kingside: the rook's destination f1 is the king's own square"},
		{"4k3/8/8/8/8/8/8/1R1K4 w B - 0 1", "d1b1", "missing Chess960 castling queenside: the rook's destination d1 is the king's own square"},
		{"4k3/8/8/8/8/8/8/3RK3 w D - 0 1", "e1d1", "missing Chess960 castling queenside where the rook does not move"},
		{"4k3/8/8/8/8/8/8/4K1R1 w G - 0 1", "e1g1", "missing Chess960 castling kingside: the king's destination g1 is the castling rook's own square"},
		{"4k3/4r3/8/8/8/8/8/4K3 w - - 0 1", "e1d1", "missing king move out of check"},
		{"4k3/8/8/R7/8/8/8/r3K3 w - - 0 1", "a5a1", "missing capture of the checking piece"},
		{"4k3/4r3/8/8/8/8/3R4/4K3 w - - 0 1", "d2e2", "missing interposition against the check"},
		{"4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1", "e2e5", "missing move of a pinned rook along its pin line"},
		{"4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "a2a4", "missing double pawn push"},
	} {
		p, err := engine.ParseFEN(c.fen)
		if err != nil {
			t.Fatalf("%s: %v", c.fen, err)
		}
		m, err := p.ParseUCIMove(c.move)
		if err != nil {
			t.Fatalf("%s %s: %v", c.fen, c.move, err)
		}
		if got := ClassifyMissed(&p, m); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %s: %q, want %q...", c.fen, c.move, got, c.want)
		}
	}
}

func TestChess960Arrays(t *testing.T) {
	if a := Chess960Array(518); a != "RNBQKBNR" {
		t.Errorf("518: %s", a)
	}
	if a := Chess960Array(0); a != "BBQNNRKR" {
		t.Errorf("0: %s", a)
	}
	seen := map[string]bool{}
	for n := 0; n < 960; n++ {
		a := Chess960Array(n)
		seen[a] = true
		if _, err := engine.ParseFEN(Chess960StartFEN(n)); err != nil {
			t.Fatalf("%d: %v", n, err)
		}
	}
	if len(seen) != 960 {
		t.Errorf("%d distinct arrays, want 960", len(seen))
	}
}

func TestRandomTargetsReproducible(t *testing.T) {
	a := RandomTargets(20, 5, RandomOptions{Depth: 2})
	b := RandomTargets(20, 5, RandomOptions{Depth: 2})
	c := RandomTarget(5, 7, RandomOptions{Depth: 2})
	for i := range a {
		if a[i].FEN != b[i].FEN {
			t.Fatalf("%d: %s vs %s", i, a[i].FEN, b[i].FEN)
		}
	}
	if c.FEN != a[7].FEN {
		t.Errorf("target 7 alone: %s, in the batch: %s", c.FEN, a[7].FEN)
	}
	n960 := 0
	for _, tg := range RandomTargets(20, 5, RandomOptions{Depth: 2, Chess960: true}) {
		if tg.Chess960 {
			n960++
		}
	}
	if n960 != 20 {
		t.Errorf("%d of 20 Chess960 with Chess960: true", n960)
	}
}
