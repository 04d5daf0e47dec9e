package syzygy

import (
	"encoding/binary"

	"github.com/arbiter-chess/arbiter/engine"
)

// A table file is: a 4-byte magic, a flags byte, then for each sub-table
// (one for tables without pawns, one per leading-pawn file a-d otherwise)
// a header naming the pieces in the order the index uses; then each
// sub-table's compression header; for DTZ the value maps; then every
// sub-table's index, every block-size table, and the blocks (each
// sub-table's blocks starting on a 64-byte boundary).
//
// A WDL file whose flags have bit 0 set is "split": it holds two versions
// of each sub-table, White (as named) to move and Black to move, with
// their own piece orders. A DTZ file holds one side to move per sub-table
// (bit 0 of the sub-table's flags), and values for the other side are
// found by a one-ply search.

// DTZ sub-table flags.
const (
	dtzFlagBlackToMove = 1  // the side stored is Black (as named)
	dtzFlagMapped      = 2  // values go through the value maps
	dtzFlagWinPlies    = 4  // win values are in plies (else in moves)
	dtzFlagLossPlies   = 8  // loss values are in plies (else in moves)
	dtzFlagWideMap     = 16 // the maps hold uint16 values (else bytes)
)

// encInfo is how one sub-table numbers its positions.
type encInfo struct {
	pairs *pairsData
	// pieces lists the pieces (colour as named) in index order; pieces of
	// one kind are next to each other.
	pieces [maxTablePieces]engine.Piece
	// norm[i] is the size of the group of pieces starting at i (0 inside
	// a group), factor[i] the group's weight in the index.
	norm   [maxTablePieces]int
	factor [maxTablePieces]uint64
}

// dtzMap is one of a DTZ sub-table's value maps: count entries from byte
// first of the file.
type dtzMap struct {
	first, count int
	wide         bool
}

// tableFile is one parsed file.
type tableFile struct {
	path    string
	file    []byte
	release func() error
	// enc[side][sub]: side 0 is White (as named) to move, side 1 Black
	// (WDL split files only); sub is the leading pawn's file, or 0.
	enc      [2][4]*encInfo
	split    bool
	dtzFlags [4]byte
	dtzMaps  [4][4]dtzMap
}

// parseTable checks and indexes a mapped file; every region it records
// lies inside the file.
func parseTable(path string, file []byte, kind tableKind, e *tableEntry) (*tableFile, error) {
	t := &tableFile{path: path, file: file}
	if len(file) < 5 || binary.LittleEndian.Uint32(file) != kindMagic[kind] {
		return nil, corrupt(path, "does not start with the %s magic number", kindSuffix[kind])
	}
	t.split = kind == kindWDL && file[4]&1 != 0
	subTables := 1
	if e.hasPawns {
		subTables = 4
	}
	sides := 1
	if t.split {
		sides = 2
	}
	headerLen := e.num + 1
	if e.hasPawns && e.pawns[1] > 0 {
		headerLen++
	}
	off := 5
	var positions [2][4]uint64
	for sub := range subTables {
		if off+headerLen > len(file) {
			return nil, corrupt(path, "piece header at byte %d runs past the end", off)
		}
		for side := range sides {
			ei := &encInfo{}
			n, err := e.initEncInfo(path, ei, file[off:off+headerLen], uint(4*side), sub)
			if err != nil {
				return nil, err
			}
			t.enc[side][sub], positions[side][sub] = ei, n
		}
		off += headerLen
	}
	off += off & 1

	var sizes [2][4]regionSizes
	for sub := range subTables {
		for side := range sides {
			pd, sz, flags, err := setupPairs(path, file, &off, positions[side][sub], kind)
			if err != nil {
				return nil, err
			}
			t.enc[side][sub].pairs, sizes[side][sub] = pd, sz
			if kind == kindDTZ {
				t.dtzFlags[sub] = flags
			}
		}
	}
	if kind == kindDTZ {
		var err error
		if off, err = t.readDTZMaps(off, subTables); err != nil {
			return nil, err
		}
	}
	// The regions follow in this order: all indexes, all size tables, all
	// blocks.
	var regions [3][2][4][]byte
	for r := range 3 {
		for sub := range subTables {
			for side := range sides {
				if r == 2 {
					off = (off + 63) &^ 63
				}
				n := sizes[side][sub][r]
				if n > uint64(len(file)) || uint64(off) > uint64(len(file))-n {
					return nil, corrupt(path, "data of sub-table %d runs past the end (needs %d bytes from byte %d of %d)", sub, n, off, len(file))
				}
				regions[r][side][sub] = file[off : off+int(n)]
				if r == 2 {
					regions[r][side][sub] = file[off:] // a decoder may read a word past its block
				}
				off += int(n)
			}
		}
	}
	for sub := range subTables {
		for side := range sides {
			t.enc[side][sub].pairs.setRegions(regions[0][side][sub], regions[1][side][sub], regions[2][side][sub])
		}
	}
	return t, nil
}

