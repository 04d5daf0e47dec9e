package engine

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// suiteFENs returns the FENs of the EPD suites (six fields, normalized as
// FEN() prints them, except where noted by the caller).
func suiteFENs(t *testing.T, file string) []string {
	var out []string
	for _, e := range loadEPDSuite(t, file) {
		out = append(out, e.fen)
	}
	return out
}

// epCapturable reports whether the FEN's e.p. square can be captured by a
// pawn of the side to move (the only case in which FEN() keeps it).
func epCapturable(p *Position, fen string) bool {
	f := strings.Fields(fen)
	if f[3] == "-" {
		return true
	}
	return p.EnPassant() != NoSquare && p.EnPassant().String() == f[3]
}

func TestFENRoundTripSuites(t *testing.T) {
	n := 0
	for _, file := range []string{"perftsuite.epd", "ethereal_standard.epd", "blunder_perft_suite.epd"} {
		for _, fen := range suiteFENs(t, file) {
			p, err := ParseFEN(fen)
			if err != nil {
				t.Errorf("%s: %v", fen, err)
				continue
			}
			if p.IsChess960() {
				t.Errorf("%s: standard position taken for Chess960", fen)
			}
			if got := p.FEN(); got != fen {
				t.Errorf("FEN round trip:\n got %s\nwant %s", got, fen)
			}
			n++
		}
	}
	// Chess960, Shredder-FEN castling letters.
	for _, fen := range suiteFENs(t, "ethereal_fischer960.epd") {
		p, err := ParseFEN(fen)
		if err != nil {
			t.Errorf("%s: %v", fen, err)
			continue
		}
		p.SetChess960(true)
		if got := p.FEN(); got != fen {
			t.Errorf("Shredder-FEN round trip:\n got %s\nwant %s", got, fen)
		}
		n++
	}
	// The octoprime sweep: four fields, so compare IdentityFEN.
	for _, e := range loadCSVSuite(t, "octoprime_perft_long.csv") {
		p, err := ParseFEN(e.fen)
		if err != nil {
			t.Errorf("%s: %v", e.fen, err)
			continue
		}
		if p.HalfmoveClock() != 0 || p.FullmoveNumber() != 1 {
			t.Errorf("%s: missing counters should default to 0 1, got %d %d", e.fen, p.HalfmoveClock(), p.FullmoveNumber())
		}
		if !epCapturable(&p, e.fen) {
			continue // FEN() drops an e.p. square no pawn can capture on
		}
		if got := p.IdentityFEN(); got != e.fen {
			t.Errorf("IdentityFEN round trip:\n got %s\nwant %s", got, e.fen)
		}
		n++
	}
	if n < 8000 {
		t.Errorf("only %d FENs checked", n)
	}
}

func TestFENNormalizesEnPassant(t *testing.T) {
	// After 1.e4 no black pawn can capture on e3: FEN() and the key drop it,
	// as Polyglot and Stockfish do.
	p, err := ParseFEN("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
	if err != nil {
		t.Fatal(err)
	}
	if p.EnPassant() != NoSquare {
		t.Errorf("EnPassant = %v, want none", p.EnPassant())
	}
	if got, want := p.FEN(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"; got != want {
		t.Errorf("FEN %s, want %s", got, want)
	}
	if p.Key() != 0x823c9b50fd114196 {
		t.Errorf("key %016x, want 823c9b50fd114196", p.Key())
	}
}

// TestFENRoundTripWalks: every position of random walks (standard and
// Chess960) prints a FEN that parses back to the same FEN, key and moves.
func TestFENRoundTripWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 60; i++ {
		start := StartPosition()
		if i%2 == 1 {
			var err error
			start, err = ParseFEN(chess960StartFEN(rng.IntN(960)))
			if err != nil {
				t.Fatal(err)
			}
			start.SetChess960(true)
		}
		for _, p := range randomWalk(start, rng, walkOptions{plies: 150, endgame: i%3 == 0}) {
			fen := p.FEN()
			q, err := ParseFEN(fen)
			if err != nil {
				t.Fatalf("ParseFEN(FEN()) of a reachable position: %v", err)
			}
			q.SetChess960(p.IsChess960())
			if q.FEN() != fen {
				t.Fatalf("round trip:\n got %s\nwant %s", q.FEN(), fen)
			}
			if q.Key() != p.Key() {
				t.Fatalf("%s: key after parse %016x, incremental %016x", fen, q.Key(), p.Key())
			}
			if q.CastlingRights() != p.CastlingRights() || q.EnPassant() != p.EnPassant() || q.SideToMove() != p.SideToMove() {
				t.Fatalf("%s: state differs after parse", fen)
			}
			a, b := movesUCI(&p), movesUCI(&q)
			if a != b {
				t.Fatalf("%s: moves differ after parse:\n%s\n%s", fen, a, b)
			}
		}
	}
}

