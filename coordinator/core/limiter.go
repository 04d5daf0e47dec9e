package core

import (
	"sync"
	"time"
)

// limiter allows at most burst events per key per window (a fixed window
// per key, reset when it has passed). Keys are worker ids, so its size is
// bounded by the registered workers.
type limiter struct {
	mu     sync.Mutex
	burst  int
	window time.Duration
	seen   map[string]*windowCount
}

type windowCount struct {
	start time.Time
	n     int
}

func (l *limiter) init(burst int, window time.Duration) {
	l.burst, l.window, l.seen = burst, window, make(map[string]*windowCount)
}

func (l *limiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	wc := l.seen[key]
	if wc == nil || now.Sub(wc.start) >= l.window {
		wc = &windowCount{start: now}
		l.seen[key] = wc
	}
	wc.n++
	return wc.n <= l.burst
}
