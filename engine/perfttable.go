package engine

import (
	"math/bits"
	"sync/atomic"
)

// PerftTable caches subtree counts across the threads of one perft (or one
// worker). Its invariants:
//   - an entry is trusted only if two independent 64-bit keys match (the
//     Polyglot key and a second hash of the full position): 128 bits, so a
//     collision that changes a count is out of reach (p ≈ 2^-128 per probe);
//   - entries are three words written with atomic stores and checked with
//     xor-encoded keys (word0 = key1^data, word1 = key2^data), so a torn
//     entry from two racing writers never verifies: no locks, safe across
//     goroutines;
//   - replacement is depth-aware: each bucket has a slot kept for the
//     deepest subtree and a slot that is always replaced.
type PerftTable struct {
	slots []perftSlot // two per bucket: [2i] depth-preferred, [2i+1] always-replace
	mask  uint64
}

type perftSlot struct{ a, b, data uint64 }

// Counts of 2^56 or more are not cached (data packs count<<8 | depth).
const perftMaxCached = 1<<56 - 1

// NewPerftTable returns a table of about sizeMB megabytes (rounded down to
// a power-of-two number of buckets); nil when sizeMB <= 0.
func NewPerftTable(sizeMB int) *PerftTable {
	if sizeMB <= 0 {
		return nil
	}
	buckets := uint64(sizeMB) << 20 / 48
	buckets = 1 << (63 - bits.LeadingZeros64(buckets))
	return &PerftTable{slots: make([]perftSlot, 2*buckets), mask: buckets - 1}
}

// SizeBytes returns the memory the table uses.
func (t *PerftTable) SizeBytes() int { return len(t.slots) * 24 }

func (t *PerftTable) probe(k1, k2 uint64, depth int) (uint64, bool) {
	i := (k1 & t.mask) * 2
	for j := uint64(0); j < 2; j++ {
		s := &t.slots[i+j]
		d := atomic.LoadUint64(&s.data)
		if d&0xFF == uint64(depth) && atomic.LoadUint64(&s.a)^d == k1 && atomic.LoadUint64(&s.b)^d == k2 {
			return d >> 8, true
		}
	}
	return 0, false
}

func (t *PerftTable) store(k1, k2 uint64, depth int, count uint64) {
	if count > perftMaxCached {
		return
	}
	d := count<<8 | uint64(depth)
	i := (k1 & t.mask) * 2
	s := &t.slots[i]
	if int(atomic.LoadUint64(&s.data)&0xFF) > depth {
		s = &t.slots[i+1]
	}
	atomic.StoreUint64(&s.data, d)
	atomic.StoreUint64(&s.a, k1^d)
	atomic.StoreUint64(&s.b, k2^d)
}

// hash2 is a second 64-bit hash of the full position, independent of the
// Polyglot key (different construction), used only to verify table entries.
func (p *Position) hash2() uint64 {
	const m = 0x9E3779B97F4A7C15
	h := uint64(p.side) | uint64(p.castling)<<1 | uint64(p.ep)<<5
	mix := func(h, x uint64) uint64 {
		hi, lo := bits.Mul64(h^x, m)
		return hi ^ lo
	}
	h = mix(h, uint64(p.colors[White]))
	h = mix(h, uint64(p.colors[Black]))
	h = mix(h, uint64(p.pieces[Pawn]))
	h = mix(h, uint64(p.pieces[Knight]))
	h = mix(h, uint64(p.pieces[Bishop]))
	h = mix(h, uint64(p.pieces[Rook]))
	h = mix(h, uint64(p.pieces[Queen]))
	h = mix(h, uint64(p.castleRook[0])|uint64(p.castleRook[1])<<8|uint64(p.castleRook[2])<<16|uint64(p.castleRook[3])<<24)
	return h
}