func movesUCI(p *Position) string {
	var s []string
	for _, m := range p.LegalMoves() {
		s = append(s, p.UCIMove(m))
	}
	return strings.Join(s, " ")
}

func TestFENXFENAndShredderAgree(t *testing.T) {
	cases := []struct{ xfen, shredder string }{
		// Standard array: KQkq, HAha.
		{StartFEN, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1"},
		// Chess960 #0 bbqnnrkr: the h-side rook is h1, the a-side rook f1.
		{"bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1", "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"},
		// Two rooks on the h-side of the king: X-FEN K means the outermost.
		{"1r2k1rr/8/8/8/8/8/8/1R2K1RR w KQkq - 0 1", "1r2k1rr/8/8/8/8/8/8/1R2K1RR w HBhb - 0 1"},
	}
	for _, c := range cases {
		a, err := ParseFEN(c.xfen)
		if err != nil {
			t.Fatalf("%s: %v", c.xfen, err)
		}
		b, err := ParseFEN(c.shredder)
		if err != nil {
			t.Fatalf("%s: %v", c.shredder, err)
		}
		if !b.IsChess960() {
			t.Errorf("%s: Shredder-FEN letters should switch on Chess960", c.shredder)
		}
		if a.Key() != b.Key() || a.CastlingRights() != b.CastlingRights() {
			t.Errorf("%s and %s differ: keys %016x %016x, rights %b %b", c.xfen, c.shredder, a.Key(), b.Key(), a.CastlingRights(), b.CastlingRights())
		}
		a.SetChess960(true)
		if a.FEN() != c.shredder {
			t.Errorf("%s in Chess960 mode prints %s, want %s", c.xfen, a.FEN(), c.shredder)
		}
		if Perft(&a, 3) != Perft(&b, 3) {
			t.Errorf("%s: perft differs between X-FEN and Shredder-FEN", c.xfen)
		}
	}
}

func TestFENErrors(t *testing.T) {
	cases := []struct {
		name, fen, field string
	}{
		{"too few fields", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq", "position"},
		{"too many fields", StartFEN + " 7", "position"},
		{"empty", "", "position"},
		{"seven ranks", "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"nine ranks", "rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"short rank", "rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"long rank", "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"long rank by digits", "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"rank of 4+5", "rnbqkbnr/pppppppp/4p4/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"digit zero", "rnbqkbnr/pppppppp/08/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"unknown piece letter", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "piece placement"},
		{"unknown piece letter x", "rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "piece placement"},
		{"no white king", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 1", "piece placement"},
		{"no black king", "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", "piece placement"},
		{"two white kings", "4k3/8/8/8/8/8/8/K3K3 w - - 0 1", "piece placement"},
		{"two black kings", "k3k3/8/8/8/8/8/8/4K3 w - - 0 1", "piece placement"},
		{"kings adjacent", "8/8/8/8/8/8/3k4/4K3 w - - 0 1", "piece placement"},
		{"white pawn on rank 1", "4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "piece placement"},
		{"white pawn on rank 8", "P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "piece placement"},
		{"black pawn on rank 1", "4k3/8/8/8/8/8/8/p3K3 w - - 0 1", "piece placement"},
		{"black pawn on rank 8", "p3k3/8/8/8/8/8/8/4K3 b - - 0 1", "piece placement"},
		{"nine pawns", "4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", "piece placement"},
		{"side x", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"},
		{"side W", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1", "side to move"},
		{"side not to move in check (rook)", "4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", "position"},
		{"side not to move in check (pawn)", "4k3/3P4/8/8/8/8/8/4K3 w - - 0 1", "position"},
		{"side not to move in check (knight)", "4k3/8/3N4/8/8/8/8/4K3 w - - 0 1", "position"},
		{"triple check", "4k3/8/8/8/8/3n1n2/8/r3K3 w - - 0 1", "position"},
		{"castling K without h1 rook", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "castling"},
		{"castling Q without a1 rook", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w KQkq - 0 1", "castling"},
		{"castling k without h8 rook", "rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "castling"},
		{"castling with king off the back rank", "4k3/8/8/8/8/8/4K3/R6R w KQ - 0 1", "castling"},
		{"black castling with king off the back rank", "r6r/4k3/8/8/8/8/8/4K3 w kq - 0 1", "castling"},
		{"castling with the rook on the wrong side", "4k3/8/8/8/8/8/8/R3K3 w K - 0 1", "castling"},
		{"Shredder letter without rook", "4k3/8/8/8/8/8/8/R3K3 w H - 0 1", "castling"},
		{"Shredder letter on the king's file", "4k3/8/8/8/8/8/8/R3K3 w E - 0 1", "castling"},
		{"unknown castling letter", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1", "castling"},
		{"castling right twice", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKkq - 0 1", "castling"},
		{"castling K and H", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KHkq - 0 1", "castling"},
		{"e.p. not a square", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e9 0 1", "en passant"},
		{"e.p. garbage", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq xyz 0 1", "en passant"},
		{"e.p. wrong rank for black to move", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1", "en passant"},
		{"e.p. wrong rank for white to move", "rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", "en passant"},
		{"e.p. without the pawn that moved", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1", "en passant"},
		{"e.p. with the origin square occupied", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPPNPPP/RNBQKB1R b KQkq e3 0 1", "en passant"},
		{"e.p. with the target square occupied", "rnbqkbnr/pppppppp/8/8/4P3/4N3/PPPP1PPP/RNBQKB1R b KQkq e3 0 1", "en passant"},
		{"halfmove clock not a number", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "halfmove clock"},
		{"halfmove clock negative", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", "halfmove clock"},
		{"halfmove clock huge", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999999999999999999 1", "halfmove clock"},
		{"fullmove number zero", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0", "fullmove number"},
		{"fullmove number negative", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 -3", "fullmove number"},
		{"fullmove number not a number", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 one", "fullmove number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseFEN(c.fen)
			if err == nil {
				t.Fatalf("ParseFEN(%q) accepted", c.fen)
			}
			var fe *FENError
			if !errors.As(err, &fe) {
				t.Fatalf("ParseFEN(%q): error %T (%v), want *FENError", c.fen, err, err)
			}
			if fe.Field != c.field {
				t.Errorf("ParseFEN(%q): Field %q, want %q (error: %v)", c.fen, fe.Field, c.field, err)
			}
			if fe.FEN != c.fen || !strings.Contains(err.Error(), c.field) || fe.Msg == "" {
				t.Errorf("error does not name the input, the field and the problem: %v", err)
			}
		})
	}
}

func TestFENValidEdgeCases(t *testing.T) {
	for _, fen := range []string{
		// Counters are optional.
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 5",
		// An e.p. square no pawn can capture on is accepted (and dropped).
		"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
		// Double check is possible.
		"4k3/8/8/8/8/5n2/8/r3K3 w - - 0 1",
		// Extra whitespace.
		"  8/8/8/8/8/8/8/K6k   w  -  -  0  1 ",
		// Chess960 king on b1 with its a-side rook on a1.
		"1r4kr/8/8/8/8/8/8/RK5R w HAhb - 0 1",
	} {
		if _, err := ParseFEN(fen); err != nil {
			t.Errorf("ParseFEN(%q): %v", fen, err)
		}
	}
}
