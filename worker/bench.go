package worker

// The start-up bench: the worker measures its speed once, before it
// registers, and reports it (WorkerCapabilities.bench_nps, with the
// bench's node count as its signature); the coordinator scales the time
// controls of the units it leases to it by it.

import (
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/engine/search"
)

// DefaultBenchDepth is the start-up bench's depth: about 0.1 s on one core.
const DefaultBenchDepth = 7

// bench is the worker's measured speed and the bench's node count.
type bench struct {
	nps       uint64
	signature uint64
}

// runBench measures the worker's speed once, before it registers.
func (w *Worker) runBench() {
	g := &w.bench
	if g.nps != 0 {
		return
	}
	if w.cfg.BenchNPS > 0 {
		g.nps = w.cfg.BenchNPS
		return
	}
	depth := w.cfg.BenchDepth
	if depth < 0 {
		return
	}
	if depth == 0 {
		depth = DefaultBenchDepth
	}
	res, err := search.Bench(depth, nil)
	if err != nil {
		w.log.Warn("bench failed; reporting no speed", zap.Error(err))
		return
	}
	g.nps, g.signature = uint64(res.NPS()), uint64(res.Nodes)
	w.log.Info("bench", zap.Int("depth", depth), zap.Uint64("nodes", g.signature), zap.Uint64("nps", g.nps),
		zap.Duration("elapsed", res.Elapsed))
}

// BenchNPS is the speed the worker reports (after Run started).
func (w *Worker) BenchNPS() uint64 { return w.bench.nps }
