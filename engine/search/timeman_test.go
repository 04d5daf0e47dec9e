package search

import (
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// lowestClock plays moves against a base+inc clock, each move taking
// use(soft, hard) of the budgets the time manager set, and returns the
// lowest the clock got before a move's time was taken from it, net of what
// that move used: the slack a scheduling stall at that move could eat.
func lowestClock(t *testing.T, v Values, base, inc, latency time.Duration, moves int, use func(soft, hard time.Duration) time.Duration) time.Duration {
	t.Helper()
	left := base
	lowest := base
	for range moves {
		var tm timeManager
		lim := Limits{TimeSet: true}
		lim.Time[engine.White], lim.Inc[engine.White] = left, inc
		tm.setup(fixedClock{time.Unix(0, 0)}, &lim, engine.White, DefaultMoveOverhead*time.Millisecond, &v)
		spent := use(tm.soft, tm.hard)
		if spent > tm.hard {
			t.Fatalf("a move used %v, over its hard limit %v", spent, tm.hard)
		}
		left -= spent + latency
		lowest = min(lowest, left)
		if left <= 0 {
			t.Logf("flagged with %v used and %v of latency on a clock of %v", spent, latency, left+spent+latency)
			return left
		}
		left += inc
	}
	return lowest
}

// TestTimeReserveSurvivesStalls: at 5+0.05 an engine that stops at its
// hard limit on every move (the worst it does unstalled) still keeps over
// half a second on its clock, which is what absorbs a loaded machine's
// stall of a few hundred milliseconds under a runner with no time margin.
// Without the reserve the clock sank to a fifth of a second.
func TestTimeReserveSurvivesStalls(t *testing.T) {
	hardEveryMove := func(_, hard time.Duration) time.Duration { return hard }
	softish := func(soft, hard time.Duration) time.Duration { return min(soft*3/2, hard) }
	v := DefaultValues()
	for _, use := range []func(soft, hard time.Duration) time.Duration{hardEveryMove, softish} {
		got := lowestClock(t, v, 5*time.Second, 50*time.Millisecond, 0, 300, use)
		if got < 500*time.Millisecond {
			t.Errorf("5+0.05: the clock sank to %v (want at least 500ms left after every move)", got)
		}
	}
	none := v
	none[TimeReserve] = 0
	if got := lowestClock(t, none, 5*time.Second, 50*time.Millisecond, 0, 300, hardEveryMove); got >= 500*time.Millisecond {
		t.Errorf("without a reserve the clock stayed at %v: the test no longer shows what the reserve does", got)
	}
	// A short clock still plays: at 1+0.01 nothing flags.
	if got := lowestClock(t, v, time.Second, 10*time.Millisecond, 0, 300, hardEveryMove); got < 100*time.Millisecond {
		t.Errorf("1+0.01: the clock sank to %v", got)
	}
}

// TestClockRecoversFromLatency: a loaded machine adds latency the engine
// cannot see to every move (the runner's and the pipe's). Up to about the
// increment, the clock settles instead of draining to a flag, even for an
// engine that ran to its hard limit on every move. Spending a fixed
// three quarters of the increment drained it (the time losses measured
// under fastchess on a loaded 2-core machine).
func TestClockRecoversFromLatency(t *testing.T) {
	hardEveryMove := func(_, hard time.Duration) time.Duration { return hard }
	v := DefaultValues()
	for latency, floor := range map[time.Duration]time.Duration{10 * time.Millisecond: 500 * time.Millisecond,
		30 * time.Millisecond: 200 * time.Millisecond, 40 * time.Millisecond: 100 * time.Millisecond} {
		got := lowestClock(t, v, 5*time.Second, 50*time.Millisecond, latency, 300, hardEveryMove)
		t.Logf("5+0.05 with %v of latency a move: the clock settles at %v", latency, got)
		if got < floor {
			t.Errorf("5+0.05 with %v of latency a move: the clock sank to %v (want at least %v)", latency, got, floor)
		}
	}
	if got := lowestClock(t, v, 2*time.Second, 20*time.Millisecond, 15*time.Millisecond, 300, hardEveryMove); got < 100*time.Millisecond {
		t.Errorf("2+0.02 with 15ms of latency a move: the clock sank to %v", got)
	}
}