// readDTZMaps reads the value maps of the sub-tables that use them.
func (t *tableFile) readDTZMaps(off, subTables int) (int, error) {
	mapStart := off
	file := t.file
	for sub := range subTables {
		flags := t.dtzFlags[sub]
		if flags&dtzFlagMapped == 0 {
			continue
		}
		wide := flags&dtzFlagWideMap != 0
		if wide {
			off += off & 1
		}
		for i := range 4 {
			var m dtzMap
			if wide {
				if off+2 > len(file) {
					return 0, corrupt(t.path, "value map at byte %d runs past the end", off)
				}
				m.count = int(binary.LittleEndian.Uint16(file[off:]))
				// The reference reader counts wide maps in 16-bit words
				// from the start of the maps; keep its rounding.
				m.first = mapStart + 2*((off-mapStart)/2+1)
				m.wide = true
				off += 2 + 2*m.count
			} else {
				if off+1 > len(file) {
					return 0, corrupt(t.path, "value map at byte %d runs past the end", off)
				}
				m.count = int(file[off])
				m.first = off + 1
				off += 1 + m.count
			}
			width := 1
			if wide {
				width = 2
			}
			if m.first+width*m.count > len(file) || off > len(file) {
				return 0, corrupt(t.path, "value map %d of sub-table %d runs past the end", i, sub)
			}
			t.dtzMaps[sub][i] = m
		}
	}
	return off + off&1, nil
}

// mappedDTZ looks v up in map i of sub-table sub.
func (t *tableFile) mappedDTZ(sub, i, v int) (int, error) {
	m := t.dtzMaps[sub][i]
	if v >= m.count {
		return 0, corrupt(t.path, "value %d is past value map %d of sub-table %d (%d entries)", v, i, sub, m.count)
	}
	if m.wide {
		return int(binary.LittleEndian.Uint16(t.file[m.first+2*v:])), nil
	}
	return int(t.file[m.first+v]), nil
}

// initEncInfo reads a sub-table's piece header (the low or high nibbles of
// header, by shift) and computes the index weights; it returns the number
// of positions the sub-table numbers.
func (e *tableEntry) initEncInfo(path string, ei *encInfo, header []byte, shift uint, sub int) (uint64, error) {
	morePawns := e.hasPawns && e.pawns[1] > 0
	first := 1
	if morePawns {
		first = 2
	}
	for i := range e.num {
		ei.pieces[i] = engine.Piece(header[i+first]>>shift) & 0xf
	}
	if err := e.checkPieceOrder(path, ei); err != nil {
		return 0, err
	}
	order := int(header[0]>>shift) & 0xf
	order2 := 0xf
	if morePawns {
		order2 = int(header[1]>>shift) & 0xf
	}
	k := 3
	switch {
	case e.hasPawns:
		k = e.pawns[0]
	case e.kkEncoding:
		k = 2
	}
	ei.norm[0] = k
	if morePawns {
		ei.norm[k] = e.pawns[1]
		k += e.pawns[1]
	}
	for i := k; i < e.num; i += ei.norm[i] {
		for j := i; j < e.num && ei.pieces[j] == ei.pieces[i]; j++ {
			ei.norm[i]++
		}
	}
	free := uint64(64 - k)
	f := uint64(1)
	leadingWeighted := false
	for i := 0; k < e.num || i == order || i == order2; i++ {
		switch {
		case i == order:
			ei.factor[0] = f
			switch {
			case e.hasPawns:
				f *= pawnFactorFile[ei.norm[0]-1][sub]
			case e.kkEncoding:
				f *= 462
			default:
				f *= 31332
			}
			leadingWeighted = true
		case i == order2:
			ei.factor[ei.norm[0]] = f
			f *= binomial(uint64(ei.norm[ei.norm[0]]), 48-uint64(ei.norm[0]))
		default:
			ei.factor[k] = f
			f *= binomial(uint64(ei.norm[k]), free)
			free -= uint64(ei.norm[k])
			k += ei.norm[k]
		}
	}
	if !leadingWeighted {
		return 0, corrupt(path, "piece header orders the leading group at %d, past the last group", order)
	}
	return f, nil
}

// checkPieceOrder checks that a header lists exactly the table's pieces,
// each kind in one run, led by the pawns the index expects: what makes
// filling squares from a position stay inside the piece array.
func (e *tableEntry) checkPieceOrder(path string, ei *encInfo) error {
	var seen material
	for i := range e.num {
		pc := ei.pieces[i]
		if pc.Type() < engine.Pawn || pc.Type() > engine.King {
			return corrupt(path, "piece header names piece code %d", pc)
		}
		if i > 0 && pc != ei.pieces[i-1] && seen[pc.Color()][pc.Type()] > 0 {
			return corrupt(path, "piece header lists %c in two places", pc.Letter())
		}
		seen[pc.Color()][pc.Type()]++
	}
	if seen != e.mat {
		return corrupt(path, "piece header does not list the pieces of %s", e.name)
	}
	if e.hasPawns {
		lead := ei.pieces[0]
		if lead.Type() != engine.Pawn || e.mat[lead.Color()][engine.Pawn] != e.pawns[0] {
			return corrupt(path, "piece header does not start with the leading pawns")
		}
		if e.pawns[1] > 0 && ei.pieces[e.pawns[0]] != engine.MakePiece(lead.Color().Other(), engine.Pawn) {
			return corrupt(path, "piece header does not list the other pawns after the leading ones")
		}
	}
	return nil
}
