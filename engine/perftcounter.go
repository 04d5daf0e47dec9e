package engine

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
)

// PerftSlice restricts a count to one slice of a position's tree, so that
// workers with their own hash tables can share one position's work without
// computing the same subtrees twice.
//
// The positions Ply plies below the root (the key positions) are dealt into
// Of slices by a hash of the placement of the side that has just moved
// there (not to move); slice Index counts the leaves below the key
// positions of that slice, and the Of slices of a position add up to its
// perft. Why the placement of the side not to move: a position one ply
// below a key position is reached only from key positions with that same
// placement (unless the move captured), so with the key positions three
// plies above the leaves every subtree a table would share (depth 3 and
// depth 2) falls into one slice: a worker that computes one slice for many
// positions keeps every transposition of that slice in its own table, and
// two workers on two slices compute nothing twice below the key ply. Above
// it, each slice walks the tree itself (a small part of the work when the
// key ply is deep).
//
// The deal is part of the wire protocol (PerftSliceVersion): every worker
// that computes a slice of one position must deal the same way, or the
// slices would not add up.
type PerftSlice struct {
	Of    int // slices in all; 0 or 1 counts the whole tree
	Index int // the slice counted, 0 <= Index < Of
	Ply   int // the key ply, 1 <= Ply < depth
}

// PerftSliceVersion names the deal of PerftSlice; workers advertise it and
// the coordinator sends slices only to workers that have it.
const PerftSliceVersion = 1

// MaxPerftSlices bounds PerftSlice.Of.
const MaxPerftSlices = 1024

// sliced reports whether s restricts the count at all.
func (s PerftSlice) sliced() bool { return s.Of > 1 }

// Check tells whether s is a valid slice of a perft to depth.
func (s PerftSlice) Check(depth int) error {
	if s.Of <= 1 {
		if s.Index != 0 || s.Of < 0 {
			return fmt.Errorf("slice %d of %d: no slice other than 0 of a whole tree", s.Index, s.Of)
		}
		return nil
	}
	if s.Of > MaxPerftSlices {
		return fmt.Errorf("%d slices: at most %d", s.Of, MaxPerftSlices)
	}
	if s.Index < 0 || s.Index >= s.Of {
		return fmt.Errorf("slice %d of %d: out of range", s.Index, s.Of)
	}
	if s.Ply < 1 || s.Ply >= depth {
		return fmt.Errorf("slice ply %d: must be between 1 and %d for depth %d", s.Ply, depth-1, depth)
	}
	return nil
}

// Fixed keys of the deal (not the table's random ones: every process must
// deal alike).
const (
	sliceK0 = 0xa0761d6478bd642f
	sliceK1 = 0xe7037ed1a0b428db
	sliceK2 = 0x8ebc6af09c88c6e3
	sliceK3 = 0x589965cc75374cc3
)

// sliceKey hashes the placement of the side not to move in b.
func (b *perftBoard) sliceKey() uint64 {
	them := b.colors[b.side^1]
	h := mum(uint64(b.pieces[Pawn]&them)^sliceK0, uint64(b.pieces[Knight]&them)^sliceK1)
	h = mum(uint64(b.pieces[Bishop]&them)^sliceK2^h, uint64(b.pieces[Rook]&them)^sliceK3)
	h = mum(uint64(b.pieces[Queen]&them)^sliceK0^h, uint64(b.pieces[King]&them)^sliceK1)
	return mum(h^sliceK2, sliceK3)
}

// sliceOf returns the slice of b among of: the high word of key × of, so
// that every slice gets an equal share of keys.
func sliceOf(b *perftBoard, of int) int {
	hi, _ := bits.Mul64(b.sliceKey(), uint64(of))
	return int(hi)
}

// setSlice makes c count slice s of perfts to depth. The salts keep the
// restricted counts of the plies above the key ply apart from whole counts
// and from other slices' in a shared table: they are odd multiples of a
// number made of (Of, Index, key depth), so distinct slices get distinct
// salts and no slice gets zero.
func (c *perftCore) setSlice(s PerftSlice, depth int) {
	c.slice = s
	c.salt1, c.salt2 = 0, 0
	if s.sliced() {
		id := uint64(s.Of)<<40 | uint64(s.Index)<<16 | uint64(depth-s.Ply)
		c.salt1, c.salt2 = id*sliceK0, id*sliceK2
	}
}

// toKey returns the plies from the root to the key ply, or -1 without a
// slice (never reached: the recursion counts it down past zero).
func (c *perftCore) toKey() int {
	if c.slice.sliced() {
		return c.slice.Ply
	}
	return -1
}

// sliced counts the leaves depth plies below b (at ply) that lie in c's
// slice; toKey is the plies from b down to the key ply.
func (c *perftCore) sliced(b *perftBoard, depth, ply, toKey int) uint64 {
	switch {
	case toKey < 0:
		return c.perftAt(b, depth, ply)
	case toKey == 0:
		if sliceOf(b, c.slice.Of) != c.slice.Index {
			return 0
		}
		return c.perftAt(b, depth, ply)
	}
	// Above the key ply (depth >= 2, as the key ply is above the leaves):
	// the restricted count is cached under the salted hash.
	var h1, h2 uint64
	if c.table != nil {
		h1, h2 = c.table.hash(b)
		h1, h2 = h1^c.salt1, h2^c.salt2
		c.stats.Probes++
		if n, ok := c.table.probe(h1, h2, depth); ok {
			c.stats.Hits++
			return n
		}
	}
	ml := &c.lists[ply]
	c.gen(b, ml)
	var n uint64
	var child perftBoard
	if toKey == 1 && c.table != nil && depth > 2 {
		n = c.keyChildren(b, ml, depth, ply)
	} else {
		for _, m := range ml.moves[:ml.n] {
			child = c.make(b, m)
			n += c.sliced(&child, depth-1, ply+1, toKey-1)
		}
	}
	if c.table != nil {
		c.table.store(h1, h2, depth, n)
		c.stats.Stores++
	}
	return n
}

