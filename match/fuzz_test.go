package match

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// replays checks that every opening a book reader returned replays with the
// rules library (the Book invariant): its FEN parses and each move is legal.
func replays(t *testing.T, ops []Opening) {
	t.Helper()
	for i, op := range ops {
		if op.ID != i {
			t.Fatalf("opening %d has ID %d", i, op.ID)
		}
		pos := engine.StartPosition()
		if op.FEN != "" {
			p, err := engine.ParseFEN(op.FEN)
			if err != nil {
				t.Fatalf("opening %d: FEN %q does not parse: %v", i, op.FEN, err)
			}
			pos = p
		}
		if op.Chess960 {
			pos.SetChess960(true)
		}
		for _, m := range op.Moves {
			mv, err := pos.ParseUCIMove(m)
			if err != nil {
				t.Fatalf("opening %d (%q %v): move %q: %v", i, op.FEN, op.Moves, m, err)
			}
			pos.MakeMove(mv)
		}
	}
}

// FuzzBookEPD: any bytes read as an EPD book give openings that replay or a
// clear error, never a panic.
func FuzzBookEPD(f *testing.F) {
	for _, s := range []string{
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
		"# comment\nr3k2r/8/8/8/8/8/8/R3K2R w KQkq - bm O-O; id \"x\";\n\n4k3/8/8/8/8/8/8/4K3 b - -\n",
		"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\n",
		"8/8/8/8/8/8/8/8 w - -\n", "x y z\n", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 99999999999 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := readEPD(bytes.NewReader(data), "fuzz.epd")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "openings fuzz.epd") {
				t.Fatalf("error does not name the book: %v", err)
			}
			return
		}
		replays(t, ops)
	})
}

// FuzzBookPGN: any bytes read as a PGN book give openings that replay (at
// most plies moves each when plies > 0) or a clear error, never a panic.
func FuzzBookPGN(f *testing.F) {
	for _, s := range []string{
		"[Event \"x\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\"]\n\n1. e4 {c} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 *\n",
		"1. d4 d5 2. c4 e6 3. Nc3 Nf6 1/2-1/2\n\n[Event \"y\"]\n1. e4 ; comment\n c5 *\n",
		"[Variant \"Chess960\"]\n[FEN \"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\"]\n\n9. g3 O-O *\n",
		"1. e4 {unterminated\n", "1. Ke2 Ke7 2. Kxe7 *\n", "[FEN \"8/8/8\"]\n1. e4 *\n", "%escape\n1. e4 e5 1-0\n",
	} {
		f.Add([]byte(s), 0)
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, plies int) {
		plies = max(plies%64, 0)
		ops, err := readPGN(bytes.NewReader(data), "fuzz.pgn", plies)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "openings fuzz.pgn") {
				t.Fatalf("error does not name the book: %v", err)
			}
			return
		}
		replays(t, ops)
		for i, op := range ops {
			if plies > 0 && len(op.Moves) > plies {
				t.Fatalf("opening %d has %d moves, more than plies=%d", i, len(op.Moves), plies)
			}
		}
	})
}
