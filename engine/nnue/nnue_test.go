package nnue

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// testFENs cover castling both ways, en passant, promotions with and
// without capture, and Chess960 castling (king and rook crossing, the king
// standing still, the rook on the king's target).
var testFENs = []struct {
	fen      string
	chess960 bool
}{
	{engine.StartFEN, false},
	{"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", false},
	{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", false},
	{"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", false},
	{"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", false},
	{"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", false},
	{"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", false},
	{"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", true},
	{"2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", true},
	{"1rk3r1/8/8/8/8/8/8/1RK3R1 w GBgb - 0 1", true},
	{"rk5r/8/8/8/8/8/8/RK5R w AHah - 0 1", true},
}

func parse(t testing.TB, fen string, chess960 bool) engine.Position {
	t.Helper()
	p, err := engine.ParseFEN(fen)
	if err != nil {
		t.Fatalf("%s: %v", fen, err)
	}
	if chess960 {
		p.SetChess960(true)
	}
	return p
}

// TestIncrementalEqualsRefresh plays random games from every test position
// and checks, after every move (and null move), that the incrementally
// updated accumulator equals one computed from scratch.
func TestIncrementalEqualsRefresh(t *testing.T) {
	n := NewRandom(1)
	r := rand.New(rand.NewPCG(7, 7))
	kinds := map[string]int{}
	for _, tc := range testFENs {
		for game := 0; game < 40; game++ {
			p := parse(t, tc.fen, tc.chess960)
			var acc Accumulator
			n.Refresh(&acc, &p)
			for ply := 0; ply < 60; ply++ {
				var ml engine.MoveList
				p.GenerateMoves(&ml)
				if ml.N == 0 {
					break
				}
				child := p
				var m engine.Move
				if !p.InCheck() && r.IntN(10) == 0 {
					child.MakeNullMove()
					kinds["null"]++
				} else {
					m = ml.Moves[r.IntN(ml.N)]
					switch {
					case m.IsCastle():
						kinds["castle"]++
					case m.IsEnPassant():
						kinds["en passant"]++
					case m.IsPromotion():
						kinds["promotion"]++
					case p.IsCapture(m):
						kinds["capture"]++
					}
					child.MakeMove(m)
				}
				var inc, full Accumulator
				n.Update(&inc, &acc, &p, &child)
				n.Refresh(&full, &child)
				if inc != full {
					t.Fatalf("%s: after %s (ply %d) the updated accumulator differs from a refresh of %s", tc.fen, p.UCIMove(m), ply, child.FEN())
				}
				if got, want := n.Evaluate(&inc, child.SideToMove()), n.EvaluatePosition(&child); got != want {
					t.Fatalf("evaluation %d, refresh %d", got, want)
				}
				p, acc = child, inc
			}
		}
	}
	for _, k := range []string{"castle", "en passant", "promotion", "capture", "null"} {
		if kinds[k] == 0 {
			t.Errorf("no %s move was played: the test does not cover it", k)
		}
	}
	t.Logf("moves by kind: %v", kinds)
}

// TestEvaluateMatchesBulletFormula checks Evaluate against bullet's
// reference inference written out in floating order on a hand-made net.
func TestEvaluateMatchesBulletFormula(t *testing.T) {
	n := NewRandom(3)
	p := parse(t, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1", false)
	var acc Accumulator
	n.Refresh(&acc, &p)
	us, them := acc.V[engine.Black], acc.V[engine.White]
	var out int32
	for i := 0; i < HiddenSize; i++ {
		cu := int32(min(max(us[i], 0), QA))
		ct := int32(min(max(them[i], 0), QA))
		out += cu * cu * int32(n.OutputWeights[i])
		out += ct * ct * int32(n.OutputWeights[HiddenSize+i])
	}
	out /= QA
	out += int32(n.OutputBias)
	out *= Scale
	out /= QA * QB
	if got := n.Evaluate(&acc, engine.Black); got != int(out) {
		t.Fatalf("Evaluate %d, bullet's formula %d", got, out)
	}
	// Black's perspective of a black piece is White's of the mirrored white piece.
	if f, g := FeatureIndex(engine.Black, engine.MakePiece(engine.Black, engine.Knight), 62), FeatureIndex(engine.White, engine.MakePiece(engine.White, engine.Knight), 6); f != g || f != 64+6 {
		t.Fatalf("feature of a black knight on g8 for Black %d, of a white knight on g1 for White %d, want 70", f, g)
	}
	if f := FeatureIndex(engine.White, engine.MakePiece(engine.Black, engine.King), 60); f != 384+5*64+60 {
		t.Fatalf("black king on e8 for White: %d", f)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	n := NewRandom(5)
	data, err := n.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != FileSize || FileSize%64 != 0 {
		t.Fatalf("saved %d bytes, FileSize %d", len(data), FileSize)
	}
	pad := data[payloadBytes(HiddenSize):]
	if want := bytes.Repeat([]byte("bullet"), 20)[:len(pad)]; !bytes.Equal(pad, want) {
		t.Fatalf("padding %q is not bullet's", pad)
	}
	m, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if *m != *n {
		t.Fatal("the loaded net differs from the saved one")
	}
}

func TestLoadRefusesBadFiles(t *testing.T) {
	good, _ := NewRandom(5).MarshalBinary()
	wide := make([]byte, fileBytes(256))
	copy(wide[payloadBytes(256):], "bulletbulletbulletbulletbulletbulletbulletbulletbulletbulletbullet")
	badPad := append([]byte(nil), good...)
	badPad[len(badPad)-1] ^= 0xff
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"empty":       {nil, "net is 0 bytes, want 197440"},
		"truncated":   {good[:len(good)-100], "truncated or not a net"},
		"too long":    {append(append([]byte(nil), good...), 0), "net is 197441 bytes"},
		"256 wide":    {wide, "a (768→256)×2→1 net, another architecture"},
		"bad padding": {badPad, "padding at byte 197439"},
		"text":        {[]byte(strings.Repeat("not a net\n", 100)), "truncated or not a net"},
	} {
		_, err := Load(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

func TestQuantiseRefusesOverflow(t *testing.T) {
	var f FloatNet
	f.FeatureWeights[3][4] = 200 // × QA = 51000: no int16
	if _, err := f.Quantise(); err == nil || !strings.Contains(err.Error(), "feature weight") {
		t.Fatalf("error %v, want one naming a feature weight", err)
	}
	f.FeatureWeights[3][4] = 0.5
	f.OutputBias = -0.25
	n, err := f.Quantise()
	if err != nil {
		t.Fatal(err)
	}
	if n.FeatureWeights[3][4] != 128 || n.OutputBias != -4080 {
		t.Fatalf("quantised %d, %d; want round(0.5×255)=128, round(-0.25×255×64)=-4080", n.FeatureWeights[3][4], n.OutputBias)
	}
}

func BenchmarkUpdateQuiet(b *testing.B) {
	n := NewRandom(1)
	p := parse(b, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 1 8", false)
	m, _ := p.ParseUCIMove("a2a3")
	c := p
	c.MakeMove(m)
	var a, d Accumulator
	n.Refresh(&a, &p)
	for b.Loop() {
		n.Update(&d, &a, &p, &c)
	}
}

func BenchmarkUpdateCapture(b *testing.B) {
	n := NewRandom(1)
	p := parse(b, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 1 8", false)
	m, _ := p.ParseUCIMove("c4d5")
	c := p
	c.MakeMove(m)
	var a, d Accumulator
	n.Refresh(&a, &p)
	for b.Loop() {
		n.Update(&d, &a, &p, &c)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	n := NewRandom(1)
	p := parse(b, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 1 8", false)
	var a Accumulator
	n.Refresh(&a, &p)
	s := 0
	for b.Loop() {
		s += n.Evaluate(&a, engine.White)
	}
	_ = s
}

func BenchmarkRefresh(b *testing.B) {
	n := NewRandom(1)
	p := parse(b, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 1 8", false)
	var a Accumulator
	for b.Loop() {
		n.Refresh(&a, &p)
	}
}
