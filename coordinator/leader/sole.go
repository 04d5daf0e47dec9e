package leader

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sole is the election of a coordinator that shares its store with no
// other (SQLite): it leads from the start, at term 1, its one takeover
// counted. It exports the same series as an Elector (newMetrics), so that
// the dashboards and alerts read the same on every setup; its database
// check is ping, timed, every interval.
type Sole struct {
	m      metrics
	ping   func(context.Context) error
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// NewSole leads at once and checks the database with ping now (so the
// first scrape sees it) and then every interval until Close.
func NewSole(ping func(context.Context) error, interval time.Duration, reg prometheus.Registerer) *Sole {
	s := &Sole{m: newMetrics(reg), ping: ping, stop: make(chan struct{}), done: make(chan struct{})}
	s.m.leader.Set(1)
	s.m.term.Set(1)
	s.m.changes.Inc()
	s.check(interval)
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.check(interval)
			}
		}
	}()
	return s
}

// check pings the database once, bounded by three intervals as an
// Elector's check is.
func (s *Sole) check(interval time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*interval)
	defer cancel()
	start := time.Now()
	if err := s.ping(ctx); err != nil {
		s.m.dbUp.Set(0)
		return
	}
	s.m.latency.Observe(time.Since(start).Seconds())
	s.m.dbUp.Set(1)
}

// Close stops the checks; the lead ends with the process.
func (s *Sole) Close() {
	s.closed.Do(func() {
		close(s.stop)
		<-s.done
		s.m.leader.Set(0)
	})
}
