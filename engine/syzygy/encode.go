package syzygy

import "github.com/arbiter-chess/arbiter/engine"

// The index of a position: the leading group (three pieces, or the two
// kings, folded into the a1-d1-d4 triangle by the board's symmetries; or
// the leading pawns with the first on files a-d), then each further group
// of like pieces as a combination of the squares still free.

var (
	// binomialTable[k][n] is n choose k.
	binomialTable [maxTablePieces][64]uint64
	// pawnIndex[k-1][f] is where the leading-pawn placements of k pawns
	// whose first pawn has pawnFlap f start, within its file's sub-table.
	pawnIndex [maxTablePieces - 1][24]uint64
	// pawnFactorFile[k-1][file] counts the placements of k leading pawns
	// whose first pawn is on file (a-d).
	pawnFactorFile [maxTablePieces - 1][4]uint64
)

func init() {
	for k := range maxTablePieces {
		for n := range 64 {
			binomialTable[k][n] = binomial(uint64(k), uint64(n))
		}
	}
	for k := range maxTablePieces - 1 {
		var sum uint64
		for j := range 24 {
			pawnIndex[k][j] = sum
			sum += binomialTable[k][pawnTwist[(1+j%6)*8+j/6]]
			if (j+1)%6 == 0 {
				pawnFactorFile[k][j/6] = sum
				sum = 0
			}
		}
	}
}

// binomial is n choose k (0 when k > n).
func binomial(k, n uint64) uint64 {
	if k > n {
		return 0
	}
	r := uint64(1)
	for i := uint64(0); i < k; i++ {
		r = r * (n - i) / (i + 1)
	}
	return r
}

// fileToSubTable maps a file to the pawn sub-table (files mirrored to a-d).
var fileToSubTable = [8]int{0, 1, 2, 3, 3, 2, 1, 0}

// fillSquares writes the squares of pos's pieces of kind pc (colour as the
// table names it, swapped when flip) into p from i, each xor mirror, and
// returns the next free place.
func fillSquares(path string, pos *engine.Position, pc engine.Piece, flip bool, mirror int, p *[maxTablePieces]int, i, n int) (int, error) {
	c := pc.Color()
	if flip {
		c = c.Other()
	}
	bb := pos.Pieces(c, pc.Type())
	if bb == 0 {
		return 0, corrupt(path, "piece header lists %c, which the position lacks", pc.Letter())
	}
	for ; bb != 0; bb &= bb - 1 {
		if i >= n {
			return 0, corrupt(path, "piece header lists fewer pieces than the position has")
		}
		p[i] = int(bb.First()) ^ mirror
		i++
	}
	return i, nil
}

// leadingPawnSubTable puts the leading pawn (the one the pawn order puts
// first) in p[0] and returns the sub-table of its file.
func leadingPawnSubTable(p *[maxTablePieces]int, leading int) int {
	for i := 1; i < leading; i++ {
		if pawnFlap[p[0]] > pawnFlap[p[i]] {
			p[0], p[i] = p[i], p[0]
		}
	}
	return fileToSubTable[p[0]&7]
}

// index numbers the position whose squares, in ei.pieces order, are p.
// ok is false for a placement the scheme has no number for (adjacent
// kings), which a legal position with a sound header never has.
func (e *tableEntry) index(p *[maxTablePieces]int, ei *encInfo) (idx uint64, ok bool) {
	n := e.num
	if p[0]&4 != 0 { // mirror files so the first piece is on a-d
		for i := range n {
			p[i] ^= 7
		}
	}
	var k int
	if !e.hasPawns {
		idx, k, ok = e.leadingPiecesIndex(p)
		if !ok {
			return 0, false
		}
	} else {
		idx, k = e.leadingPawnsIndex(p)
	}
	idx *= ei.factor[0]
	if e.hasPawns && e.pawns[1] > 0 {
		t := k + e.pawns[1]
		idx += groupIndex(p, k, t, 8) * ei.factor[k]
		k = t
	}
	for k < n {
		t := k + ei.norm[k]
		idx += groupIndex(p, k, t, 0) * ei.factor[k]
		k = t
	}
	return idx, true
}

// leadingPiecesIndex numbers the leading group of a table without pawns
// after folding the board so the first piece is in the a1-d1-d4 triangle.
func (e *tableEntry) leadingPiecesIndex(p *[maxTablePieces]int) (uint64, int, bool) {
	n := e.num
	if p[0]&0x20 != 0 { // mirror ranks
		for i := range n {
			p[i] ^= 0x38
		}
	}
	lead := 3
	if e.kkEncoding {
		lead = 2
	}
	// Mirror in the a1-h8 diagonal when the first leading piece off it is
	// above it.
	for i := range n {
		if offDiag[p[i]] != 0 {
			if offDiag[p[i]] > 0 && i < lead {
				for j := range n {
					p[j] = int(flipDiag[p[j]])
				}
			}
			break
		}
	}
	if e.kkEncoding {
		v := kkIndex[triangle[p[0]]][p[1]]
		return uint64(v), 2, v >= 0
	}
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	s1 := b(p[1] > p[0])
	s2 := b(p[2] > p[0]) + b(p[2] > p[1])
	var idx int
	switch {
	case offDiag[p[0]] != 0:
		idx = int(triangle[p[0]])*63*62 + (p[1]-s1)*62 + (p[2] - s2)
	case offDiag[p[1]] != 0:
		idx = 6*63*62 + int(diag[p[0]])*28*62 + int(lower[p[1]])*62 + p[2] - s2
	case offDiag[p[2]] != 0:
		idx = 6*63*62 + 4*28*62 + int(diag[p[0]])*7*28 + (int(diag[p[1]])-s1)*28 + int(lower[p[2]])
	default:
		idx = 6*63*62 + 4*28*62 + 4*7*28 + int(diag[p[0]])*7*6 + (int(diag[p[1]])-s1)*6 + (int(diag[p[2]]) - s2)
	}
	return uint64(idx), 3, idx >= 0
}

// leadingPawnsIndex numbers the leading pawns (p[0] already the leading
// one, on files a-d).
func (e *tableEntry) leadingPawnsIndex(p *[maxTablePieces]int) (uint64, int) {
	k := e.pawns[0]
	for i := 1; i < k; i++ {
		for j := i + 1; j < k; j++ {
			if pawnTwist[p[i]] < pawnTwist[p[j]] {
				p[i], p[j] = p[j], p[i]
			}
		}
	}
	idx := pawnIndex[k-1][pawnFlap[p[0]]]
	for i := 1; i < k; i++ {
		idx += binomialTable[k-i][pawnTwist[p[i]]]
	}
	return idx, k
}

// groupIndex numbers the squares p[from:to] of like pieces as a
// combination of the squares not taken by p[:from], the lowest `skip`
// squares excluded (8 for pawns: rank 1 cannot hold one).
func groupIndex(p *[maxTablePieces]int, from, to, skip int) uint64 {
	for i := from; i < to; i++ {
		for j := i + 1; j < to; j++ {
			if p[i] > p[j] {
				p[i], p[j] = p[j], p[i]
			}
		}
	}
	var s uint64
	for i := from; i < to; i++ {
		sq := p[i]
		skips := 0
		for j := range from {
			if sq > p[j] {
				skips++
			}
		}
		s += binomialTable[i-from+1][sq-skips-skip]
	}
	return s
}
