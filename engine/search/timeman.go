package search

import (
	"sync/atomic"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// Clock is the time source; tests may replace it.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// timeManager turns UCI limits into two budgets:
//   - soft: checked between iterations; no new iteration starts after it
//     (an iteration started late would rarely finish);
//   - hard: checked every few thousand nodes inside the search; the search
//     stops there whatever it is doing.
//
// Both are capped well inside the remaining clock minus Move Overhead, so a
// slow machine or a loaded scheduler costs strength, never the game. While
// pondering neither applies; ponderhit restarts the clock, because only
// then does our own clock start running.
type timeManager struct {
	clock    Clock
	epoch    time.Time
	startNs  atomic.Int64 // nanoseconds after epoch when our clock started
	timed    bool         // soft/hard apply
	soft     time.Duration
	hard     time.Duration
	ponder   atomic.Bool // pondering: limits do not apply yet
	nodeStop int64       // 0 = no node limit
}

func (tm *timeManager) elapsed() time.Duration {
	return tm.clock.Now().Sub(tm.epoch) - time.Duration(tm.startNs.Load())
}

func (tm *timeManager) restart() {
	tm.startNs.Store(int64(tm.clock.Now().Sub(tm.epoch)))
}

// setup computes the budgets for a search by side us.
func (tm *timeManager) setup(clock Clock, lim *Limits, us engine.Color, overhead time.Duration, v *Values) {
	tm.clock = clock
	tm.epoch = clock.Now()
	tm.startNs.Store(0)
	tm.ponder.Store(lim.Ponder)
	tm.nodeStop = lim.Nodes
	tm.timed = false
	if lim.Infinite {
		return
	}
	if lim.MoveTime > 0 {
		tm.timed = true
		t := max(lim.MoveTime-overhead, time.Millisecond)
		tm.soft, tm.hard = t, t
	}
	if lim.TimeSet {
		left := lim.Time[us]
		inc := lim.Inc[us]
		avail := max(left-overhead, time.Millisecond)
		mtg := v[TimeHorizon]
		if lim.MovesToGo > 0 {
			mtg = min(lim.MovesToGo, mtg)
		}
		// Plan as if a reserve were not on the clock: the clock then
		// settles around it instead of near zero, where one scheduling
		// stall of a loaded machine (200–400 ms were measured with two busy
		// processes beside two engines on two cores) flags under a runner
		// that allows no margin. The reserve is absolute (TimeReserve ms)
		// because stalls are, or TimeIncReserve increments when that is
		// more; at most three quarters of the clock, so a short clock still
		// plays. The hard limit is a share of the planned time too, so even
		// an engine that ran to its hard limit on every move keeps the
		// reserve.
		reserve := max(inc*time.Duration(v[TimeIncReserve]), time.Duration(v[TimeReserve])*time.Millisecond)
		planned := avail - min(reserve, avail*3/4)
		// Each move also costs the runner's and the pipe's latency, which
		// the engine cannot see: Move Overhead per move, taken from the
		// increment. Below the reserve, less of the increment is spent the
		// emptier the clock, so the clock recovers towards the reserve
		// whenever the latency is below the increment; spending a fixed
		// share of it drained a loaded machine's clock to a flag over tens
		// of moves.
		incShare := max(inc-overhead, 0) * 3 / 4
		if reserve > 0 && avail < reserve {
			incShare = incShare * avail / reserve
		}
		base := planned/time.Duration(mtg) + incShare
		soft := base * time.Duration(v[TimeSoftPct]) / 100
		hard := soft * time.Duration(v[TimeHardMul])
		limit := planned * time.Duration(v[TimeMaxPct]) / 100
		if lim.MovesToGo == 1 {
			limit = avail * 3 / 4 // the clock is refilled after this move
		}
		// Never plan beyond what the clock allows, increment included: the
		// increment arrives only after the move.
		hard = min(hard, limit)
		soft = min(soft, hard)
		soft, hard = max(soft, time.Millisecond), max(hard, time.Millisecond)
		if !tm.timed || hard < tm.hard {
			tm.soft, tm.hard = soft, hard
		}
		tm.timed = true
	}
}

// hardStop reports whether the search must stop now.
func (tm *timeManager) hardStop() bool {
	return tm.timed && !tm.ponder.Load() && tm.elapsed() >= tm.hard
}

// softStop reports whether a new iteration should not be started. scale is
// in percent: more than 100 when the best move keeps changing.
func (tm *timeManager) softStop(scale int) bool {
	return tm.timed && !tm.ponder.Load() && tm.elapsed() >= tm.soft*time.Duration(scale)/100
}
