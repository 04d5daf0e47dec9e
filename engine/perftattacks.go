package engine

// Rook attacks for the perft core from two small tables instead of the
// magic table. The magic table holds 102,400 attack sets (800 KB), whose
// loads can miss the first- and second-level caches. Which is faster
// depends on the function: measured with the arbiter binary (not a test
// binary, whose timings moved 15 % with changes that left the code
// identical), the perft2 and harmless lookups are faster here, the leaf
// count's lookups of its own rooks and queens with the magic table (see
// perft.go.tmpl). The rank and the file
// are looked up apart here, in 512 bytes and 4 KB that stay in the
// first-level cache: the rank by its six inner occupancy bits, the file by
// the kindergarten multiply that gathers the six inner squares of a file
// into the top six bits. TestPerftRookAttacks compares it with
// RookAttacks on every square and a million occupancies.

// firstRankAttacks[occ6*8+file] is the first rank's attacks of a rook on
// file, the rank's inner squares b..g occupied as the six bits of occ6.
var firstRankAttacks [64 * 8]uint8

// aFileAttacks[rank][k] is the a-file's attacks of a rook on rank, k the
// index the multiply by c2h7 gives the file's inner squares a2..a7.
var aFileAttacks [8][64]Bitboard

// c2h7 gathers a2..a7 (shifted to the a-file) into bits 58..63.
const c2h7 Bitboard = 0x0080402010080400

func init() {
	for occ6 := 0; occ6 < 64; occ6++ {
		for i := 0; i < 8; i++ {
			// The first rank: square i; occupancy on b1..g1.
			rankOcc := Bitboard(occ6) << 1
			firstRankAttacks[occ6*8+i] = uint8(slidingAttacks(Square(i), rankOcc, &rookDirs) & rank1)
			// The a-file: square a(i+1); occupancy on a2..a7 as a subset
			// of them, stored where the lookup's multiply files it.
			var fileOcc Bitboard
			for r := 0; r < 6; r++ {
				if occ6&(1<<r) != 0 {
					fileOcc |= Square(8 * (r + 1)).Bit()
				}
			}
			aFileAttacks[i][fileOcc*c2h7>>58] = slidingAttacks(Square(8*i), fileOcc, &rookDirs) & fileA
		}
	}
}

// perftRookAttacks is RookAttacks (the same result for every square and
// occupancy) from the small tables above.
func perftRookAttacks(s Square, occ Bitboard) Bitboard {
	file := uint(s) & 7
	rank8 := uint(s) & 56
	rankAtt := Bitboard(firstRankAttacks[((uint(occ>>rank8)&126)*4+file)&511]) << rank8
	fileOcc := (fileA & (occ >> file)) * c2h7 >> 58
	return rankAtt | aFileAttacks[rank8>>3&7][fileOcc&63]<<file
}

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
