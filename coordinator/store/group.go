package store

// Group commit: every write of the store goes through one writer that runs
// whatever writes are waiting in one transaction, each inside its own
// savepoint, and commits once. A commit costs one fsync (synchronous=FULL),
// so under load many results share it instead of queueing for it one by
// one; alone, a write waits for nothing but its own commit.
//
// Invariants:
//   - Writes are applied in the order they were submitted.
//   - A write's error is its own: a failing write is rolled back to its
//     savepoint and the others commit.
//   - A write is reported done only after the transaction holding it
//     committed (or failed): the caller acknowledges nothing earlier.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// maxGroup bounds the writes of one transaction, so one commit never holds
// the connection for long.
const maxGroup = 256

type writeFn func(ctx context.Context, tx *sql.Tx) error

type pending struct {
	fn   writeFn
	done chan error
}

type writer struct {
	mu      sync.Mutex
	queue   []*pending
	wake    chan struct{}
	stopped chan struct{}
	closed  bool
}

// ErrClosed is returned for writes submitted after Close.
var ErrClosed = errors.New("store closed")

func (s *Store) startWriter() {
	s.w = &writer{wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go s.writeLoop()
}

// submit queues fn and returns a channel that receives its outcome.
func (s *Store) submit(fn writeFn) <-chan error {
	p := &pending{fn: fn, done: make(chan error, 1)}
	w := s.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		p.done <- ErrClosed
		return p.done
	}
	w.queue = append(w.queue, p)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return p.done
}

// write runs fn in the next group transaction and waits until it is
// committed. Once submitted, a write is not abandoned when ctx ends: the
// caller learns its real outcome.
func (s *Store) write(fn writeFn) error { return <-s.submit(fn) }

func (s *Store) writeLoop() {
	w := s.w
	defer close(w.stopped)
	for {
		<-w.wake
		for {
			w.mu.Lock()
			n := min(len(w.queue), maxGroup)
			group := w.queue[:n:n]
			w.queue = w.queue[n:]
			closed := w.closed
			w.mu.Unlock()
			if n == 0 {
				if closed {
					return
				}
				break
			}
			s.runGroup(group)
		}
	}
}

// runGroup commits a group of writes in one transaction.
func (s *Store) runGroup(group []*pending) {
	ctx := context.Background()
	errs := make([]error, len(group))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		for _, p := range group {
			p.done <- err
		}
		return
	}
	// A coordinator that no longer leads writes nothing (leader.go).
	if err := s.fenced(ctx, tx); err != nil {
		tx.Rollback()
		for _, p := range group {
			p.done <- err
		}
		return
	}
	for i, p := range group {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			errs[i] = err
			continue
		}
		if err := p.fn(ctx, tx); err != nil {
			errs[i] = err
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO w"); rerr != nil {
				errs[i] = fmt.Errorf("%w (and rolling it back: %v)", err, rerr)
			}
		}
		tx.ExecContext(ctx, "RELEASE w")
	}
	if err := tx.Commit(); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("store: commit: %w", err)
			}
		}
	}
	for i, p := range group {
		p.done <- errs[i]
	}
}

// stopWriter lets queued writes finish and stops the writer.
func (s *Store) stopWriter() {
	w := s.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.stopped
}
