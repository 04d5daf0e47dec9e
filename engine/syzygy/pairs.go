package syzygy

import "encoding/binary"

// A sub-table's values are compressed with a dictionary of symbol pairs
// (every symbol is a single value or a pair of two earlier symbols) and the
// symbols are coded with a canonical Huffman code in blocks of 2^blockSize
// bytes. An index every 2^idxBits positions names a block and where in it
// to start counting, and a table of block sizes (in values, minus one) lets
// the decoder walk to the block that holds a position.

// Limits the format never exceeds; larger values in a file mean damage.
const (
	maxSymbols   = 4096 // symbol numbers are 12 bits
	maxSymbolLen = 255  // values one symbol expands to, minus one (a byte in the reference reader)
	maxIdxBits   = 40
	maxBlockBits = 31
)

// pairsData is one compressed sub-table.
type pairsData struct {
	path string
	// constant is set when every position has the same value (no data).
	constant   bool
	constValue [2]byte

	idxBits   uint
	blockSize uint
	minLen    int
	numBlocks uint32 // entries of sizeTable (real blocks plus padding)
	// realBlocks is the number of blocks with data.
	realBlocks uint32

	offsets    []byte   // uint16 LE per code length minLen..maxLen: first symbol of that length
	base       []uint64 // per code length: the smallest code of that length, left-aligned in 64 bits
	symPattern []byte   // 3 bytes per symbol: a value, or two 12-bit symbol numbers
	symLen     []uint8  // per symbol: values it expands to, minus one

	indexTable []byte // 6 bytes per index entry: block (uint32) and offset (uint16)
	sizeTable  []byte // uint16 per block
	data       []byte // from the first block to the end of the file
}

// regionSizes are the byte sizes of a sub-table's index, size table and
// block data, laid out later in the file.
type regionSizes [3]uint64

// setupPairs reads a sub-table's header at *off, which it advances. size is
// the number of positions of the sub-table.
func setupPairs(path string, file []byte, off *int, size uint64, kind tableKind) (*pairsData, regionSizes, byte, error) {
	var sizes regionSizes
	d := &pairsData{path: path}
	at := *off
	if at+2 > len(file) {
		return nil, sizes, 0, corrupt(path, "sub-table header at byte %d runs past the end", at)
	}
	flags := file[at]
	if flags&0x80 != 0 {
		d.constant = true
		if kind == kindWDL {
			d.constValue[0] = file[at+1]
		}
		*off = at + 2
		return d, sizes, flags, nil
	}
	if at+12 > len(file) {
		return nil, sizes, 0, corrupt(path, "sub-table header at byte %d runs past the end", at)
	}
	d.blockSize = uint(file[at+1])
	d.idxBits = uint(file[at+2])
	d.realBlocks = binary.LittleEndian.Uint32(file[at+4:])
	d.numBlocks = d.realBlocks + uint32(file[at+3])
	maxLen, minLen := int(file[at+8]), int(file[at+9])
	switch {
	case d.idxBits < 1 || d.idxBits > maxIdxBits:
		return nil, sizes, 0, corrupt(path, "index step 2^%d at byte %d is out of range", d.idxBits, at)
	case d.blockSize > maxBlockBits:
		return nil, sizes, 0, corrupt(path, "block size 2^%d at byte %d is out of range", d.blockSize, at)
	case d.numBlocks < d.realBlocks:
		return nil, sizes, 0, corrupt(path, "block count at byte %d overflows", at)
	case minLen < 1 || maxLen < minLen || maxLen > 64:
		return nil, sizes, 0, corrupt(path, "code lengths %d..%d at byte %d are out of range", minLen, maxLen, at)
	}
	d.minLen = minLen
	h := maxLen - minLen + 1
	if at+12+2*h > len(file) {
		return nil, sizes, 0, corrupt(path, "code table at byte %d runs past the end", at)
	}
	d.offsets = file[at+10 : at+10+2*h]
	numSyms := int(binary.LittleEndian.Uint16(file[at+10+2*h:]))
	if numSyms == 0 || numSyms >= maxSymbols {
		return nil, sizes, 0, corrupt(path, "%d symbols at byte %d (want 1..%d)", numSyms, at, maxSymbols-1)
	}
	patStart := at + 12 + 2*h
	next := patStart + 3*numSyms + numSyms&1
	if next > len(file) {
		return nil, sizes, 0, corrupt(path, "symbol table at byte %d runs past the end", patStart)
	}
	d.symPattern = file[patStart : patStart+3*numSyms]
	if err := d.computeSymbolLengths(numSyms); err != nil {
		return nil, sizes, 0, err
	}
	d.base = make([]uint64, h)
	for i := h - 2; i >= 0; i-- {
		d.base[i] = (d.base[i+1] + uint64(d.offset(i)) - uint64(d.offset(i+1))) / 2
	}
	for i := range d.base {
		d.base[i] <<= uint(64 - (minLen + i))
	}
	*off = next

	indices := (size + 1<<d.idxBits - 1) >> d.idxBits
	sizes = regionSizes{6 * indices, 2 * uint64(d.numBlocks), uint64(d.realBlocks) << d.blockSize}
	return d, sizes, flags, nil
}

// offset is the first symbol of the i-th code length (counted from minLen).
func (d *pairsData) offset(i int) uint16 { return binary.LittleEndian.Uint16(d.offsets[2*i:]) }

