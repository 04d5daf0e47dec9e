package epd

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPublishedSuites: the suites as published (CRLF line ends, NUL bytes
// padding Bratko-Kopec's lines, "bm Qd1 +" with the check mark apart)
// parse, with the moves their authors meant.
func TestPublishedSuites(t *testing.T) {
	wac, err := ParseSuite("wac.epd", readTestdata(t, "wac.epd"))
	if err != nil {
		t.Fatal(err)
	}
	// The file holds 299 of WAC's 300 positions: WAC.274 is not in it.
	if n := len(wac.Positions); n != 299 {
		t.Errorf("wac.epd: %d positions, want 299", n)
	}
	first := wac.Positions[0]
	if first.ID != "WAC.001" || !slices.Equal(first.Best, []string{"g3g6"}) || first.Line != 1 {
		t.Errorf("WAC.001: %+v", first)
	}
	bk, err := ParseSuite("bratko-kopec.epd", readTestdata(t, "bratko-kopec.epd"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"BK.01": {"d6d1"},         // "bm Qd1 + ;"
		"BK.05": {"c3d5", "a2a4"}, // "bm Nd5 a4"
		"BK.14": {"d1d2", "d1e1"},
		"BK.15": {"g4g7"}, // "bm Qxg7 + ;"
	}
	for _, p := range bk.Positions {
		if w, ok := want[p.ID]; ok {
			if !slices.Equal(p.Best, w) {
				t.Errorf("%s: bm %v, want %v", p.ID, p.Best, w)
			}
			delete(want, p.ID)
		}
	}
	if len(bk.Positions) != 24 || len(want) != 0 {
		t.Errorf("bratko-kopec.epd: %d positions, missing %v", len(bk.Positions), want)
	}
}

// TestKaufmanRefused: the Kaufman suite as published has six bad lines;
// each is named with its number and what is wrong, and the suite is
// refused whole.
func TestKaufmanRefused(t *testing.T) {
	_, err := ParseSuite("kaufman.epd", readTestdata(t, "kaufman.epd"))
	var se *SuiteError
	if !errors.As(err, &se) {
		t.Fatalf("want a SuiteError, got %v", err)
	}
	want := map[int]string{
		3:  `am "Ne5": ambiguous`,
		4:  `en passant: "-1" is not a square`,
		6:  `bm "Bcx3+": not a move in SAN, LAN or UCI notation`,
		7:  `en passant: "-1"`,
		10: `en passant: "-1"`,
		15: `en passant: "-1"`,
	}
	for _, le := range se.Lines {
		w, ok := want[le.Line]
		if !ok || !strings.Contains(le.Msg, w) || le.File != "kaufman.epd" {
			t.Errorf("unexpected refusal %v", le)
		}
		delete(want, le.Line)
	}
	if len(want) > 0 {
		t.Errorf("lines not refused: %v\n%v", want, err)
	}
	if !strings.Contains(err.Error(), "kaufman.epd:6: bm") {
		t.Errorf("message does not name the file and line: %v", err)
	}
}

const goodFEN = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"

// TestRefusals: each kind of bad line is refused with its line number and
// a message saying what is wrong; the control (a good line after the bad
// one) parses.
func TestRefusals(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"no bm or am", goodFEN + " ; id \"x\";", "no bm or am"},
		{"illegal move", goodFEN + " ; bm Qxd8;", `bm "Qxd8": illegal move`},
		{"illegal UCI move", goodFEN + " ; bm h5h8;", `bm "h5h8": illegal move`},
		{"ambiguous SAN", "4k3/8/8/8/8/8/4K3/R6R w - - ; bm Rd1;", `bm "Rd1": ambiguous`},
		{"not a move", goodFEN + " ; bm Qh5xx7;", "not a move in SAN, LAN or UCI notation"},
		{"side not to move in check", "4k3/8/8/8/8/8/4R3/4K3 w - - ; bm Kd1;", "is not legal: position"},
		{"bad placement", "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ; bm e4;", "is not legal: piece placement"},
		{"too few fields", "8/8/8/8 w ; bm e4;", "is not legal"},
		{"checkmate", "7k/6Q1/6K1/8/8/8/8/8 b - - ; am Kxg7;", "no legal move"},
		{"bm without a move", goodFEN + " ; bm ;", "bm without a move"},
		{"bm twice", goodFEN + " ; bm Qxf7; bm Qxf7;", "bm given twice"},
		{"same move twice", goodFEN + " ; bm Qxf7 h5f7;", "the same move twice"},
		{"unclosed quote", goodFEN + ` ; bm Qxf7; id "x;`, "not closed"},
		{"bad opcode", goodFEN + " ; 7up Qxf7;", "is not an operation"},
		{"control character", goodFEN + " ; bm Qxf7;\x01 id x;", "control character"},
		{"empty id", goodFEN + " ; bm Qxf7; id;", "id without a value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := "\n" + c.line + "\n" + goodFEN + " ; bm Qxf7#; id \"ok\";\n"
			_, err := ParseSuite("s.epd", []byte(data))
			var se *SuiteError
			if !errors.As(err, &se) || len(se.Lines) != 1 {
				t.Fatalf("want one refused line, got %v", err)
			}
			if le := se.Lines[0]; le.Line != 2 || !strings.Contains(le.Msg, c.want) {
				t.Errorf("got %v, want line 2: %q", le, c.want)
			}
		})
	}
	// The control: the good line alone parses.
	s, err := ParseSuite("s.epd", []byte(goodFEN+" ; bm Qxf7#; id \"ok\";\n"))
	if err != nil || len(s.Positions) != 1 || s.Positions[0].Best[0] != "h5f7" {
		t.Fatalf("control: %v %+v", err, s)
	}
	dup := goodFEN + " ; bm Qxf7; id a;\n" + goodFEN + " ; bm Qxf7; id a;\n"
	if _, err := ParseSuite("s.epd", []byte(dup)); err == nil || !strings.Contains(err.Error(), "s.epd:2: id \"a\" is already the id of line 1") {
		t.Errorf("duplicate id: %v", err)
	}
	if _, err := ParseSuite("s.epd", []byte("\n\r\n")); err == nil || !strings.Contains(err.Error(), "no positions") {
		t.Errorf("empty suite: %v", err)
	}
}

