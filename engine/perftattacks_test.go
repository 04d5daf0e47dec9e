package engine

import (
	"math/rand/v2"
	"testing"
)

// TestKingReach checks the king-reach tables against their definition on
// every king square: a knight or slider on s can attack a square next to
// the king exactly when s is in the table (which is empty if it was
// filled before the attack tables were).
func TestKingReach(t *testing.T) {
	for k := Square(0); k < 64; k++ {
		for s := Square(0); s < 64; s++ {
			near := kingAttacks[k]
			for _, c := range []struct {
				name  string
				table *[64]Bitboard
				from  Bitboard
			}{
				{"knight", &kingReachN, knightAttacks[s]},
				{"diagonal", &kingReachDiag, bishopRays[s]},
				{"orthogonal", &kingReachOrth, rookRays[s]},
			} {
				if want := c.from&near != 0; c.table[k].Has(s) != want {
					t.Fatalf("king on %v, %s piece on %v: in the table %v, want %v", k, c.name, s, c.table[k].Has(s), want)
				}
			}
		}
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
