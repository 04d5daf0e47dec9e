package engine

// Attack tables. Sliding attacks use "fancy" magic bitboards whose magic
// numbers are found at start-up by a deterministic search (fixed seeds), so
// no table of magic numbers has to be trusted or maintained; the search and
// the fill take a few milliseconds (see BenchmarkInitAttacks).

var (
	knightAttacks [64]Bitboard
	kingAttacks   [64]Bitboard
	pawnAttacks   [2][64]Bitboard
	// betweenBB[a][b] is the set of squares strictly between a and b on a
	// line, or empty when they share no line.
	betweenBB [64][64]Bitboard
	// lineBB[a][b] is the full line through a and b (edge to edge), or empty.
	lineBB [64][64]Bitboard

	rookMagics   [64]magic
	bishopMagics [64]magic
	rookTable    []Bitboard
	bishopTable  []Bitboard
)

type magic struct {
	mask    Bitboard
	magic   uint64
	attacks []Bitboard
	shift   uint8
}

func (m *magic) index(occ Bitboard) uint64 {
	return (uint64(occ&m.mask) * m.magic) >> m.shift
}

// RookAttacks returns the squares a rook on s attacks given the occupancy.
func RookAttacks(s Square, occ Bitboard) Bitboard {
	m := &rookMagics[s]
	return m.attacks[(uint64(occ&m.mask)*m.magic)>>m.shift]
}

// BishopAttacks returns the squares a bishop on s attacks given the occupancy.
func BishopAttacks(s Square, occ Bitboard) Bitboard {
	m := &bishopMagics[s]
	return m.attacks[(uint64(occ&m.mask)*m.magic)>>m.shift]
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
	bishopDirs = [4][2]int{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}}
)

// slidingAttacks walks the rays from s until the first occupied square.
func slidingAttacks(s Square, occ Bitboard, dirs *[4][2]int) Bitboard {
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

// xorshift64star is the PRNG used for the magic search; fixed seeds make the
// tables identical on every start.
type xorshift64star uint64

func (x *xorshift64star) next() uint64 {
	*x ^= *x >> 12
	*x ^= *x << 25
	*x ^= *x >> 27
	return uint64(*x) * 2685821657736338717
}

// sparse returns a random number with few bits set: good magic candidates.
func (x *xorshift64star) sparse() uint64 { return x.next() & x.next() & x.next() }

func initMagics(magics *[64]magic, table *[]Bitboard, dirs *[4][2]int) {
	// Per-rank seeds chosen so the search converges quickly.
	seeds := [8]uint64{728, 10316, 55013, 32803, 12281, 15100, 16645, 255}
	var occupancy, reference [4096]Bitboard
	var epoch [4096]int
	cnt := 0
	total := 0
	for s := Square(0); s < 64; s++ {
		edges := ((rank1 | rank8) &^ rankMask(s)) | ((fileA | fileH) &^ fileMask(s))
		mask := slidingAttacks(s, 0, dirs) &^ edges
		total += 1 << mask.Count()
	}
	*table = make([]Bitboard, total)
	offset := 0
	for s := Square(0); s < 64; s++ {
		m := &magics[s]
		edges := ((rank1 | rank8) &^ rankMask(s)) | ((fileA | fileH) &^ fileMask(s))
		m.mask = slidingAttacks(s, 0, dirs) &^ edges
		bitsN := m.mask.Count()
		m.shift = uint8(64 - bitsN)
		size := 1 << bitsN
		m.attacks = (*table)[offset : offset+size]
		offset += size
		// Enumerate all subsets of the mask (Carry-Rippler).
		b := Bitboard(0)
		n := 0
		for {
			occupancy[n] = b
			reference[n] = slidingAttacks(s, b, dirs)
			n++
			b = (b - m.mask) & m.mask
			if b == 0 {
				break
			}
		}
		rng := xorshift64star(seeds[s.Rank()])
		for i := 0; i < n; {
			for {
				m.magic = rng.sparse()
				if Bitboard((uint64(m.mask)*m.magic)>>56).Count() >= 6 {
					break
				}
			}
			cnt++
			for i = 0; i < n; i++ {
				idx := m.index(occupancy[i])
				if epoch[idx] < cnt {
					epoch[idx] = cnt
					m.attacks[idx] = reference[i]
				} else if m.attacks[idx] != reference[i] {
					break
				}
			}
		}
	}
}

func rankMask(s Square) Bitboard { return rank1 << (8 * s.Rank()) }
func fileMask(s Square) Bitboard { return fileA << s.File() }

func init() {
	knightSteps := [][2]int{{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}}
	kingSteps := [][2]int{{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}}
	for s := Square(0); s < 64; s++ {
		knightAttacks[s] = stepAttacks(s, knightSteps)
		kingAttacks[s] = stepAttacks(s, kingSteps)
		pawnAttacks[White][s] = stepAttacks(s, [][2]int{{-1, 1}, {1, 1}})
		pawnAttacks[Black][s] = stepAttacks(s, [][2]int{{-1, -1}, {1, -1}})
	}
	initMagics(&rookMagics, &rookTable, &rookDirs)
	initMagics(&bishopMagics, &bishopTable, &bishopDirs)
	for a := Square(0); a < 64; a++ {
		for b := Square(0); b < 64; b++ {
			if a == b {
				continue
			}
			for _, att := range []func(Square, Bitboard) Bitboard{BishopAttacks, RookAttacks} {
				if att(a, 0).Has(b) {
					lineBB[a][b] = (att(a, 0) & att(b, 0)) | a.Bit() | b.Bit()
					betweenBB[a][b] = att(a, b.Bit()) & att(b, a.Bit())
				}
			}
		}
	}
}
