package engine

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"
)

// PerftTable caches subtree counts across the threads of one process (one
// perft, or one worker across its units). It is safe for concurrent use
// without locks.
//
// Layout: buckets of four 16-byte entries, one 64-byte cache line each, so
// a probe touches one line. An entry is two words:
//
//	data  = count<<14 | generation<<6 | depth
//	check = h2 ^ data
//
// Why a false hit cannot happen in practice: a board is hashed to two
// 64-bit values h1 and h2 by a keyed multiply-mix hash (wyhash's
// construction) under two independent random 256-bit keys drawn when the
// table is made; a structured family of positions cannot line up with keys
// it does not know. h1 chooses the bucket, h2 is stored in full, and the
// depth must be equal. A board that is not in the table is taken for
// another only if the bucket index (log2 of the bucket count: 14 bits for
// 1 MB, 22 for 256 MB) and all 64 bits of h2 agree with one of the four
// entries: per probe at most 4·2^-78 = 2^-76 with 1 MB, 2^-84 with 256 MB.
// Even 2^51 probes (every node of perft(13) above its last two plies, as
// if nothing were ever found) leave the chance that any count is wrong
// below 2^-25 with 1 MB and 2^-33 with 256 MB; real runs probe far less.
//
// Torn entries: writers store data and check with two atomic 64-bit stores
// and readers load them the same way, so a reader may see data of one
// writer and check of another; the check word is then h2 of one board xor
// the data of another, which verifies only with the same 2^-64 chance as a
// collision.
//
// Replacement: a store goes to the entry of its own board if it is in the
// bucket, else to the entry of least value, value being the depth minus
// the generations since it was stored (capped at its depth): within one
// perft the deepest subtrees stay, and entries of earlier perfts make way
// first. Counts of 2^50 or more are not cached (no subtree below perft
// depth 10 of a normal position has that many leaves).
type PerftTable struct {
	buckets []perftBucket
	mask    uint64
	perftTableShared
}

// perftTableShared is what both perft tables (PerftTable and
// PerftStatsTable) keep besides their entries: the two hash keys, the
// generation and the counters.
type perftTableShared struct {
	key1 perftHashKey
	key2 perftHashKey
	gen  atomic.Uint64 // current generation, 1..255

	probes, hits, stores atomic.Uint64
}

// init draws the keys from the runtime's random source (maphash seeds it),
// so that every table hashes differently, and starts generation 1.
func (t *perftTableShared) init() {
	rng := rand.New(rand.NewPCG(maphash.Bytes(maphash.MakeSeed(), nil), maphash.Bytes(maphash.MakeSeed(), nil)))
	for i := range t.key1 {
		t.key1[i] = rng.Uint64() | 1
		t.key2[i] = rng.Uint64() | 1
	}
	t.gen.Store(1)
}

type perftEntry struct{ data, check uint64 }

type perftBucket [4]perftEntry

const (
	perftMaxCached  = 1<<50 - 1
	perftDepthMask  = 63
	perftGenShift   = 6
	perftCountShift = 14
)

// PerftTableStats counts the use of a PerftTable: probes (subtrees looked
// up), hits (found) and stores (subtrees counted and written).
type PerftTableStats struct {
	Probes uint64 `json:"probes"`
	Hits   uint64 `json:"hits"`
	Stores uint64 `json:"stores"`
}

// HitRate returns hits/probes, or 0 without probes.
func (s PerftTableStats) HitRate() float64 {
	if s.Probes == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Probes)
}

func (s *PerftTableStats) add(o PerftTableStats) {
	s.Probes += o.Probes
	s.Hits += o.Hits
	s.Stores += o.Stores
}

// NewPerftTable returns a table of about sizeMB megabytes (rounded down to
// a power-of-two number of 64-byte buckets); nil when sizeMB <= 0.
func NewPerftTable(sizeMB int) *PerftTable {
	if sizeMB <= 0 {
		return nil
	}
	buckets := uint64(sizeMB) << 20 / uint64(unsafe.Sizeof(perftBucket{}))
	buckets = 1 << (63 - bits.LeadingZeros64(buckets))
	t := &PerftTable{
		buckets: make([]perftBucket, buckets),
		mask:    buckets - 1,
	}
	t.init()
	adviseHugePages(t.buckets)
	return t
}

