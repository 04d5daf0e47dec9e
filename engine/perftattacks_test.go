package engine

import (
	"math/rand/v2"
	"testing"
)

// TestPerftRookAttacks compares perftRookAttacks with the magic lookup on
// every square: the empty and the full board, every occupancy of the
// square's own rank and file, and a million random occupancies (dense and
// sparse).
func TestPerftRookAttacks(t *testing.T) {
	check := func(s Square, occ Bitboard) {
		t.Helper()
		if got, want := perftRookAttacks(s, occ), RookAttacks(s, occ); got != want {
			t.Fatalf("square %v occupancy %#x: perftRookAttacks %#x, RookAttacks %#x", s, uint64(occ), uint64(got), uint64(want))
		}
	}
	for s := Square(0); s < 64; s++ {
		check(s, 0)
		check(s, ^Bitboard(0))
		lines := rookRays[s]
		// Every subset of the square's rank and file (at most 2^14).
		for sub := lines; ; sub = (sub - 1) & lines {
			check(s, sub)
			if sub == 0 {
				break
			}
		}
	}
	r := rand.New(rand.NewPCG(43, 1))
	for i := 0; i < 1_000_000; i++ {
		occ := Bitboard(r.Uint64())
		if i&1 == 0 {
			occ &= Bitboard(r.Uint64()) & Bitboard(r.Uint64())
		}
		check(Square(r.IntN(64)), occ)
	}
}

// TestPerftSpreads compares knightSpread and kingSpread with the union of
// the knight and king tables over the set's squares.
func TestPerftSpreads(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 2))
	for i := 0; i < 100_000; i++ {
		b := Bitboard(r.Uint64() & r.Uint64() & r.Uint64())
		if i < 64 {
			b = Square(i).Bit()
		}
		var knights, kings Bitboard
		for x := b; x != 0; {
			s := popFirst(&x)
			knights |= knightAttacks[s]
			kings |= kingAttacks[s]
		}
		if got := knightSpread(b); got != knights {
			t.Fatalf("knightSpread(%#x) = %#x, the table's union %#x", uint64(b), uint64(got), uint64(knights))
		}
		if got := kingSpread(b); got != kings {
			t.Fatalf("kingSpread(%#x) = %#x, the table's union %#x", uint64(b), uint64(got), uint64(kings))
		}
	}
}

// TestRayPast compares rayPast with walking the line square by square.
func TestRayPast(t *testing.T) {
	for s := Square(0); s < 64; s++ {
		for to := Square(0); to < 64; to++ {
			if s == to || lineBB[s][to] == 0 {
				continue
			}
			df, dr := sign(int(to.File())-int(s.File())), sign(int(to.Rank())-int(s.Rank()))
			var want Bitboard
			for f, r := int(to.File())+df, int(to.Rank())+dr; f >= 0 && f < 8 && r >= 0 && r < 8; f, r = f+df, r+dr {
				want |= MakeSquare(f, r).Bit()
			}
			if got := rayPast(s, to); got != want {
				t.Fatalf("rayPast(%v, %v) = %#x, want %#x", s, to, uint64(got), uint64(want))
			}
		}
	}
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
