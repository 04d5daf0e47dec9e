package accounts

import (
	"sync"
	"time"
)

// limiter is a token bucket per key (a client address, an account name):
// burst attempts at once, then one per every. An attempt takes its token
// before it is checked; a right one gets it back, so a user who signs in
// right is never slowed, and concurrent wrong ones cannot overdraw.
type limiter struct {
	mu      sync.Mutex
	burst   float64
	every   time.Duration
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxBuckets bounds the keys remembered: past it, full buckets (keys that
// owe nothing) are forgotten, and if that is not enough the oldest half.
const maxBuckets = 100000

func newLimiter(burst int, every time.Duration) *limiter {
	return &limiter{burst: float64(burst), every: every, buckets: map[string]*bucket{}}
}

// level refills key's bucket to now and returns it. Caller holds mu.
func (l *limiter) level(key string, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
		return b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(l.burst, b.tokens+float64(d)/float64(l.every))
		b.at = now
	}
	return b
}

func (l *limiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(l.every) >= l.burst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < maxBuckets/2 {
		return
	}
	// Still full: an attack from very many addresses. Forget at random
	// (map order); the per-name limit still holds for each account.
	n := 0
	for k := range l.buckets {
		if n >= len(l.buckets)/2 {
			break
		}
		delete(l.buckets, k)
		n++
	}
}

// take spends a token of key's bucket if it has one, in one step, so
// that concurrent attempts cannot all pass a check made before any of
// them spent (the token is reserved before the work, not after).
func (l *limiter) take(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.level(key, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// refund gives back a token taken for an attempt that turned out right
// (or was never made).
func (l *limiter) refund(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.level(key, now)
	b.tokens = min(b.tokens+1, l.burst)
}

// budget is several limiters an attempt must all pass: a token is taken
// from each (a client address, an account name, the whole service)
// before the work, and refunded from each when the attempt is right.
type budget []struct {
	l   *limiter
	key string
}

// take takes a token from every limiter of b, or from none.
func (b budget) take(now time.Time) bool {
	for i, x := range b {
		if !x.l.take(x.key, now) {
			b[:i].refund(now)
			return false
		}
	}
	return true
}

func (b budget) refund(now time.Time) {
	for _, x := range b {
		x.l.refund(x.key, now)
	}
}
