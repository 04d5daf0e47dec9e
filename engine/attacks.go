package engine

import (
	"math/bits"
	"unsafe"
)

// Attack tables. Sliding attacks use "fancy" magic bitboards. The magic
// numbers are generated into magic_numbers.go by a deterministic search
// (go test ./engine -run TestGenerateMagics -update-magics), so start-up only
// fills the tables and needs no search.

var (
	knightAttacks [64]Bitboard
	kingAttacks   [64]Bitboard
	pawnAttacks   [2][64]Bitboard
	// betweenBB[a][b] is the set of squares strictly between a and b on a
	// line, or empty when they share no line.
	betweenBB [64][64]Bitboard
	// rookRays and bishopRays are the empty-board lines from a square.
	rookRays, bishopRays [64]Bitboard
	// lineBB[a][b] is the full line through a and b (edge to edge), or empty.
	lineBB [64][64]Bitboard

	rookMagics   [64]magic
	bishopMagics [64]magic
	// The attack tables, one slot per occupancy of each square's relevant
	// squares (the sums of 2^relevant over the squares, fixed by the
	// board): arrays rather than slices, so that start-up allocates none
	// of their 840 KB on the heap (and runs no collection for them).
	rookTable   [102400]Bitboard
	bishopTable [5248]Bitboard
)

// magic is one square's lookup, 32 bytes so that a slider's 64 fit in 2 KB
// of cache and indexing is a shift.
type magic struct {
	mask  Bitboard
	magic uint64
	// table is the square's slice of the attack table, so the lookup needs
	// no bounds check: the index (occ&mask)*magic>>shift is below its
	// length by construction (shift = 64 - popcount(mask)), and fillMagics
	// writes every slot.
	table unsafe.Pointer
	// shift is below 64; the lookups mask it with 63 all the same, which
	// spares the compiler's guard for shifts of 64 or more.
	shift uint64
}

func (m *magic) index(occ Bitboard) uint64 {
	return (uint64(occ&m.mask) * m.magic) >> (m.shift & 63)
}

// RookAttacks returns the squares a rook on s attacks given the occupancy.
func RookAttacks(s Square, occ Bitboard) Bitboard {
	m := &rookMagics[s&63]
	return *(*Bitboard)(unsafe.Add(m.table, (uint64(occ&m.mask)*m.magic)>>(m.shift&63)*8))
}

// BishopAttacks returns the squares a bishop on s attacks given the occupancy.
func BishopAttacks(s Square, occ Bitboard) Bitboard {
	m := &bishopMagics[s&63]
	return *(*Bitboard)(unsafe.Add(m.table, (uint64(occ&m.mask)*m.magic)>>(m.shift&63)*8))
}

// QueenAttacks returns the squares a queen on s attacks given the occupancy.
func QueenAttacks(s Square, occ Bitboard) Bitboard {
	return RookAttacks(s, occ) | BishopAttacks(s, occ)
}

// KnightAttacks returns the knight moves from s.
func KnightAttacks(s Square) Bitboard { return knightAttacks[s] }

// KingAttacks returns the king moves from s.
func KingAttacks(s Square) Bitboard { return kingAttacks[s] }

// PawnAttacks returns the squares a pawn of colour c on s attacks.
func PawnAttacks(c Color, s Square) Bitboard { return pawnAttacks[c][s] }

var (
	rookDirs   = [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}}
	bishopDirs = [4][2]int{{1, 1}, {-1, -1}, {1, -1}, {-1, 1}}
)

// dirRays[i][s] is the empty-board ray from s in direction i: rookDirs'
// four, then bishopDirs'. Filled first at start-up, so that the tables
// below are built with a few operations per entry rather than a walk.
var dirRays [8][64]Bitboard

// slidingAttacks returns the squares a slider moving along dirs (rookDirs
// or bishopDirs) attacks from s: each ray up to its first occupied square.
func slidingAttacks(s Square, occ Bitboard, dirs *[4][2]int) Bitboard {
	base := 0
	if dirs == &bishopDirs {
		base = 4
	}
	var att Bitboard
	for i, d := range dirs {
		ray := dirRays[base+i][s&63]
		blockers := ray & occ
		if blockers == 0 {
			att |= ray
			continue
		}
		// The first blocker is the nearest one: the lowest square on a ray
		// whose squares grow, the highest on one whose squares shrink.
		first := blockers.First()
		if d[0]+8*d[1] < 0 {
			first = Square(63 - bits.LeadingZeros64(uint64(blockers)))
		}
		att |= ray &^ dirRays[base+i][first&63]
	}
	return att
}

// walkAttacks is slidingAttacks by walking each ray square by square: the
// definition the tables are filled from and tested against.
func walkAttacks(s Square, occ Bitboard, dirs *[4][2]int) Bitboard {
	var att Bitboard
	for _, d := range dirs {
		f, r := s.File()+d[0], s.Rank()+d[1]
		for f >= 0 && f < 8 && r >= 0 && r < 8 {
			sq := MakeSquare(f, r)
			att |= sq.Bit()
			if occ.Has(sq) {
				break
			}
			f, r = f+d[0], r+d[1]
		}
	}
	return att
}

