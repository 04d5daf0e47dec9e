package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchPositions: the classic perft positions (middlegame-heavy).
var benchFENs = []string{
	StartFEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
	"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
	"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
}

func benchPositions(b *testing.B) []Position {
	var out []Position
	for _, f := range benchFENs {
		p, err := ParseFEN(f)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

var sinkInt int
var sinkPos Position

// BenchmarkGenerateMoves: one op generates the moves of one position.
func BenchmarkGenerateMoves(b *testing.B) {
	ps := benchPositions(b)
	var ml MoveList
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		ps[i%len(ps)].GenerateMoves(&ml)
		n += ml.N
	}
	sinkInt = n
}

// BenchmarkLegalMoveCount: the bulk counter used at perft's last ply.
func BenchmarkLegalMoveCount(b *testing.B) {
	ps := benchPositions(b)
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		n += ps[i%len(ps)].LegalMoveCount()
	}
	sinkInt = n
}

// BenchmarkMakeMove: one op is a copy-make (copy the position, make one
// move), cycling through every legal move of the bench positions.
func BenchmarkMakeMove(b *testing.B) {
	type pm struct {
		p *Position
		m Move
	}
	ps := benchPositions(b)
	var all []pm
	for i := range ps {
		for _, m := range ps[i].LegalMoves() {
			all = append(all, pm{&ps[i], m})
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		x := all[i%len(all)]
		c := *x.p
		c.MakeMove(x.m)
		sinkPos = c
	}
}

func benchPerft(b *testing.B, fen string, depth int, want uint64) {
	p, err := ParseFEN(fen)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var nodes uint64
	start := time.Now()
	for b.Loop() {
		if n := Perft(&p, depth); n != want {
			b.Fatalf("perft %d = %d, want %d", depth, n, want)
		}
		nodes += want
	}
	b.ReportMetric(float64(nodes)/time.Since(start).Seconds()/1e6, "Mnps")
}

// BenchmarkPerftStart6: single thread, no hash table.
func BenchmarkPerftStart6(b *testing.B) {
	benchPerft(b, StartFEN, 6, 119060324)
}

// BenchmarkPerftKiwipete5: single thread, no hash table.
func BenchmarkPerftKiwipete5(b *testing.B) {
	benchPerft(b, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5, 193690690)
}

// BenchmarkPerftPos3_6: single thread, no hash table; CPW position 3,
// the sparse endgame where few moves are harmless to the null-move count.
func BenchmarkPerftPos3_6(b *testing.B) {
	benchPerft(b, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 6, 11030083)
}

// BenchmarkPerftPos4_5: single thread, no hash table; CPW position 4.
func BenchmarkPerftPos4_5(b *testing.B) {
	benchPerft(b, "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 5, 15833292)
}

// BenchmarkPerftHashStart7: single thread through a fresh 64 MB table per
// run (the table's allocation is part of the run).
func BenchmarkPerftHashStart7(b *testing.B) {
	p := StartPosition()
	b.ReportAllocs()
	var nodes uint64
	start := time.Now()
	for b.Loop() {
		if n := PerftWithTable(&p, 7, NewPerftTable(64)); n != 3195901860 {
			b.Fatalf("perft 7 = %d, want 3195901860", n)
		}
		nodes += 3195901860
	}
	b.ReportMetric(float64(nodes)/time.Since(start).Seconds()/1e6, "Mnps")
}

// BenchmarkInitAttacks: the magic-bitboard table fill done at start-up
// (rook and bishop tables).
func BenchmarkInitAttacks(b *testing.B) {
	b.ReportAllocs()
	var rt [len(rookTable)]Bitboard
	var bt [len(bishopTable)]Bitboard
	for b.Loop() {
		var rm, bm [64]magic
		fillMagics(&rm, rt[:], &rookDirs, &rookMagicNumbers)
		fillMagics(&bm, bt[:], &bishopDirs, &bishopMagicNumbers)
	}
}

// TestNoAllocs makes the zero-allocation promise a test, not only a
// benchmark column: move generation, counting and copy-make allocate
// nothing, and a whole perft allocates at most its stack, once.
func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	var ps []Position
	for _, f := range benchFENs {
		ps = append(ps, mustFEN(t, f))
	}
	var ml MoveList
	i := 0
	if a := testing.AllocsPerRun(1000, func() {
		ps[i%len(ps)].GenerateMoves(&ml)
		i++
	}); a != 0 {
		t.Errorf("GenerateMoves: %v allocs/op", a)
	}
	if a := testing.AllocsPerRun(1000, func() {
		sinkInt += ps[i%len(ps)].LegalMoveCount()
		i++
	}); a != 0 {
		t.Errorf("LegalMoveCount: %v allocs/op", a)
	}
	p := ps[1]
	moves := p.LegalMoves()
	if a := testing.AllocsPerRun(1000, func() {
		c := p
		c.MakeMove(moves[i%len(moves)])
		sinkPos = c
		i++
	}); a != 0 {
		t.Errorf("MakeMove: %v allocs/op", a)
	}
	if a := testing.AllocsPerRun(5, func() { sinkInt += int(Perft(&p, 3)) }); a > 1 {
		t.Errorf("Perft(3): %v allocs per call (97862 nodes), want at most 1", a)
	}
}

// TestMagicTables: for every square and every occupancy of its relevant
// squares, the magic lookup, slidingAttacks (which fills the tables) and
// a plain ray walk agree. Start-up fills the tables without checking that
// the magic numbers send no two occupancies with different attacks to one
// slot; this does.
func TestMagicTables(t *testing.T) {
	for _, c := range []struct {
		dirs   *[4][2]int
		lookup func(Square, Bitboard) Bitboard
	}{{&rookDirs, RookAttacks}, {&bishopDirs, BishopAttacks}} {
		for s := Square(0); s < 64; s++ {
			mask := relevantOccupancy(s, c.dirs)
			for b := Bitboard(0); ; {
				// Squares outside the mask (the edges) change nothing.
				occ := b | ^mask&0x8100000000000081
				want := walkAttacks(s, occ, c.dirs)
				if got := slidingAttacks(s, occ, c.dirs); got != want {
					t.Fatalf("slidingAttacks(%v, %016x) = %016x, want %016x", s, uint64(occ), uint64(got), uint64(want))
				}
				if got := c.lookup(s, occ); got != want {
					t.Fatalf("lookup(%v, %016x) = %016x, want %016x", s, uint64(occ), uint64(got), uint64(want))
				}
				b = (b - mask) & mask
				if b == 0 {
					break
				}
			}
		}
	}
}

// TestSlidingAttacks: the magic lookups equal a plain ray walk on random
// occupancies.
func TestSlidingAttacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	for i := 0; i < 20000; i++ {
		occ := Bitboard(rng.Uint64() & rng.Uint64())
		s := Square(rng.IntN(64))
		if got, want := RookAttacks(s, occ), walkAttacks(s, occ, &rookDirs); got != want {
			t.Fatalf("RookAttacks(%v, %016x) = %016x, want %016x", s, uint64(occ), uint64(got), uint64(want))
		}
		if got, want := BishopAttacks(s, occ), walkAttacks(s, occ, &bishopDirs); got != want {
			t.Fatalf("BishopAttacks(%v, %016x) = %016x, want %016x", s, uint64(occ), uint64(got), uint64(want))
		}
		if QueenAttacks(s, occ) != RookAttacks(s, occ)|BishopAttacks(s, occ) {
			t.Fatalf("QueenAttacks(%v) wrong", s)
		}
	}
}

