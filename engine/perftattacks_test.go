package engine

import "testing"

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