func stepAttacks(s Square, steps [][2]int) Bitboard {
	var att Bitboard
	for _, d := range steps {
		f, r := s.File()+d[0], s.Rank()+d[1]
		if f >= 0 && f < 8 && r >= 0 && r < 8 {
			att |= MakeSquare(f, r).Bit()
		}
	}
	return att
}

// fillMagics builds the attack tables of one slider from its magic
// numbers (magic_numbers.go, found by TestGenerateMagics) into table, which
// has exactly the slots needed (TestMagicTableSizes). A magic that mapped
// two occupancies with different attacks to one slot would make a wrong
// table: TestMagicTables checks every slot, so start-up does not.
func fillMagics(magics *[64]magic, table []Bitboard, dirs *[4][2]int, numbers *[64]uint64) {
	base := 0 // dirRays' index of dirs[0]
	if dirs == &bishopDirs {
		base = 4
	}
	offset := 0
	for s := Square(0); s < 64; s++ {
		m := &magics[s]
		m.mask = relevantOccupancy(s, dirs)
		m.magic = numbers[s]
		m.shift = uint64(64 - m.mask.Count())
		size := 1 << m.mask.Count()
		attacks := table[offset : offset+size]
		m.table = unsafe.Pointer(&attacks[0])
		offset += size
		// Every subset of the mask, as a subset of the squares on one pair
		// of opposite directions (i and i^1) joined with one on the other
		// pair: the attacks are the two pairs' attacks joined, so each
		// pair's are computed once per subset of its own (at most 64)
		// and a slot costs an OR and a multiply (five times faster than
		// computing each slot's attacks). The magic numbers index no two
		// subsets with different attacks to one slot: TestMagicTables
		// checks every slot.
		var subA, attA, subB, attB [64]Bitboard
		raysA := dirRays[base][s] | dirRays[base+1][s]
		nA := pairSubsets(s, m.mask&raysA, raysA, dirs, &subA, &attA)
		nB := pairSubsets(s, m.mask&^raysA, ^raysA, dirs, &subB, &attB)
		for i := range nA {
			for j := range nB {
				attacks[m.index(subA[i]|subB[j])] = attA[i] | attB[j]
			}
		}
	}
}

// pairSubsets writes every subset of mask (the relevant squares on one
// pair of opposite directions) to sub, and to att the attacks along rays
// (that pair's rays) of a slider on s with that occupancy; it returns
// their number, at most 64 (six relevant squares on a line).
func pairSubsets(s Square, mask, rays Bitboard, dirs *[4][2]int, sub, att *[64]Bitboard) int {
	n := 0
	for b := Bitboard(0); ; {
		sub[n&63], att[n&63] = b, slidingAttacks(s, b, dirs)&rays
		n++
		b = (b - mask) & mask
		if b == 0 {
			return n
		}
	}
}

// relevantOccupancy is the set of squares whose occupancy can change a
// slider's attacks from s: its empty-board rays without the board's edge.
func relevantOccupancy(s Square, dirs *[4][2]int) Bitboard {
	edges := ((rank1 | rank8) &^ rankMask(s)) | ((fileA | fileH) &^ fileMask(s))
	return slidingAttacks(s, 0, dirs) &^ edges
}

func rankMask(s Square) Bitboard { return rank1 << (8 * s.Rank()) }
func fileMask(s Square) Bitboard { return fileA << s.File() }

func init() {
	for i := range 8 {
		dirs := &rookDirs
		if i >= 4 {
			dirs = &bishopDirs
		}
		d := dirs[i%4]
		for s := Square(0); s < 64; s++ {
			for f, r := s.File()+d[0], s.Rank()+d[1]; f >= 0 && f < 8 && r >= 0 && r < 8; f, r = f+d[0], r+d[1] {
				dirRays[i][s] |= MakeSquare(f, r).Bit()
			}
		}
	}
	knightSteps := [][2]int{{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}}
	kingSteps := [][2]int{{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}}
	for s := Square(0); s < 64; s++ {
		knightAttacks[s] = stepAttacks(s, knightSteps)
		kingAttacks[s] = stepAttacks(s, kingSteps)
		pawnAttacks[White][s] = stepAttacks(s, [][2]int{{-1, 1}, {1, 1}})
		pawnAttacks[Black][s] = stepAttacks(s, [][2]int{{-1, -1}, {1, -1}})
		rookRays[s] = slidingAttacks(s, 0, &rookDirs)
		bishopRays[s] = slidingAttacks(s, 0, &bishopDirs)
	}
	fillMagics(&rookMagics, rookTable[:], &rookDirs, &rookMagicNumbers)
	fillMagics(&bishopMagics, bishopTable[:], &bishopDirs, &bishopMagicNumbers)
	// Directions i and i^1 are opposite (rookDirs and bishopDirs list them
	// in pairs): a line is both rays and the square itself.
	for a := Square(0); a < 64; a++ {
		for i := range 8 {
			line := dirRays[i][a] | dirRays[i^1][a] | a.Bit()
			for x := dirRays[i][a]; x != 0; {
				b := popFirst(&x) & 63
				lineBB[a][b] = line
				betweenBB[a][b] = dirRays[i][a] &^ dirRays[i][b] &^ b.Bit()
			}
		}
	}
	fillKingReach()
}
