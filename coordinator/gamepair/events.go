package gamepair

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// EventQueue writes events that arise under the core's lock (lost leases,
// refusals), where no store write may happen: Add queues them and starts a
// writer goroutine if none runs; Flush writes what is queued and waits for
// a running writer. Events are written in the order they were added. A
// coordinator killed between Add and the write loses those events (the
// window is a store round trip); a graceful shutdown calls Flush.
type EventQueue struct {
	store *store.Store
	log   *zap.Logger

	writeMu sync.Mutex // held while writing
	mu      sync.Mutex
	pending []store.Event
	running bool
}

// Init sets the store (nil: events are dropped) and the logger.
func (q *EventQueue) Init(st *store.Store, log *zap.Logger) { q.store, q.log = st, log }

// Add queues events for writing.
func (q *EventQueue) Add(evs ...store.Event) {
	if q.store == nil || len(evs) == 0 {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, evs...)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go q.drain()
	}
}

func (q *EventQueue) drain() {
	for {
		q.writeMu.Lock()
		q.mu.Lock()
		evs := q.pending
		q.pending = nil
		if len(evs) == 0 {
			q.running = false
			q.mu.Unlock()
			q.writeMu.Unlock()
			return
		}
		q.mu.Unlock()
		q.write(context.Background(), evs)
		q.writeMu.Unlock()
	}
}

func (q *EventQueue) write(ctx context.Context, evs []store.Event) error {
	err := q.store.AddEvents(ctx, evs)
	if err != nil {
		q.log.Error("events not stored", zap.Int("events", len(evs)), zap.Error(err))
	}
	return err
}

// Flush writes every queued event; when it returns, every event queued
// before the call is stored (or its error is returned).
func (q *EventQueue) Flush(ctx context.Context) error {
	if q.store == nil {
		return nil
	}
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.mu.Lock()
	evs := q.pending
	q.pending = nil
	q.mu.Unlock()
	if len(evs) == 0 {
		return nil
	}
	return q.write(ctx, evs)
}