// SizeBytes returns the memory the table uses.
func (t *PerftTable) SizeBytes() int { return len(t.buckets) * int(unsafe.Sizeof(perftBucket{})) }

// Stats returns the table's counters since it was made (summed over every
// perft that used it; each perft adds its own when it ends).
func (t *perftTableShared) Stats() PerftTableStats {
	return PerftTableStats{Probes: t.probes.Load(), Hits: t.hits.Load(), Stores: t.stores.Load()}
}

func (t *perftTableShared) addStats(s PerftTableStats) {
	t.probes.Add(s.Probes)
	t.hits.Add(s.Hits)
	t.stores.Add(s.Stores)
}

// NewGeneration starts a generation: entries stored before it lose value
// for replacement (they stay valid and are still found). RunPerft calls it
// once per run; a worker once per job, so that a long job's entries make
// way for the next job's as it goes rather than all at once.
func (t *perftTableShared) NewGeneration() {
	for {
		g := t.gen.Load()
		next := g%255 + 1
		if t.gen.CompareAndSwap(g, next) {
			return
		}
	}
}

// perftHashKey is one key of the board hash.
type perftHashKey [4]uint64

// mum is wyhash's mixing step: the xor of the two halves of the 128-bit
// product.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// hashWith hashes everything that decides b's subtree: the placement (the
// piece-type sets and White's pieces; Black's are the rest), the e.p.
// square, the castling rights with their rooks, and the side to move.
func (b *perftBoard) hashWith(k *perftHashKey) uint64 {
	misc := uint64(b.castling) | uint64(b.side)<<8 | uint64(b.rooks)<<32
	h := mum(uint64(b.pieces[Pawn])^k[0], uint64(b.pieces[Knight])^k[1])
	h = mum(uint64(b.pieces[Bishop])^k[2]^h, uint64(b.pieces[Rook])^k[3])
	h = mum(uint64(b.pieces[Queen])^k[0]^h, uint64(b.pieces[King])^k[2])
	h = mum(uint64(b.colors[White])^k[1]^h, uint64(b.ep)^k[3])
	return mum(misc^k[2]^h, k[1]^k[3])
}

// hash returns the bucket hash and the check hash of b (see PerftTable).
func (t *PerftTable) hash(b *perftBoard) (h1, h2 uint64) {
	return b.hashWith(&t.key1), b.hashWith(&t.key2)
}

func (t *PerftTable) bucket(h1 uint64) *perftBucket { return &t.buckets[h1&t.mask] }

// touch loads the first word of h1's bucket, to bring the line into the
// cache ahead of a probe (Go has no prefetch instruction to offer).
func (t *PerftTable) touch(h1 uint64) uint64 {
	return atomic.LoadUint64(&t.bucket(h1)[0].data)
}

func (t *PerftTable) probe(h1, h2 uint64, depth int) (uint64, bool) {
	b := t.bucket(h1)
	for i := range b {
		e := &b[i]
		d := atomic.LoadUint64(&e.data)
		if d&perftDepthMask == uint64(depth) && atomic.LoadUint64(&e.check)^d == h2 {
			return d >> perftCountShift, true
		}
	}
	return 0, false
}

func (t *PerftTable) store(h1, h2 uint64, depth int, count uint64) {
	if count > perftMaxCached {
		return
	}
	gen := t.gen.Load()
	d := count<<perftCountShift | gen<<perftGenShift | uint64(depth)
	b := t.bucket(h1)
	victim, least := 0, int64(1<<62)
	for i := range b {
		e := &b[i]
		ed := atomic.LoadUint64(&e.data)
		ours := ed&perftDepthMask == uint64(depth) && atomic.LoadUint64(&e.check)^ed == h2
		if ours {
			victim = i
			break
		}
		depth := int64(ed & perftDepthMask)
		age := int64((gen - ed>>perftGenShift&255) & 255)
		if v := depth - min(age, depth); v < least {
			victim, least = i, v
		}
	}
	atomic.StoreUint64(&b[victim].data, d)
	atomic.StoreUint64(&b[victim].check, h2^d)
}
