// Package perftwire carries exact perft counts between worker and
// coordinator: 128-bit counts as a low and a high 64-bit word each, so that
// no count can wrap however deep a unit is.
package perftwire

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Encode renders counts as a result; the high words are sent only when
// some count needs them.
func Encode(counts []engine.Count) *arbiterv1.PerftBatchResult {
	r := &arbiterv1.PerftBatchResult{Counts: make([]uint64, len(counts))}
	wide := false
	for i, c := range counts {
		r.Counts[i] = c.Lo
		wide = wide || c.Hi != 0
	}
	if wide {
		r.CountsHigh = make([]uint64, len(counts))
		for i, c := range counts {
			r.CountsHigh[i] = c.Hi
		}
	}
	return r
}

// Decode reads a result's counts.
func Decode(r *arbiterv1.PerftBatchResult) ([]engine.Count, error) {
	lo, hi := r.GetCounts(), r.GetCountsHigh()
	if len(hi) != 0 && len(hi) != len(lo) {
		return nil, fmt.Errorf("%d counts but %d high words (want none or one per count)", len(lo), len(hi))
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

// Uint64s makes counts of 64-bit values (tests, small units).
func Uint64s(v []uint64) []engine.Count {
	out := make([]engine.Count, len(v))
	for i, n := range v {
		out[i] = engine.CountOf(n)
	}
	return out
}
