package admission

import (
	"sync"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// Budget counts the request bytes reserved by calls in flight, in all
// and per identity. A call reserves its route's limit before its body is
// read (the most it can make the coordinator hold), may shrink the
// reservation to what it keeps once the body is decoded, and releases it
// when done. A reservation past either bound is refused at once: the
// caller retries later, nothing waits.
type Budget struct {
	mu          sync.Mutex
	max, perKey int64
	used        int64
	byKey       map[string]int64
}

// NewBudget bounds the bytes in flight to max in all and perKey per key.
func NewBudget(max, perKey int64) *Budget {
	return &Budget{max: max, perKey: perKey, byKey: map[string]int64{}}
}

// Used is the bytes reserved now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Reservation is what one call holds; Release (or Shrink) is safe to call
// more than once and from any goroutine.
type Reservation struct {
	b      *Budget
	key    string
	mu     sync.Mutex
	n      int64
	counts bool // counts against key's share
}

// Reserve takes n bytes for key (an identity's name, or "addr:"+address
// for anonymous callers); exemptKey reserves against the whole budget
// only (the admin, who must be able to repair a coordinator whose
// clients are at their limits).
func (b *Budget) Reserve(key string, exemptKey bool, n int64) (*Reservation, error) {
	return b.ReserveShares(key, exemptKey, 1, n)
}

// ReserveShares is Reserve for a key that holds shares of the per-key
// bound: a worker credential that runs a pool of workers gets one share
// per registered worker (they heartbeat and submit at once), bounded in
// all by the whole budget like everyone.
func (b *Budget) ReserveShares(key string, exemptKey bool, shares, n int64) (*Reservation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.perKey * max(shares, 1)
	if !exemptKey && b.byKey[key]+n > limit {
		return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonBusy,
			"%s already has %d bytes of requests in flight; this call needs %d more, over the limit of %d (coordinator flag --max-request-bytes-per-identity, per registered worker for a worker credential): retry when its calls in progress finish",
			apierr.Q(key), b.byKey[key], n, limit)
	}
	if b.used+n > b.max {
		return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonBusy,
			"the coordinator has %d bytes of requests in flight; this call needs %d more, over the limit of %d (coordinator flag --max-request-bytes): retry later",
			b.used, n, b.max)
	}
	b.used += n
	if !exemptKey {
		b.byKey[key] += n
	}
	return &Reservation{b: b, key: key, n: n, counts: !exemptKey}, nil
}

// Shrink lowers the reservation to n bytes (no-op when it holds less).
func (r *Reservation) Shrink(n int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 0 || n >= r.n {
		return
	}
	r.b.give(r.key, r.counts, r.n-n)
	r.n = n
}

// Release gives the reservation back.
func (r *Reservation) Release() { r.Shrink(0) }

func (b *Budget) give(key string, counts bool, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if counts {
		if b.byKey[key] -= n; b.byKey[key] <= 0 {
			delete(b.byKey, key)
		}
	}
}