// keyChildren counts the leaves below the children of b (the moves of ml)
// that are key positions of c's slice, through the table. As in expand,
// every such child is hashed and its bucket touched before any is
// probed, so that the cache misses overlap.
func (c *perftCore) keyChildren(b *perftBoard, ml *perftMoveList, depth, ply int) uint64 {
	keys := &c.keys[ply]
	var in [maxPerftMoves]bool
	var child perftBoard
	for i, m := range ml.moves[:ml.n] {
		child = c.make(b, m)
		if in[i&(maxPerftMoves-1)] = sliceOf(&child, c.slice.Of) == c.slice.Index; in[i&(maxPerftMoves-1)] {
			keys[i&(maxPerftMoves-1)][0], keys[i&(maxPerftMoves-1)][1] = c.table.hash(&child)
		}
	}
	var touched uint64
	for i := range ml.moves[:ml.n] {
		if in[i&(maxPerftMoves-1)] {
			touched += c.table.touch(keys[i&(maxPerftMoves-1)][0])
		}
	}
	c.sink += touched
	var n uint64
	for i, m := range ml.moves[:ml.n] {
		if !in[i&(maxPerftMoves-1)] {
			continue
		}
		n += c.throughTable(b, m, &keys[i&(maxPerftMoves-1)], depth, ply, &child)
	}
	return n
}

// gen lists the legal moves of b for the side to move.
func (c *perftCore) gen(b *perftBoard, ml *perftMoveList) {
	if b.side == White {
		c.genWhite(b, ml)
	} else {
		c.genBlack(b, ml)
	}
}

// count returns the number of legal moves of b.
func (c *perftCore) count(b *perftBoard) uint64 {
	if b.side == White {
		return c.countWhite(b)
	}
	return c.countBlack(b)
}

// perftNarrowDepth is the deepest subtree counted in 64 bits: no position
// has more than 218 moves, and 218^8 < 2^64, so perft to depth 8 cannot
// wrap. Deeper counts add 64-bit subtree counts in 128 bits.
const perftNarrowDepth = 8

// countWide counts like sliced, exact in 128 bits at any depth, checking
// ctx before each move at ply 0 and at the plies deeper than
// perftNarrowDepth.
func (c *perftCore) countWide(ctx context.Context, b *perftBoard, depth, ply, toKey int, narrow int) (Count, error) {
	if depth <= 2 || toKey == 0 {
		return CountOf(c.sliced(b, depth, ply, toKey)), nil
	}
	ml := &c.lists[ply]
	c.gen(b, ml)
	var sum Count
	var child perftBoard
	for _, m := range ml.moves[:ml.n] {
		if err := ctx.Err(); err != nil {
			return Count{}, err
		}
		child = c.make(b, m)
		if depth-1 <= narrow {
			sum = sum.Add(c.sliced(&child, depth-1, ply+1, toKey-1))
			continue
		}
		sub, err := c.countWide(ctx, &child, depth-1, ply+1, toKey-1, narrow)
		if err != nil {
			return Count{}, err
		}
		sum = sum.AddCount(sub)
	}
	return sum, nil
}

// PerftCounter counts perft of one position after another on one thread,
// through shared tables, allocating nothing per position: a worker keeps one
// per thread for as long as it runs. It is not safe for concurrent use;
// the tables are.
type PerftCounter struct {
	core *perftCore
	// narrow is perftNarrowDepth (tests lower it to run the 128-bit sums).
	narrow int
}

// NewPerftCounter returns a counter using the node table t and the
// statistics table st (either may be nil: no table).
func NewPerftCounter(t *PerftTable, st *PerftStatsTable) *PerftCounter {
	c := &perftCore{table: t, stab: st}
	if t != nil {
		c.keys = make([][maxPerftMoves][2]uint64, MaxPerftDepth)
	}
	return &PerftCounter{core: c, narrow: perftNarrowDepth}
}

// ErrPerftDepth marks a depth out of range for a PerftCounter.
var ErrPerftDepth = errors.New("perft depth out of range")

// start prepares the core for p and checks depth and slice.
func (pc *PerftCounter) start(p *Position, depth int, s PerftSlice) (perftBoard, error) {
	if depth < 0 || depth > MaxPerftDepth {
		return perftBoard{}, fmt.Errorf("%w: %d (0 to %d)", ErrPerftDepth, depth, MaxPerftDepth)
	}
	if err := s.Check(depth); err != nil {
		return perftBoard{}, err
	}
	c := pc.core
	c.castle = newPerftCastling(p)
	c.setSlice(s, depth)
	return newPerftBoard(p), nil
}

// Count returns perft(p, depth), or the part of it in slice s, exact in
// 128 bits. It checks ctx between the moves at the root (and at every ply
// of a count too deep for 64 bits) and returns ctx's error if it ends.
func (pc *PerftCounter) Count(ctx context.Context, p *Position, depth int, s PerftSlice) (Count, error) {
	b, err := pc.start(p, depth, s)
	if err != nil {
		return Count{}, err
	}
	if depth == 0 {
		return CountOf(1), nil
	}
	c := pc.core
	defer c.flush()
	return c.countWide(ctx, &b, depth, 0, c.toKey(), pc.narrow)
}

// HasStatsTable reports whether the counter caches statistics in a table.
func (pc *PerftCounter) HasStatsTable() bool { return pc.core.stab != nil }
