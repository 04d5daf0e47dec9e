package admission

import (
	"context"
	"errors"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// Pool runs expensive work (password hashing: 19 MiB and a core for
// tens of milliseconds each) a few at a time. A call past the workers
// waits in a queue of bounded length; past the queue it is refused at
// once, so a burst of sign-ins costs the coordinator at most
// workers × one hash of memory and never an unbounded line of goroutines.
type Pool struct {
	admitted chan struct{} // a token per call running or queued
	running  chan struct{} // a token per call running
}

// ErrBusy is the refusal of work past the pool's workers and queue.
var ErrBusy = apierr.New(apierr.ResourceExhausted, apierr.ReasonBusy,
	"the coordinator is checking as many passwords as it may at once (coordinator flags --hash-workers and --hash-queue): try again in a few seconds")

// NewPool runs workers calls at once and queues up to queue more.
func NewPool(workers, queue int) *Pool {
	return &Pool{admitted: make(chan struct{}, workers+queue), running: make(chan struct{}, workers)}
}

// Do runs fn in the pool: ErrBusy when the workers and the queue are
// full, ctx's error when it ends while queued.
func (p *Pool) Do(ctx context.Context, fn func()) error {
	select {
	case p.admitted <- struct{}{}:
	default:
		return ErrBusy
	}
	defer func() { <-p.admitted }()
	select {
	case p.running <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.running }()
	fn()
	return nil
}

// InUse is the calls running or queued now.
func (p *Pool) InUse() int { return len(p.admitted) }

// IsBusy reports whether err is the pool's refusal.
func IsBusy(err error) bool { return errors.Is(err, ErrBusy) }
