package perft

// PERFT's worker side: a worker counts a leased batch's positions (whole
// trees, one slice of each, or their statistics) with the embedded
// generator on its hash table, or, for a batch that names a cross-check
// program, with that program (worker_crosscheck.go). The runner is made
// once per worker (worker.Runner.New) from the worker's settings: it keeps
// the table across units and offers the perft capabilities, with
// capability.PerftCrossCheck when the worker's operator named programs
// (--verify-engine). The units travel as the typed WorkUnit.perft and their
// results as SubmitRequest.perft, as in the release before; the worker
// finds the runner by the message's type.
//
// The table outlives units: the coordinator hands a worker consecutive
// units of one slice of a job, whose subtrees meet, so each unit finds
// much of its work in the table the ones before it filled. A new job
// starts a new table generation: the earlier job's entries stay valid but
// make way first.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/perftwire"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
	"github.com/arbiter-chess/arbiter/worker"
)

func init() {
	worker.RegisterRunner(worker.Runner{
		Unit: func() proto.Message { return &arbiterv1.PerftBatch{} },
		New:  func(s worker.Settings) (worker.Instance, error) { return newPerftRunner(s), nil },
	})
}

// perftRunner is the runner on one worker: its tables, the counters on
// them that no unit holds, and the programs it cross-checks with.
type perftRunner struct {
	hashMB   int
	table    *engine.PerftTable
	programs map[string]verifyproto.LocalEngine

	// mu guards the statistics table (made on first use), the jobs whose
	// units the tables have seen (a new one starts a generation) and the
	// idle counters (one per unit running at most).
	mu    sync.Mutex
	stats *engine.PerftStatsTable
	jobs  map[string]bool
	idle  []*engine.PerftCounter
}

func newPerftRunner(s worker.Settings) *perftRunner {
	r := &perftRunner{hashMB: max(1, s.HashMB), table: s.Table, stats: s.StatsTable, jobs: map[string]bool{},
		programs: map[string]verifyproto.LocalEngine{}}
	if r.table == nil {
		r.table = engine.NewPerftTable(r.hashMB)
	}
	for _, e := range s.VerifyEngines {
		r.programs[e.Name] = e
	}
	return r
}

// Capabilities are the perft capabilities, with cross-checks when the
// worker has programs to count with.
func (r *perftRunner) Capabilities() []string {
	caps := []string{capability.Perft, capability.Perft960, capability.PerftSlices, capability.PerftStats}
	if len(r.programs) > 0 {
		caps = append(caps, capability.PerftCrossCheck)
	}
	return caps
}

// Close keeps nothing running: the tables go with the runner.
func (r *perftRunner) Close() {}

// Run counts a *PerftBatch: its result, or an error whose text is the
// reason the lease is released with.
func (r *perftRunner) Run(ctx context.Context, host worker.Host, unit proto.Message) (proto.Message, error) {
	batch, ok := unit.(*arbiterv1.PerftBatch)
	if !ok {
		return nil, worker.Refuse(errors.New("perft runner: the unit is not a PerftBatch"))
	}
	if batch.GetCrossCheckEngine() != "" {
		return r.crossCheck(ctx, host, batch)
	}
	counter := r.counter(batch.GetStats())
	defer r.putCounter(counter)
	r.startJob(host.JobID())
	start := time.Now()
	res, err := ComputeBatch(ctx, batch, counter)
	elapsed := time.Since(start)
	if err != nil {
		return nil, err
	}
	counts, err := perftwire.Decode(res)
	if err != nil {
		host.Logger().Error("unit computed into a malformed result; releasing", zap.Error(err))
		return nil, errors.New("malformed result: " + err.Error())
	}
	var total engine.Count
	for _, c := range counts {
		total = total.AddCount(c)
	}
	// Metrics and stats count nodes as a rate source; saturate rather than
	// wrap for the (astronomical) units past 2^64.
	nodes := total.Lo
	if !total.IsUint64() {
		nodes = ^uint64(0)
	}
	host.Logger().Debug("unit computed", zap.Int("positions", len(counts)), zap.Stringer("nodes", total), zap.Duration("elapsed", elapsed))
	host.CountNodes(nodes)
	return res, nil
}

// counter takes an idle counter on the tables, or makes one; stats asks
// for one with the statistics table, made the first time one is asked.
func (r *perftRunner) counter(stats bool) *engine.PerftCounter {
	r.mu.Lock()
	defer r.mu.Unlock()
	var c *engine.PerftCounter
	if n := len(r.idle); n > 0 {
		c, r.idle = r.idle[n-1], r.idle[:n-1]
	}
	if c != nil && (!stats || c.HasStatsTable()) {
		return c
	}
	if !stats {
		return engine.NewPerftCounter(r.table, nil)
	}
	if r.stats == nil {
		r.stats = engine.NewPerftStatsTable(r.hashMB)
	}
	return engine.NewPerftCounter(r.table, r.stats)
}

// putCounter gives a counter back for the next unit.
func (r *perftRunner) putCounter(c *engine.PerftCounter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle = append(r.idle, c)
}

// startJob starts a table generation the first time a unit of jobID
// comes: the tables keep the earlier jobs' entries (all still valid) but
// give them up first. Units of jobs running side by side do not start
// generations over and over: a job is remembered (the last 256).
func (r *perftRunner) startJob(jobID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs[jobID] {
		return
	}
	if len(r.jobs) >= 256 {
		clear(r.jobs)
	}
	r.jobs[jobID] = true
	r.table.NewGeneration()
	if r.stats != nil {
		r.stats.NewGeneration()
	}
}

// ComputeBatch computes a perft batch with counter (on the tables it was
// made with): every position's count, or its slice's, and its statistics
// when the batch asks. It checks ctx between moves at the root, so a
// cancelled unit stops soon.
func ComputeBatch(ctx context.Context, batch *arbiterv1.PerftBatch, counter *engine.PerftCounter) (*arbiterv1.PerftBatchResult, error) {
	depth := int(batch.GetDepth())
	slice := engine.PerftSlice{Of: int(batch.GetSlices()), Index: int(batch.GetSlice()), Ply: int(batch.GetSlicePly())}
	if batch.GetSlices() > engine.MaxPerftSlices || batch.GetSlicePly() > engine.MaxPerftDepth {
		return nil, fmt.Errorf("slice %d of %d at ply %d: out of range", batch.GetSlice(), batch.GetSlices(), batch.GetSlicePly())
	}
	fens := batch.GetFens()
	counts := make([]engine.Count, len(fens))
	var stats []engine.PerftStatsCount
	if batch.GetStats() {
		stats = make([]engine.PerftStatsCount, len(fens))
	}
	for i, fen := range fens {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return nil, fmt.Errorf("position %d %q: %w", i, fen, err)
		}
		if batch.GetChess960() {
			p.SetChess960(true)
		}
		if stats != nil {
			stats[i], err = counter.Stats(ctx, &p, depth, slice)
		} else {
			counts[i], err = counter.Count(ctx, &p, depth, slice)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if stats != nil {
		return perftwire.EncodeStats(stats), nil
	}
	return perftwire.Encode(counts), nil
}
