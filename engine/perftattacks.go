package engine

// The perft core's rook lookups are the magic table's (RookAttacks). An
// earlier core looked rooks up in two small tables (the rank by its
// occupancy, the file by a kindergarten multiply: 4.5 KB against the magic
// table's 800 KB), chosen from test-binary timings; measured with the
// arbiter binary built for x86-64-v3, on a quiet machine and beside a
// second perft on the other core, the magic table is 1.5-5 % faster on
// each CPW position. (Test binaries' timings moved 15 % between builds
// whose machine code was identical: compare speeds with bin/arbiter,
// as make bench-perft does.)

// kingReachN[k], kingReachDiag[k] and kingReachOrth[k] are the squares
// from which a knight, a diagonal slider or an orthogonal slider could
// attack a square next to a king on k (on an empty board): the pieces
// worth a look when counting the king's moves. Filled by attacks.go's
// init, from the tables it fills.
var kingReachN, kingReachDiag, kingReachOrth [64]Bitboard

func fillKingReach() {
	for k := Square(0); k < 64; k++ {
		for t := kingAttacks[k]; t != 0; {
			s := popFirst(&t)
			kingReachN[k] |= knightAttacks[s]
			kingReachDiag[k] |= bishopRays[s]
			kingReachOrth[k] |= rookRays[s]
		}
	}
}