// computeSymbolLengths expands the pair dictionary, refusing references to
// missing symbols and cycles (a symbol built from itself).
func (d *pairsData) computeSymbolLengths(numSyms int) error {
	d.symLen = make([]uint8, numSyms)
	const (
		unvisited = iota
		inProgress
		done
	)
	state := make([]uint8, numSyms)
	var visit func(s int) error
	visit = func(s int) error {
		switch state[s] {
		case done:
			return nil
		case inProgress:
			return corrupt(d.path, "symbol %d is built from itself", s)
		}
		state[s] = inProgress
		left, right := d.pair(s)
		if right != 0xfff {
			if left >= numSyms || right >= numSyms {
				return corrupt(d.path, "symbol %d refers to symbol %d or %d of %d", s, left, right, numSyms)
			}
			if err := visit(left); err != nil {
				return err
			}
			if err := visit(right); err != nil {
				return err
			}
			n := int(d.symLen[left]) + int(d.symLen[right]) + 1
			if n > maxSymbolLen {
				return corrupt(d.path, "symbol %d expands to more than %d values", s, maxSymbolLen+1)
			}
			d.symLen[s] = uint8(n)
		}
		state[s] = done
		return nil
	}
	for s := range numSyms {
		if err := visit(s); err != nil {
			return err
		}
	}
	return nil
}

// pair returns the two symbols symbol s is made of; right is 0xfff for a
// symbol that is a single value.
func (d *pairsData) pair(s int) (left, right int) {
	w := d.symPattern[3*s : 3*s+3]
	return int(w[1]&0xf)<<8 | int(w[0]), int(w[2])<<4 | int(w[1]>>4)
}

// setRegions points the sub-table at its index, size table and data.
func (d *pairsData) setRegions(index, sizeTable, data []byte) {
	d.indexTable, d.sizeTable, d.data = index, sizeTable, data
}

// value returns the first two bytes of the value of position idx.
func (d *pairsData) value(idx uint64) (byte, byte, error) {
	if d.constant {
		return d.constValue[0], d.constValue[1], nil
	}
	sym, err := d.symbolAt(idx)
	if err != nil {
		return 0, 0, err
	}
	w := d.symPattern[3*sym:]
	return w[0], w[1], nil
}

// symbolAt finds the single-value symbol that holds position idx.
func (d *pairsData) symbolAt(idx uint64) (int, error) {
	mainIdx := idx >> d.idxBits
	if mainIdx >= uint64(len(d.indexTable))/6 {
		return 0, corrupt(d.path, "position %d is past the index", idx)
	}
	entry := d.indexTable[6*mainIdx:]
	block := uint64(binary.LittleEndian.Uint32(entry))
	litIdx := int64(idx&(1<<d.idxBits-1)) - int64(1)<<(d.idxBits-1) + int64(binary.LittleEndian.Uint16(entry[4:]))
	numBlocks := uint64(len(d.sizeTable) / 2)
	blockValues := func(b uint64) (int64, error) {
		if b >= numBlocks {
			return 0, corrupt(d.path, "block %d is past the %d blocks", b, numBlocks)
		}
		return int64(binary.LittleEndian.Uint16(d.sizeTable[2*b:])) + 1, nil
	}
	for litIdx < 0 {
		if block == 0 {
			return 0, corrupt(d.path, "position %d is before the first block", idx)
		}
		block--
		n, err := blockValues(block)
		if err != nil {
			return 0, err
		}
		litIdx += n
	}
	for {
		n, err := blockValues(block)
		if err != nil {
			return 0, err
		}
		if litIdx < n {
			break
		}
		litIdx -= n
		block++
	}
	if block >= uint64(d.realBlocks) {
		return 0, corrupt(d.path, "block %d holds no data", block)
	}
	sym, litIdx, err := d.decodeBlock(block, litIdx)
	if err != nil {
		return 0, err
	}
	// Descend the pair tree to the single value at litIdx.
	for d.symLen[sym] != 0 {
		left, right := d.pair(sym)
		if litIdx < int64(d.symLen[left])+1 {
			sym = left
		} else {
			litIdx -= int64(d.symLen[left]) + 1
			sym = right
		}
	}
	return sym, nil
}

// decodeBlock reads Huffman codes from the start of block until the symbol
// that covers value litIdx of the block, and returns it with litIdx made
// relative to that symbol.
func (d *pairsData) decodeBlock(block uint64, litIdx int64) (int, int64, error) {
	pos := block << d.blockSize
	if pos+8 > uint64(len(d.data)) {
		return 0, 0, corrupt(d.path, "block %d runs past the end", block)
	}
	code := binary.BigEndian.Uint64(d.data[pos:])
	pos += 8
	bits := 0 // bits consumed from the low half of code
	last := len(d.base) - 1
	for {
		l := 0
		for l < last && code < d.base[l] {
			l++
		}
		length := d.minLen + l
		wide := uint64(d.offset(l)) + (code-d.base[l])>>(64-uint(length))
		if wide >= uint64(len(d.symLen)) {
			return 0, 0, corrupt(d.path, "code in block %d decodes to symbol %d of %d", block, wide, len(d.symLen))
		}
		sym := int(wide)
		n := int64(d.symLen[sym]) + 1
		if litIdx < n {
			return sym, litIdx, nil
		}
		litIdx -= n
		code <<= uint(length)
		bits += length
		if bits >= 32 {
			bits -= 32
			if pos+4 > uint64(len(d.data)) {
				return 0, 0, corrupt(d.path, "block %d runs past the end", block)
			}
			code |= uint64(binary.BigEndian.Uint32(d.data[pos:])) << uint(bits)
			pos += 4
		}
	}
}
