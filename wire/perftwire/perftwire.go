// Package perftwire carries exact perft counts between worker and
// coordinator: 128-bit counts as a low and a high 64-bit word each, so that
// no count can wrap however deep a unit is; with statistics, eight more
// counts per position.
package perftwire

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// StatsPerPosition is the number of statistics a result carries per
// position besides its node count.
const StatsPerPosition = engine.NumPerftStats - 1

// Encode renders counts as a result; the high words are sent only when
// some count needs them.
func Encode(counts []engine.Count) *arbiterv1.PerftBatchResult {
	r := &arbiterv1.PerftBatchResult{}
	r.Counts, r.CountsHigh = split(counts)
	return r
}

// EncodeStats renders per-position statistics as a result: each node count
// in counts, the other eight in stats.
func EncodeStats(stats []engine.PerftStatsCount) *arbiterv1.PerftBatchResult {
	nodes := make([]engine.Count, len(stats))
	rest := make([]engine.Count, 0, len(stats)*StatsPerPosition)
	for i := range stats {
		nodes[i] = stats[i][engine.PerftStatNodes]
		rest = append(rest, stats[i][1:]...)
	}
	r := Encode(nodes)
	r.Stats, r.StatsHigh = split(rest)
	return r
}

// split returns the low words and, when some count needs them, the high
// words of counts.
func split(counts []engine.Count) (lo, hi []uint64) {
	lo = make([]uint64, len(counts))
	wide := false
	for i, c := range counts {
		lo[i] = c.Lo
		wide = wide || c.Hi != 0
	}
	if wide {
		hi = make([]uint64, len(counts))
		for i, c := range counts {
			hi[i] = c.Hi
		}
	}
	return lo, hi
}

func join(what string, lo, hi []uint64) ([]engine.Count, error) {
	if len(hi) != 0 && len(hi) != len(lo) {
		return nil, fmt.Errorf("%d %s but %d high words (want none or one per count)", len(lo), what, len(hi))
	}
	out := make([]engine.Count, len(lo))
	for i, v := range lo {
		out[i].Lo = v
		if len(hi) > 0 {
			out[i].Hi = hi[i]
		}
	}
	return out, nil
}

// Decode reads a result's node counts.
func Decode(r *arbiterv1.PerftBatchResult) ([]engine.Count, error) {
	return join("counts", r.GetCounts(), r.GetCountsHigh())
}

// DecodeStats reads a statistics result: per position, its node count and
// eight statistics.
func DecodeStats(r *arbiterv1.PerftBatchResult) ([]engine.PerftStatsCount, error) {
	nodes, err := Decode(r)
	if err != nil {
		return nil, err
	}
	rest, err := join("statistics", r.GetStats(), r.GetStatsHigh())
	if err != nil {
		return nil, err
	}
	if len(rest) != len(nodes)*StatsPerPosition {
		return nil, fmt.Errorf("%d statistics for %d positions (want %d per position)", len(rest), len(nodes), StatsPerPosition)
	}
	out := make([]engine.PerftStatsCount, len(nodes))
	for i := range out {
		out[i][engine.PerftStatNodes] = nodes[i]
		copy(out[i][1:], rest[i*StatsPerPosition:])
	}
	return out, nil
}

// Uint64s makes counts of 64-bit values (tests, small units).
func Uint64s(v []uint64) []engine.Count {
	out := make([]engine.Count, len(v))
	for i, n := range v {
		out[i] = engine.CountOf(n)
	}
	return out
}

// CrossCheckFailed starts the reason a worker releases a cross-check lease
// with when its program failed (did not start, crashed, timed out, printed
// something unreadable): the coordinator then offers that worker no more
// cross-checks of the unit.
const CrossCheckFailed = "cross-check program failed: "
