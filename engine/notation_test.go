package engine

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func mustFEN(t testing.TB, fen string) Position {
	t.Helper()
	p, err := ParseFEN(fen)
	if err != nil {
		t.Fatalf("ParseFEN(%q): %v", fen, err)
	}
	return p
}

func mustUCI(t testing.TB, p *Position, s string) Move {
	t.Helper()
	m, err := p.ParseUCIMove(s)
	if err != nil {
		t.Fatalf("ParseUCIMove(%q) in %s: %v", s, p.FEN(), err)
	}
	return m
}

// notationPositions returns many positions for the both-ways tests: the
// EPD suites and random walks (standard and Chess960, into endgames).
func notationPositions(t *testing.T) []Position {
	var out []Position
	for _, file := range []string{"blunder_perft_suite.epd", "ethereal_fischer960.epd"} {
		for i, fen := range suiteFENs(t, file) {
			if file == "ethereal_fischer960.epd" && i%4 != 0 {
				continue
			}
			p := mustFEN(t, fen)
			out = append(out, p)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 40; i++ {
		start := StartPosition()
		if i%2 == 1 {
			start = mustFEN(t, chess960StartFEN(rng.IntN(960)))
			start.SetChess960(true)
		}
		walk := randomWalk(start, rng, walkOptions{plies: 200, endgame: i%4 < 2})
		for j := 0; j < len(walk); j += 3 {
			out = append(out, walk[j])
		}
	}
	return out
}

func TestUCIMoveBothWays(t *testing.T) {
	positions := notationPositions(t)
	moves := 0
	for _, p := range positions {
		for _, chess960 := range []bool{false, true} {
			if p.IsChess960() && !chess960 {
				continue // a Chess960 position prints in Chess960 mode
			}
			q := p
			q.SetChess960(chess960)
			seen := map[string]bool{}
			for _, m := range q.LegalMoves() {
				s := q.UCIMove(m)
				if seen[s] {
					t.Fatalf("%s: two moves print as %s", q.FEN(), s)
				}
				seen[s] = true
				back, err := q.ParseUCIMove(s)
				if err != nil || back != m {
					t.Fatalf("%s: ParseUCIMove(UCIMove(m) = %q) = %v, %v; want the move back", q.FEN(), s, back, err)
				}
				moves++
			}
		}
	}
	t.Logf("%d positions, %d moves", len(positions), moves)
}

func TestUCICastling(t *testing.T) {
	p := mustFEN(t, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
	oo, ooo := mustUCI(t, &p, "e1g1"), mustUCI(t, &p, "e1c1")
	if !oo.IsCastle() || !ooo.IsCastle() {
		t.Fatalf("e1g1/e1c1 not castling: %v %v", oo, ooo)
	}
	// King takes rook is accepted in standard mode too, and is the same move.
	if m := mustUCI(t, &p, "e1h1"); m != oo {
		t.Errorf("e1h1 = %v, want the castling move %v", m, oo)
	}
	if m := mustUCI(t, &p, "e1a1"); m != ooo {
		t.Errorf("e1a1 = %v, want the castling move %v", m, ooo)
	}
	if s := p.UCIMove(oo); s != "e1g1" {
		t.Errorf("standard O-O prints %q, want e1g1", s)
	}
	if s := p.UCIMove(ooo); s != "e1c1" {
		t.Errorf("standard O-O-O prints %q, want e1c1", s)
	}
	// Chess960 mode: king takes rook, and e1g1 is a (here illegal) king move.
	p.SetChess960(true)
	if s := p.UCIMove(oo); s != "e1h1" {
		t.Errorf("Chess960 O-O prints %q, want e1h1", s)
	}
	if s := p.UCIMove(ooo); s != "e1a1" {
		t.Errorf("Chess960 O-O-O prints %q, want e1a1", s)
	}
	if m, err := p.ParseUCIMove("e1g1"); err == nil {
		t.Errorf("Chess960 mode accepted e1g1 as %v", m)
	}
	// Black.
	b := mustFEN(t, "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1")
	if s := b.UCIMove(mustUCI(t, &b, "e8c8")); s != "e8c8" {
		t.Errorf("black O-O-O prints %q", s)
	}

	// Chess960: king g1, rook h1 — the king does not move in O-O; king b1,
	// rook a1 — O-O-O moves the king to c1.
	q := mustFEN(t, "rk4r1/pppppppp/8/8/8/8/PPPPPPPP/RK4R1 w GAga - 0 1")
	for _, c := range []struct{ uci, kingTo, rookTo string }{{"b1g1", "g1", "f1"}, {"b1a1", "c1", "d1"}} {
		m := mustUCI(t, &q, c.uci)
		if !m.IsCastle() {
			t.Fatalf("%s is not castling", c.uci)
		}
		if s := q.UCIMove(m); s != c.uci {
			t.Errorf("prints %q, want %q", s, c.uci)
		}
		r := q
		r.MakeMove(m)
		ks, _ := ParseSquare(c.kingTo)
		rs, _ := ParseSquare(c.rookTo)
		if r.PieceAt(ks) != MakePiece(White, King) || r.PieceAt(rs) != MakePiece(White, Rook) {
			t.Errorf("%s: after castling %s", c.uci, r.FEN())
		}
		if r.CastlingRights()&(WhiteOO|WhiteOOO) != 0 {
			t.Errorf("%s: white keeps castling rights: %s", c.uci, r.FEN())
		}
	}
	// Chess960 king f1, rook g1: O-O puts the king on g1, the rook on f1.
	k := mustFEN(t, "5kr1/6p1/8/8/8/8/6P1/5KR1 w Gg - 0 1")
	m := mustUCI(t, &k, "f1g1")
	k.MakeMove(m)
	if got := k.FEN(); got != "5kr1/6p1/8/8/8/8/6P1/5RK1 b g - 1 1" {
		t.Errorf("after f1g1 castling: %s", got)
	}
}

func TestUCIPromotionAndErrors(t *testing.T) {
	p := mustFEN(t, "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
	for _, s := range []string{"a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8n"} {
		m := mustUCI(t, &p, s)
		if !m.IsPromotion() || p.UCIMove(m) != s {
			t.Errorf("%s: parsed %v, prints %q", s, m, p.UCIMove(m))
		}
	}
	if m := mustUCI(t, &p, "a7a8q"); m.Promotion() != Queen {
		t.Errorf("a7a8q promotes to %v", m.Promotion())
	}
	if m := mustUCI(t, &p, "a7a8n"); m.Promotion() != Knight {
		t.Errorf("a7a8n promotes to %v", m.Promotion())
	}
	if s := p.UCIMove(NullMove); s != "0000" {
		t.Errorf("null move prints %q", s)
	}
	for _, s := range []string{
		"", "e2", "e2e", "e2e4qq", "a7a8", "a7a8k", "a7a8p", "a7a8Q", "i1a1", "a9a8",
		"e1e1", "e1e3", "b8a6", "e2e4", "a7a6", "0000", "E1E2", "e1-e2",
	} {
		m, err := p.ParseUCIMove(s)
		if err == nil {
			t.Errorf("ParseUCIMove(%q) accepted as %v", s, m)
			continue
		}
		var me *MoveError
		if !errors.As(err, &me) || me.Move != s {
			t.Errorf("ParseUCIMove(%q): error %T %v, want *MoveError naming the move", s, err, err)
		}
	}
	// En passant.
	e := mustFEN(t, "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
	m := mustUCI(t, &e, "e5d6")
	if !m.IsEnPassant() || !e.IsCapture(m) {
		t.Errorf("e5d6 is not an e.p. capture: %v", m)
	}
}

func TestSANBothWays(t *testing.T) {
	positions := notationPositions(t)
	moves := 0
	for _, p := range positions {
		seen := map[string]bool{}
		for _, m := range p.LegalMoves() {
			s := p.SAN(m)
			if seen[s] {
				t.Fatalf("%s: two moves print as %s", p.FEN(), s)
			}
			seen[s] = true
			back, err := p.ParseSAN(s)
			if err != nil || back != m {
				t.Fatalf("%s: ParseSAN(SAN(%s) = %q) = %v, %v", p.FEN(), p.UCIMove(m), s, back, err)
			}
			// Check marks agree with the position after the move.
			c := p
			c.MakeMove(m)
			suffix := ""
			switch {
			case c.IsCheckmate():
				suffix = "#"
			case c.InCheck():
				suffix = "+"
			}
			if got := s[len(s)-len(suffix):]; suffix != "" && got != suffix || suffix == "" && (s[len(s)-1] == '+' || s[len(s)-1] == '#') {
				t.Fatalf("%s: SAN %q, check suffix should be %q", p.FEN(), s, suffix)
			}
			moves++
		}
	}
	t.Logf("%d positions, %d moves", len(positions), moves)
}

func TestSANCases(t *testing.T) {
	cases := []struct{ fen, uci, san string }{
		{StartFEN, "e2e4", "e4"},
		{StartFEN, "g1f3", "Nf3"},
		// Disambiguation by file, by rank, by both.
		{"4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "a1d1", "Rad1"},
		{"4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "h1d1", "Rhd1"},
		{"4k3/R7/8/8/8/8/8/R5K1 w - - 0 1", "a1a4", "R1a4"},
		{"4k3/R7/8/8/8/8/8/R5K1 w - - 0 1", "a7a4", "R7a4"},
		{"4k3/8/8/8/8/Q7/8/Q1Q3K1 w - - 0 1", "a1b2", "Qa1b2"},
		{"4k3/8/8/8/8/Q7/8/Q1Q3K1 w - - 0 1", "c1b2", "Qcb2"},
		{"4k3/8/8/8/8/Q7/8/Q1Q3K1 w - - 0 1", "a3b2", "Q3b2"},
		// A pinned piece does not need disambiguation.
		{"4k3/8/8/8/8/2N5/8/r1N1K3 w - - 0 1", "c3e2", "Ne2"},
		// Knights, captures.
		{"4k3/8/8/3p4/8/2N1N3/8/4K3 w - - 0 1", "c3d5", "Ncxd5"},
		// Checks and mates.
		{"4k3/8/8/8/8/8/8/4K2R w K - 0 1", "h1h8", "Rh8+"},
		{"rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4", "Qh4#"},
		// Castling, also giving check.
		{"4k3/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "O-O"},
		{"r3k3/8/8/8/8/8/8/4K3 b q - 0 1", "e8c8", "O-O-O"},
		{"5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "O-O+"},
		// Promotions.
		{"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q", "a8=Q+"},
		{"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8n", "a8=N"},
		{"1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8r", "axb8=R+"},
		// En passant.
		{"4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "e5d6", "exd6"},
	}
	for _, c := range cases {
		p := mustFEN(t, c.fen)
		m := mustUCI(t, &p, c.uci)
		if got := p.SAN(m); got != c.san {
			t.Errorf("%s %s: SAN %q, want %q", c.fen, c.uci, got, c.san)
		}
		if got, err := p.ParseSAN(c.san); err != nil || got != m {
			t.Errorf("%s: ParseSAN(%q) = %v, %v; want %s", c.fen, c.san, got, err, c.uci)
		}
	}
}

func TestParseSANLenient(t *testing.T) {
	p := mustFEN(t, "r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1")
	for _, c := range []struct{ san, uci string }{
		{"0-0", "e1g1"}, {"O-O", "e1g1"}, {"0-0-0", "e1c1"}, {"O-O-O+", "e1c1"},
		{"b8Q", "b7b8q"}, {"b8=Q", "b7b8q"}, {"b8=Q+", "b7b8q"}, {"b8=N!?", "b7b8n"}, {"bxa8=Q", "b7a8q"}, {"axb8=Q", ""},
		{"Rb1", "a1b1"}, {"Rab1", "a1b1"}, {"Ra1b1", "a1b1"}, {"Rxa8", "a1a8"}, {"Rxa8+", "a1a8"}, {"Rh7", "h1h7"}, {"Rh7+", "h1h7"},
		{"Kd2", "e1d2"}, {"Ke1d2", "e1d2"}, {"Rd1", "a1d1"},
	} {
		m, err := p.ParseSAN(c.san)
		if c.uci == "" {
			if err == nil {
				t.Errorf("ParseSAN(%q) accepted as %s", c.san, p.UCIMove(m))
			}
			continue
		}
		if err != nil || m != mustUCI(t, &p, c.uci) {
			t.Errorf("ParseSAN(%q) = %v, %v; want %s", c.san, m, err, c.uci)
		}
	}
	for _, s := range []string{
		"", "+", "Ke3", "Zd1", "a8=K", "a8=P", "a8=", "a8=QQ", "e9", "N", "Nxx", "Pa8",
		"O-O-O-O", "Bb2", "i5", "Rd1d1d1",
	} {
		m, err := p.ParseSAN(s)
		if err == nil {
			t.Errorf("ParseSAN(%q) accepted as %s", s, p.UCIMove(m))
			continue
		}
		var me *MoveError
		if !errors.As(err, &me) {
			t.Errorf("ParseSAN(%q): error %T, want *MoveError", s, err)
		}
	}
	// Ambiguity is an error.
	a := mustFEN(t, "4k3/8/8/8/8/8/4K3/R6R w - - 0 1")
	if m, err := a.ParseSAN("Rd1"); err == nil {
		t.Errorf("ambiguous Rd1 accepted as %s", a.UCIMove(m))
	}
	// Castling not legal.
	s := StartPosition()
	if _, err := s.ParseSAN("O-O"); err == nil {
		t.Error("O-O accepted in the start position")
	}
}