// TestNotations: one move written in SAN, LAN and UCI is one move; am
// works alone; FEN counters, a ';' glued to them and quoted ids are read.
func TestNotations(t *testing.T) {
	lines := []string{
		goodFEN + " ; bm Qxf7#; id a;",
		goodFEN + "; bm Qh5xf7; id b;",
		goodFEN + "; bm h5f7; id c;",
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e2-e4 Nf3 d4; id \"d d\"; c0 \"a; quoted\"; c1 x;",
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1; am f3 g4;",
		"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - bm O-O; am 0-0-0; id f;",
		"8/P6k/8/8/8/8/8/K7 w - - bm a8=Q a8R; id g;",
	}
	s, err := ParseSuite("n.epd", []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	got := func(i int) []string { return s.Positions[i].Best }
	for i := range 3 {
		if !slices.Equal(got(i), []string{"h5f7"}) {
			t.Errorf("line %d: %v", i+1, got(i))
		}
	}
	if p := s.Positions[3]; !slices.Equal(p.Best, []string{"e2e4", "g1f3", "d2d4"}) || p.ID != "d d" ||
		len(p.Comments) != 2 || p.Comments[0].Text != "a; quoted" || p.Comments[1].N != 1 {
		t.Errorf("line 4: %+v", p)
	}
	if p := s.Positions[4]; len(p.Best) != 0 || !slices.Equal(p.Avoid, []string{"f2f3", "g2g4"}) || p.ID != "line 5" {
		t.Errorf("line 5: %+v", p)
	}
	if p := s.Positions[5]; !slices.Equal(p.Best, []string{"e1g1"}) || !slices.Equal(p.Avoid, []string{"e1c1"}) {
		t.Errorf("line 6: %+v", p)
	}
	if p := s.Positions[6]; !slices.Equal(p.Best, []string{"a7a8q", "a7a8r"}) {
		t.Errorf("line 7: %+v", p)
	}
	// Solving: am alone (anything but the am moves), and castling
	// written either way by the engine.
	if p := &s.Positions[4]; p.SolvesUCI("f2f3") || !p.SolvesUCI("e2e4") || p.SolvesUCI("e2e5") {
		t.Error("am-only position: wrong verdicts")
	}
	if p := &s.Positions[5]; !p.SolvesUCI("e1g1") || !p.SolvesUCI("e1h1") || p.SolvesUCI("e1c1") {
		t.Error("castling: e1g1 and e1h1 are one move")
	}
}

// TestChess960: a Shredder-FEN castling field makes the position Chess960;
// its castling moves travel as king takes rook.
func TestChess960(t *testing.T) {
	line := "nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - bm Nb3; id 960;\n" +
		"1r1k2r1/pppppppp/8/8/8/8/PPPPPPPP/1R1K2R1 w GBgb - bm O-O; id c;"
	s, err := ParseSuite("960.epd", []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Positions[1]; !p.Chess960 || !slices.Equal(p.Best, []string{"d1g1"}) {
		t.Errorf("960 castling: %+v", p)
	}
	if !strings.Contains(s.Positions[1].FEN, "GBgb") {
		t.Errorf("FEN lost the Shredder castling field: %s", s.Positions[1].FEN)
	}
	if p := s.Positions[0]; !p.Chess960 || !slices.Equal(p.Best, []string{"a1b3"}) {
		t.Errorf("960 start position: %+v", p)
	}
}

// FuzzParseSuite: no input panics, and a suite that parses has only
// positions whose moves are legal, in UCI notation that parses back.
func FuzzParseSuite(f *testing.F) {
	f.Add([]byte(goodFEN + " ; bm Qxf7#; id \"ok\";\n"))
	f.Add(readTestdata(f, "bratko-kopec.epd"))
	f.Add(readTestdata(f, "kaufman.epd"))
	f.Add([]byte("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - bm O-O; am 0-0-0 e1-d1; c0 \"x;y\";"))
	f.Add([]byte("nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1; bm Nb3 g1f3;"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSuite("f.epd", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for i := range s.Positions {
			p := &s.Positions[i]
			if len(p.Best)+len(p.Avoid) == 0 || p.Line < 1 {
				t.Fatalf("position %d: %+v", i, p)
			}
			pos := p.Position()
			for _, mv := range append(append([]string(nil), p.Best...), p.Avoid...) {
				if _, err := pos.ParseUCIMove(mv); err != nil {
					t.Fatalf("position %d: move %s does not parse back: %v", i, mv, err)
				}
			}
		}
	})
}
