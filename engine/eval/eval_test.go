package eval

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// mirror flips a FEN vertically and swaps the colours, which must negate
// nothing: the side to move keeps the same score.
func mirror(fen string) string {
	f := strings.Fields(fen)
	ranks := strings.Split(f[0], "/")
	for i, j := 0, len(ranks)-1; i < j; i, j = i+1, j-1 {
		ranks[i], ranks[j] = ranks[j], ranks[i]
	}
	swap := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			switch {
			case c >= 'a' && c <= 'z':
				b[i] = c - 32
			case c >= 'A' && c <= 'Z':
				b[i] = c + 32
			}
		}
		return string(b)
	}
	f[0] = swap(strings.Join(ranks, "/"))
	if f[1] == "w" {
		f[1] = "b"
	} else {
		f[1] = "w"
	}
	if f[2] != "-" {
		f[2] = swap(f[2])
	}
	if f[3] != "-" {
		r := f[3][1]
		f[3] = string(f[3][0]) + string('1'+'8'-r)
	}
	return strings.Join(f, " ")
}

var testFENs = []string{
	engine.StartFEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 1 8",
	"8/pp3pk1/2p3p1/4P3/1P3P2/P5P1/5K2/8 w - - 0 35",
	"4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
	"8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1",
	"2r3k1/pp3ppp/4pn2/q2p4/3P4/P1Q1PN2/1P3PPP/2R3K1 w - - 0 20",
}

func TestSymmetry(t *testing.T) {
	e := Default()
	for _, fen := range testFENs {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		q, err := engine.ParseFEN(mirror(fen))
		if err != nil {
			t.Fatalf("mirror of %s: %v", fen, err)
		}
		if a, b := e.Evaluate(&p), e.Evaluate(&q); a != b {
			t.Errorf("%s: %d, mirrored %d", fen, a, b)
		}
	}
}

func TestSanity(t *testing.T) {
	e := Default()
	score := func(fen string) int {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		return e.Evaluate(&p)
	}
	if s := score(engine.StartFEN); s < 0 || s > 40 {
		t.Errorf("start position: %d, want a small tempo bonus", s)
	}
	if s := score("4k3/8/8/8/8/8/8/3QK3 w - - 0 1"); s < 800 {
		t.Errorf("extra queen: %d", s)
	}
	if s := score("4k3/8/8/8/8/8/8/3QK3 b - - 0 1"); s > -800 {
		t.Errorf("extra queen, other side to move: %d", s)
	}
	// A passed pawn on the seventh is worth more than one on the second.
	if a, b := score("4k3/P7/8/8/8/8/8/4K3 w - - 0 1"), score("4k3/8/8/8/8/8/P7/4K3 w - - 0 1"); a <= b {
		t.Errorf("passed pawn: seventh %d <= second %d", a, b)
	}
	// KN vs K is scaled towards a draw.
	if s := score("4k3/8/8/8/8/8/8/3NK3 w - - 0 1"); s > 100 {
		t.Errorf("KNK: %d", s)
	}
}

func TestParamTable(t *testing.T) {
	seen := map[string]bool{}
	for i, p := range Params {
		if p.Name == "" {
			t.Errorf("param %d has no name", i)
			continue
		}
		if seen[strings.ToLower(p.Name)] {
			t.Errorf("duplicate param %q", p.Name)
		}
		seen[strings.ToLower(p.Name)] = true
		if p.Min > p.Default || p.Default > p.Max || p.Step <= 0 || strings.ContainsAny(p.Name, " \t") {
			t.Errorf("param %+v: bad range, step or name", p)
		}
	}
	if FindParam(Params[:], "pawnvaluemg") != PawnMG {
		t.Errorf("FindParam is not case-insensitive")
	}
	if _, err := Params[PawnMG].ParseValue("1000"); err == nil {
		t.Errorf("out-of-range value accepted")
	}
}

func BenchmarkEvaluate(b *testing.B) {
	e := Default()
	p, _ := engine.ParseFEN(testFENs[1])
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e.Evaluate(&p)
	}
}
