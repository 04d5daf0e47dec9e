package clusterclient

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
)

// Policy is the one retry policy of every cluster client: exponential
// backoff with jitter between attempts, within a budget of attempts or
// elapsed time, and a deadline on each attempt.
type Policy struct {
	// Base is the delay after the first failure; it doubles per failure
	// up to Cap. Each delay is drawn uniformly from [d/2, d] so that
	// workers cut off together do not come back in step.
	Base, Cap time.Duration
	// MaxElapsed ends the retries once this much time has passed since the
	// first attempt (0: no limit but the caller's context).
	MaxElapsed time.Duration
	// MaxAttempts ends the retries after this many attempts (0: no limit).
	MaxAttempts int
	// AttemptTimeout is the deadline of one attempt (0: none beyond the
	// call's default, see CallTimeout). An attempt that runs out of it is
	// retried; the caller's own deadline ends everything.
	AttemptTimeout time.Duration
	// OnRetry, when set, is told of each failure that will be retried and
	// of the delay before the next attempt (attempt counts from 0).
	OnRetry func(attempt int, err error, delay time.Duration)
}

// The policies the clients use.
var (
	// Persistent is for workers and long waits: retry until the caller's
	// context ends, backing off to 5 s.
	Persistent = Policy{Base: 100 * time.Millisecond, Cap: 5 * time.Second}
	// Interactive is for a person's command: ride out a coordinator restart
	// of a few seconds, then say it is unreachable.
	Interactive = Policy{Base: 200 * time.Millisecond, Cap: time.Second, MaxElapsed: 3 * time.Second}
	// Once makes one attempt: for calls that must not be repeated blindly
	// (a submission whose answer was lost could create a second job).
	Once = Policy{MaxAttempts: 1}
)

// WithAttemptTimeout returns p with a per-attempt deadline of d.
func (p Policy) WithAttemptTimeout(d time.Duration) Policy {
	p.AttemptTimeout = d
	return p
}

// WithOnRetry returns p that reports retries to f.
func (p Policy) WithOnRetry(f func(attempt int, err error, delay time.Duration)) Policy {
	p.OnRetry = f
	return p
}

// Delay is the upper bound of the delay after failure number attempt
// (from 0): Base doubled attempt times, at most Cap.
func (p Policy) Delay(attempt int) time.Duration {
	base, capd := p.Base, p.Cap
	if base <= 0 {
		base = 100 * time.Millisecond
	}
	if capd < base {
		capd = base
	}
	d := base
	for i := 0; i < attempt && d < capd; i++ {
		d *= 2
	}
	return min(d, capd)
}

// jittered draws the actual delay from [d/2, d].
func jittered(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }

// Backoff is the retry state of one operation under a policy; loops that
// are not a single call (a watch, a worker's lease loop) use it directly.
type Backoff struct {
	p       Policy
	attempt int
	start   time.Time
}

// NewBackoff starts the clock of an operation under p.
func NewBackoff(p Policy) *Backoff { return &Backoff{p: p, start: time.Now()} }

// Attempt is the number of failures since the start or the last Reset.
func (b *Backoff) Attempt() int { return b.attempt }

// Reset starts over after a success: the next failure waits Base again
// and the budget is whole again.
func (b *Backoff) Reset() { b.attempt, b.start = 0, time.Now() }

// Next records a failure and returns the delay before the next attempt,
// or false when the policy's budget is spent.
func (b *Backoff) Next() (time.Duration, bool) {
	b.attempt++
	if b.p.MaxAttempts > 0 && b.attempt >= b.p.MaxAttempts {
		return 0, false
	}
	d := jittered(b.p.Delay(b.attempt - 1))
	if b.p.MaxElapsed > 0 && time.Since(b.start)+d > b.p.MaxElapsed {
		return 0, false
	}
	return d, true
}

// Wait records a failure (err, for OnRetry) and sleeps before the next
// attempt. It returns false when the budget is spent or ctx ends first.
func (b *Backoff) Wait(ctx context.Context, err error) bool {
	d, ok := b.Next()
	if !ok {
		return false
	}
	if b.p.OnRetry != nil {
		b.p.OnRetry(b.attempt-1, err, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Retryable reports whether a failed call may succeed if made again: the
// coordinator was away, restarting or briefly unable to store, as opposed
// to refusing the request. The reason decides when there is one; an older
// coordinator that sends none is judged by the code. DeadlineExceeded
// counts as retryable because callers check their own context first: what
// remains is an attempt that ran out of its own deadline.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	switch grpcerr.Reason(err) {
	case apierr.ReasonStore, apierr.ReasonShuttingDown, apierr.ReasonBusy:
		return true
	case "":
		switch Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
			return true
		}
	}
	return false
}

// Do calls fn until it succeeds, fails with an error that is not
// Retryable, the policy's budget is spent or ctx ends; each attempt gets
// the policy's AttemptTimeout. It returns fn's last error (nil on success);
// callers tell an interruption apart by ctx.Err().
func Do(ctx context.Context, p Policy, fn func(ctx context.Context) error) error {
	b := NewBackoff(p)
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if p.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, p.AttemptTimeout)
		}
		err := fn(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !Retryable(err) {
			return err
		}
		if !b.Wait(ctx, err) {
			return err
		}
	}
}