// BenchmarkPerftPos5_5: single thread, no hash table; CPW position 5.
func BenchmarkPerftPos5_5(b *testing.B) {
	benchPerft(b, "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 5, 89941194)
}

// BenchmarkPerftPos6_5: single thread, no hash table; CPW position 6.
func BenchmarkPerftPos6_5(b *testing.B) {
	benchPerft(b, "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 5, 164075551)
}

// TestLines: lineBB and betweenBB as defined by ray walks.
func TestLines(t *testing.T) {
	for a := Square(0); a < 64; a++ {
		for b := Square(0); b < 64; b++ {
			var line, between Bitboard
			for _, dirs := range []*[4][2]int{&bishopDirs, &rookDirs} {
				if a != b && walkAttacks(a, 0, dirs).Has(b) {
					line = walkAttacks(a, 0, dirs)&walkAttacks(b, 0, dirs) | a.Bit() | b.Bit()
					between = walkAttacks(a, b.Bit(), dirs) & walkAttacks(b, a.Bit(), dirs)
				}
			}
			if lineBB[a][b] != line || betweenBB[a][b] != between {
				t.Fatalf("%v-%v: line %016x between %016x, want %016x %016x", a, b, uint64(lineBB[a][b]), uint64(betweenBB[a][b]), uint64(line), uint64(between))
			}
		}
	}
}

// TestMagicTableSizes: the tables hold exactly one slot per occupancy of
// each square's relevant squares.
func TestMagicTableSizes(t *testing.T) {
	for _, c := range []struct {
		dirs *[4][2]int
		size int
	}{{&rookDirs, len(rookTable)}, {&bishopDirs, len(bishopTable)}} {
		total := 0
		for s := Square(0); s < 64; s++ {
			total += 1 << relevantOccupancy(s, c.dirs).Count()
		}
		if total != c.size {
			t.Errorf("table of %d slots, want %d", c.size, total)
		}
	}
}
