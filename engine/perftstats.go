package engine

import (
	"context"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// Perft statistics on the perft core: the chessprogramming wiki's columns
// (see PerftStats) counted without making the leaf moves but the few that
// need it, and cached in a table of their own, so that --stats costs a
// small multiple of a plain perft instead of a walk over every leaf.
//
// The leaf ply classifies the legal moves of its position from bitboards:
// a normal move gives a direct check when it lands on a square from which
// its piece attacks their king (the squares are computed once per
// position, sliders on the present occupancy: leaving its square cannot
// open the moving slider's own line, since their king is not in check), and
// a discovered check when it leaves a line on which it alone stood between
// one of our sliders and their king. Only checking moves, en passant,
// castling and promotions are made, to test for mate and, for the last
// three, to find their checkers on the new board.

// PerftStatsCount is PerftStats as exact 128-bit counts, in the order of
// the PerftStat constants (nodes first): units of a cluster perft carry them.
type PerftStatsCount [NumPerftStats]Count

// The PerftStat constants index PerftStatsCount.
const (
	PerftStatNodes = iota
	PerftStatCaptures
	PerftStatEnPassant
	PerftStatCastles
	PerftStatPromotions
	PerftStatChecks
	PerftStatDiscoveryChecks
	PerftStatDoubleChecks
	PerftStatCheckmates
	NumPerftStats
)

// PerftStatName returns the name of statistic i as PerftStats's JSON and
// the CPW table's CSV columns spell it.
func PerftStatName(i int) string {
	switch i {
	case PerftStatNodes:
		return "nodes"
	case PerftStatCaptures:
		return "captures"
	case PerftStatEnPassant:
		return "ep"
	case PerftStatCastles:
		return "castles"
	case PerftStatPromotions:
		return "promotions"
	case PerftStatChecks:
		return "checks"
	case PerftStatDiscoveryChecks:
		return "discovery_checks"
	case PerftStatDoubleChecks:
		return "double_checks"
	case PerftStatCheckmates:
		return "checkmates"
	}
	return ""
}

// Narrow returns the counts as PerftStats (each must fit in 64 bits).
func (s *PerftStatsCount) Narrow() PerftStats {
	return PerftStats{Nodes: s[0].Lo, Captures: s[1].Lo, EnPassant: s[2].Lo, Castles: s[3].Lo, Promotions: s[4].Lo,
		Checks: s[5].Lo, DiscoveryChecks: s[6].Lo, DoubleChecks: s[7].Lo, Checkmates: s[8].Lo}
}

// perftStatsRaw is one subtree's statistics, in PerftStatsCount's order.
type perftStatsRaw [NumPerftStats]uint64

func (s *perftStatsRaw) add(o *perftStatsRaw) {
	for i := range s {
		s[i] += o[i]
	}
}

func (s *PerftStatsCount) addRaw(o *perftStatsRaw) {
	for i := range s {
		s[i] = s[i].Add(o[i])
	}
}

func (s *PerftStatsCount) add(o *PerftStatsCount) {
	for i := range s {
		s[i] = s[i].AddCount(o[i])
	}
}

// PerftStatsTable caches the statistics of subtrees, as PerftTable caches
// their node counts, for the same reasons and with the same guarantees: a
// board is found under two independent keyed 64-bit hashes, one choosing
// the slot and one stored in full, and an entry is written and read word
// by word, lock-free, with a check word that is h2 xor every other word,
// so a torn entry (words of two writers) verifies only with probability
// 2^-64.
//
// An entry fills one 64-byte cache line: a meta word (depth, generation),
// nine 32-bit counts packed into five words, a spare word, and the check
// word. Only subtrees of depth 1 to 4 are cached (218^4 < 2^32 leaves).
// Slots go in pairs (a 128-byte line pair; the hash chooses the pair); a
// store replaces its own board's entry, else the one of least value, as in
// PerftTable (depth less age).
type PerftStatsTable struct {
	slots []perftStatsEntry
	mask  uint64 // of pairs
	perftTableShared
}

type perftStatsEntry [8]uint64

const (
	perftStatsMinCached = 1
	perftStatsMaxCached = 4
)

// NewPerftStatsTable returns a table of about sizeMB megabytes (rounded
// down to a power of two of 64-byte slots); nil when sizeMB <= 0.
func NewPerftStatsTable(sizeMB int) *PerftStatsTable {
	if sizeMB <= 0 {
		return nil
	}
	slots := uint64(sizeMB) << 20 / uint64(unsafe.Sizeof(perftStatsEntry{}))
	slots = max(2, uint64(1)<<(63-bits.LeadingZeros64(slots)))
	t := &PerftStatsTable{slots: make([]perftStatsEntry, slots), mask: slots/2 - 1}
	t.init()
	adviseHugePagesOf(unsafe.Pointer(&t.slots[0]), uintptr(len(t.slots))*unsafe.Sizeof(t.slots[0]))
	return t
}

// SizeBytes returns the memory the table uses.
func (t *PerftStatsTable) SizeBytes() int {
	return len(t.slots) * int(unsafe.Sizeof(perftStatsEntry{}))
}

func (t *PerftStatsTable) hash(b *perftBoard) (h1, h2 uint64) {
	return b.hashWith(&t.key1), b.hashWith(&t.key2)
}

// pair returns the two slots of h1.
func (t *PerftStatsTable) pair(h1 uint64) *[2]perftStatsEntry {
	i := (h1 & t.mask) * 2
	return (*[2]perftStatsEntry)(t.slots[i : i+2])
}

// load reads an entry word by word and returns it if it verifies for h2
// at depth.
func (e *perftStatsEntry) load(h2 uint64, depth int) (perftStatsRaw, bool) {
	var w [8]uint64
	w[0] = atomic.LoadUint64(&e[0])
	if w[0]&perftDepthMask != uint64(depth) {
		return perftStatsRaw{}, false
	}
	x := w[0]
	for i := 1; i < 8; i++ {
		w[i] = atomic.LoadUint64(&e[i])
		x ^= w[i]
	}
	if x != h2 {
		return perftStatsRaw{}, false
	}
	var s perftStatsRaw
	for i := range s {
		s[i] = w[1+i/2] >> (32 * (i & 1)) & 0xffffffff
	}
	return s, true
}

// owns reports whether e holds the board of h2 at depth (or a torn mix).
func (e *perftStatsEntry) owns(h2 uint64, depth int) bool {
	_, ok := e.load(h2, depth)
	return ok
}

func (t *PerftStatsTable) probe(h1, h2 uint64, depth int) (perftStatsRaw, bool) {
	p := t.pair(h1)
	if s, ok := p[0].load(h2, depth); ok {
		return s, true
	}
	return p[1].load(h2, depth)
}

func (t *PerftStatsTable) store(h1, h2 uint64, depth int, s *perftStatsRaw) {
	if s[PerftStatNodes] > 0xffffffff {
		return
	}
	gen := t.gen.Load()
	p := t.pair(h1)
	victim := 0
	if !p[0].owns(h2, depth) {
		if p[1].owns(h2, depth) {
			victim = 1
		} else if perftEntryValue(atomic.LoadUint64(&p[1][0]), gen) < perftEntryValue(atomic.LoadUint64(&p[0][0]), gen) {
			victim = 1
		}
	}
	var w [8]uint64
	w[0] = gen<<perftGenShift | uint64(depth)
	for i, v := range s {
		w[1+i/2] |= v << (32 * (i & 1))
	}
	check := h2
	for i := 0; i < 7; i++ {
		check ^= w[i]
	}
	w[7] = check
	e := &p[victim]
	for i := range w {
		atomic.StoreUint64(&e[i], w[i])
	}
}

// perftEntryValue is an entry's claim to stay: its depth less the generations since
// it was stored (at most its depth).
func perftEntryValue(meta, gen uint64) int64 {
	depth := int64(meta & perftDepthMask)
	age := int64((gen - meta>>perftGenShift&255) & 255)
	return depth - min(age, depth)
}

// attackersOf returns the pieces of colour by that attack s on b.
func (b *perftBoard) attackersOf(s Square, by Color) Bitboard {
	occ := b.colors[White] | b.colors[Black]
	return (knightAttacks[s]&b.pieces[Knight] | pawnAttacks[by^1][s]&b.pieces[Pawn] | kingAttacks[s]&b.pieces[King] |
		BishopAttacks(s, occ)&(b.pieces[Bishop]|b.pieces[Queen]) | RookAttacks(s, occ)&(b.pieces[Rook]|b.pieces[Queen])) & b.colors[by]
}

// leafStats adds the statistics of the legal moves of b (the leaves one
// ply below it) to st; ply indexes the move list.
func (c *perftCore) leafStats(b *perftBoard, ply int, st *perftStatsRaw) {
	ml := &c.lists[ply]
	c.gen(b, ml)
	st[PerftStatNodes] += uint64(ml.n)
	us, them := b.side, b.side^1
	ours, theirs := b.colors[us], b.colors[them]
	occ := ours | theirs
	tk := (b.pieces[King] & theirs).First() & 63
	// checkSq[t]: where a piece of type t of ours attacks their king from.
	var checkSq [7]Bitboard
	checkSq[Pawn] = pawnAttacks[them][tk]
	checkSq[Knight] = knightAttacks[tk]
	checkSq[Bishop] = BishopAttacks(tk, occ)
	checkSq[Rook] = RookAttacks(tk, occ)
	checkSq[Queen] = checkSq[Bishop] | checkSq[Rook]
	// Our pieces that alone stand between one of our sliders and their king.
	var discoverers Bitboard
	snipers := rookRays[tk]&(b.pieces[Rook]|b.pieces[Queen])&ours | bishopRays[tk]&(b.pieces[Bishop]|b.pieces[Queen])&ours
	for snipers != 0 {
		s := popFirst(&snipers) & 63
		if between := betweenBB[tk][s] & occ; between != 0 && between&(between-1) == 0 {
			discoverers |= between & ours
		}
	}
	var child perftBoard
	for _, m := range ml.moves[:ml.n] {
		from, to := m.from(), m.to()
		if m.kind() == pmNormal {
			if theirs&to.Bit() != 0 {
				st[PerftStatCaptures]++
			}
			direct := checkSq[m.pieceType()]&to.Bit() != 0
			discovered := discoverers&from.Bit() != 0 && lineBB[tk][from]&to.Bit() == 0
			if !direct && !discovered {
				continue
			}
			st[PerftStatChecks]++
			if direct && discovered {
				st[PerftStatDoubleChecks]++
			} else if discovered {
				st[PerftStatDiscoveryChecks]++
			}
			child = c.make(b, m)
			if c.count(&child) == 0 {
				st[PerftStatCheckmates]++
			}
			continue
		}
		// En passant, castling and promotions: rare enough to make, and
		// each may check in a way the squares above do not show (the
		// captured pawn's square opens a line, the rook checks, the new
		// piece sees through the square the pawn left).
		landed := to
		switch m.kind() {
		case pmEnPassant:
			st[PerftStatCaptures]++
			st[PerftStatEnPassant]++
		case pmCastle:
			st[PerftStatCastles]++
			landed = castleRookTo[to&3] // a castling move keeps its right in the to field
		case pmPromotion:
			st[PerftStatPromotions]++
			if theirs&to.Bit() != 0 {
				st[PerftStatCaptures]++
			}
		}
		child = c.make(b, m)
		checkers := child.attackersOf(tk, us)
		if checkers == 0 {
			continue
		}
		st[PerftStatChecks]++
		// As the chessprogramming wiki counts them: a double check is only
		// a double check, a discovered check is a single check by a piece
		// that did not move.
		if checkers.More() {
			st[PerftStatDoubleChecks]++
		} else if checkers&^landed.Bit() != 0 {
			st[PerftStatDiscoveryChecks]++
		}
		if c.count(&child) == 0 {
			st[PerftStatCheckmates]++
		}
	}
}

// statsAt returns the statistics of the leaves depth plies below b
// (depth >= 1), through the statistics table when there is one.
func (c *perftCore) statsAt(b *perftBoard, depth, ply int) perftStatsRaw {
	if t := c.stab; t != nil && depth >= perftStatsMinCached && depth <= perftStatsMaxCached {
		h1, h2 := t.hash(b)
		return c.statsCached(b, depth, ply, h1, h2, -1)
	}
	return c.statsExpand(b, depth, ply, -1)
}

// statsCached is statsAt for a board of hashes h1, h2 in the table.
func (c *perftCore) statsCached(b *perftBoard, depth, ply int, h1, h2 uint64, toKey int) perftStatsRaw {
	c.stats.Probes++
	if s, ok := c.stab.probe(h1, h2, depth); ok {
		c.stats.Hits++
		return s
	}
	s := c.statsExpand(b, depth, ply, toKey)
	c.stab.store(h1, h2, depth, &s)
	c.stats.Stores++
	return s
}

// statsExpand computes the statistics below b from its children (toKey as
// in sliced: the plies to the key ply, negative without a slice).
func (c *perftCore) statsExpand(b *perftBoard, depth, ply, toKey int) perftStatsRaw {
	var s perftStatsRaw
	if depth == 1 {
		c.leafStats(b, ply, &s)
		return s
	}
	ml := &c.lists[ply]
	c.gen(b, ml)
	var child perftBoard
	for _, m := range ml.moves[:ml.n] {
		child = c.make(b, m)
		cs := c.statsSliced(&child, depth-1, ply+1, toKey-1)
		s.add(&cs)
	}
	return s
}

// statsSliced is sliced for statistics.
func (c *perftCore) statsSliced(b *perftBoard, depth, ply, toKey int) perftStatsRaw {
	switch {
	case toKey < 0:
		return c.statsAt(b, depth, ply)
	case toKey == 0:
		if sliceOf(b, c.slice.Of) != c.slice.Index {
			return perftStatsRaw{}
		}
		return c.statsAt(b, depth, ply)
	}
	if t := c.stab; t != nil && depth <= perftStatsMaxCached {
		h1, h2 := t.hash(b)
		return c.statsCached(b, depth, ply, h1^c.salt1, h2^c.salt2, toKey)
	}
	return c.statsExpand(b, depth, ply, toKey)
}

// statsWide is countWide for statistics.
func (c *perftCore) statsWide(ctx context.Context, b *perftBoard, depth, ply, toKey, narrow int) (PerftStatsCount, error) {
	var sum PerftStatsCount
	if depth <= 1 || toKey == 0 {
		s := c.statsSliced(b, depth, ply, toKey)
		sum.addRaw(&s)
		return sum, nil
	}
	ml := &c.lists[ply]
	c.gen(b, ml)
	var child perftBoard
	for _, m := range ml.moves[:ml.n] {
		if err := ctx.Err(); err != nil {
			return PerftStatsCount{}, err
		}
		child = c.make(b, m)
		if depth-1 <= narrow {
			s := c.statsSliced(&child, depth-1, ply+1, toKey-1)
			sum.addRaw(&s)
			continue
		}
		sub, err := c.statsWide(ctx, &child, depth-1, ply+1, toKey-1, narrow)
		if err != nil {
			return PerftStatsCount{}, err
		}
		sum.add(&sub)
	}
	return sum, nil
}

// Stats returns the statistics of the leaves depth plies below p (depth
// >= 1), or of those in slice s, exact in 128 bits; ctx as in Count.
func (pc *PerftCounter) Stats(ctx context.Context, p *Position, depth int, s PerftSlice) (PerftStatsCount, error) {
	b, err := pc.start(p, depth, s)
	if err != nil {
		return PerftStatsCount{}, err
	}
	if depth == 0 {
		// The root is the only leaf, and it is no move.
		var st PerftStatsCount
		st[PerftStatNodes] = CountOf(1)
		return st, nil
	}
	c := pc.core
	defer c.flushStats()
	return c.statsWide(ctx, &b, depth, 0, c.toKey(), pc.narrow)
}

// flushStats adds the thread's statistics-table counters to the table's.
func (c *perftCore) flushStats() {
	if c.stab != nil {
		c.stab.addStats(c.stats)
	}
	c.stats = PerftTableStats{}
}
