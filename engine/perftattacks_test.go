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
