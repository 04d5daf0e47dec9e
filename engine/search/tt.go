package search

import (
	"math/bits"
	"sync/atomic"

	"github.com/arbiter-chess/arbiter/engine"
)

// Bound says how a stored score relates to the true value.
type Bound uint8

const (
	BoundNone  Bound = iota
	BoundUpper       // the score is at most this (fail low)
	BoundLower       // at least this (fail high)
	BoundExact
)

// TTEntry is what the transposition table remembers about a position.
type TTEntry struct {
	Move  engine.Move
	Score int // mate scores relative to the stored node (see scoreToTT)
	Eval  int // static evaluation
	Depth int
	Bound Bound
}

// TransTable is what the search needs from a transposition table; Table is
// the implementation. Shared by every thread of a Lazy SMP search.
type TransTable interface {
	Probe(key uint64) (TTEntry, bool)
	Store(key uint64, e TTEntry)
	NewSearch()
	Clear()
	Hashfull() int // per mille of entries written in the current search
}

// Table is a lock-free transposition table.
//
// Invariants:
//   - an entry is two words, stored and loaded atomically: k = key ^ data and
//     d = data. A reader accepts it only if k ^ d == key, so an entry torn
//     by two threads writing at once never verifies (the xor trick of
//     Hyatt and Mann), and no lock is needed for Lazy SMP;
//   - buckets hold 4 entries (64 bytes, one cache line); the bucket index is
//     the high half of key × buckets, so any bucket count works;
//   - replacement keeps the deeper, younger entries: same key first, then
//     the entry with the lowest depth − 8 × age distance.
type Table struct {
	entries []ttSlot
	buckets uint64
	age     uint8 // 6 bits, advanced by NewSearch
}

type ttSlot struct{ k, d atomic.Uint64 }

const bucketSize = 4

// data layout: move 16 | score 16 | eval 16 | depth 8 | bound 2 | age 6.
func pack(e TTEntry, age uint8) uint64 {
	d := e.Depth
	if d < 0 {
		d = 0
	}
	if d > 255 {
		d = 255
	}
	return uint64(e.Move) | uint64(uint16(int16(e.Score)))<<16 | uint64(uint16(int16(e.Eval)))<<32 |
		uint64(d)<<48 | uint64(e.Bound)<<56 | uint64(age&63)<<58
}

func unpack(d uint64) TTEntry {
	return TTEntry{
		Move:  engine.Move(d),
		Score: int(int16(d >> 16)),
		Eval:  int(int16(d >> 32)),
		Depth: int(uint8(d >> 48)),
		Bound: Bound(d>>56) & 3,
	}
}

// NewTable returns a table of about sizeMB megabytes (at least one bucket).
func NewTable(sizeMB int) *Table {
	if sizeMB < 1 {
		sizeMB = 1
	}
	n := uint64(sizeMB) << 20 / (16 * bucketSize)
	return &Table{entries: make([]ttSlot, n*bucketSize), buckets: n}
}

func (t *Table) bucket(key uint64) []ttSlot {
	hi, _ := bits.Mul64(key, t.buckets)
	i := hi * bucketSize
	return t.entries[i : i+bucketSize : i+bucketSize]
}

// Probe looks key up.
func (t *Table) Probe(key uint64) (TTEntry, bool) {
	b := t.bucket(key)
	for i := range b {
		s := &b[i]
		d := s.d.Load()
		if s.k.Load()^d == key && d != 0 {
			return unpack(d), true
		}
	}
	return TTEntry{}, false
}

// Store writes e for key, choosing the slot to replace.
func (t *Table) Store(key uint64, e TTEntry) {
	b := t.bucket(key)
	victim := 0
	worst := 1 << 30
	for i := range b {
		d := b[i].d.Load()
		if d == 0 || b[i].k.Load()^d == key {
			if d != 0 && e.Move == engine.NullMove {
				e.Move = engine.Move(d) // keep the old best move
			}
			if d != 0 && e.Bound != BoundExact && int(uint8(d>>48)) > e.Depth+2 && uint8(d>>58) == t.age {
				return // a much deeper result of this search is worth more
			}
			victim = i
			break
		}
		ageDist := int((t.age - uint8(d>>58)) & 63)
		v := int(uint8(d>>48)) - 8*ageDist
		if v < worst {
			worst, victim = v, i
		}
	}
	d := pack(e, t.age)
	b[victim].d.Store(d)
	b[victim].k.Store(key ^ d)
}

// NewSearch ages the table so entries of earlier searches are replaced first.
func (t *Table) NewSearch() { t.age = (t.age + 1) & 63 }

// Clear empties the table.
func (t *Table) Clear() {
	for i := range t.entries {
		t.entries[i].k.Store(0)
		t.entries[i].d.Store(0)
	}
}

// Hashfull samples the first thousand entries.
func (t *Table) Hashfull() int {
	n := min(1000, len(t.entries))
	used := 0
	for i := 0; i < n; i++ {
		d := t.entries[i].d.Load()
		if d != 0 && uint8(d>>58)&63 == t.age {
			used++
		}
	}
	return used * 1000 / n
}

// scoreToTT makes a mate or TB score relative to the node (distance from it)
// rather than to the root, so it stays right wherever the node recurs.
func scoreToTT(s, ply int) int {
	switch {
	case s >= TBWinBound:
		return s + ply
	case s <= -TBWinBound:
		return s - ply
	}
	return s
}

func scoreFromTT(s, ply int) int {
	switch {
	case s >= TBWinBound:
		return s - ply
	case s <= -TBWinBound:
		return s + ply
	}
	return s
}
