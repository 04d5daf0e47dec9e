package perft

// Perft cross-checks on a worker (PerftBatch.cross_check_engine): the
// batch's node counts by one of the worker's --verify-engine programs
// (`go perft N` of each position, read by package verify through
// enginehost), not by the embedded generator. The coordinator compares
// them with the counts of another identity's generator (crosscheck.go).
// One process of the program, started at the first position, counts the
// batch's positions in turn and is stopped when the batch ends.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	vf "github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/perftwire"
	"github.com/arbiter-chess/arbiter/worker"
)

// CrossCheckTimeout bounds one position's `go perft` by the cross-check
// program; the engine is killed after it and the lease released.
const CrossCheckTimeout = 30 * time.Minute

// crossCheck counts a cross-check batch: its result, or the reason the
// lease is released with (the program failed: perftwire.CrossCheckFailed
// and why; or "cancelled").
func (r *perftRunner) crossCheck(ctx context.Context, host worker.Host, batch *arbiterv1.PerftBatch) (*arbiterv1.PerftBatchResult, error) {
	start := time.Now()
	res, err := r.crossCheckBatch(ctx, batch)
	if ctx.Err() != nil {
		return nil, errors.New("cancelled")
	}
	if err != nil {
		// The worker logs the release with this reason, once.
		return nil, errors.New(perftwire.CrossCheckFailed + err.Error())
	}
	host.Logger().Debug("cross-check computed", zap.String("program", res.GetProgram()), zap.Int("positions", len(batch.GetFens())),
		zap.Duration("elapsed", time.Since(start)))
	return res, nil
}

// crossCheckBatch counts every position of batch with the worker's
// program it names.
func (r *perftRunner) crossCheckBatch(ctx context.Context, batch *arbiterv1.PerftBatch) (*arbiterv1.PerftBatchResult, error) {
	name := batch.GetCrossCheckEngine()
	local, ok := r.programs[name]
	if !ok {
		return nil, fmt.Errorf("cross-check program %q is not on this worker (--verify-engine)", name)
	}
	if batch.GetStats() || batch.GetSlices() > 1 {
		return nil, fmt.Errorf("cross-check with %s: statistics or slices asked, which another program does not count", name)
	}
	depth := int(batch.GetDepth())
	if depth < 1 || depth > engine.MaxPerftDepth {
		return nil, fmt.Errorf("cross-check depth %d: out of range", depth)
	}
	var eng vf.Engine
	defer func() {
		if eng != nil {
			eng.Close()
		}
	}()
	counts := make([]engine.Count, 0, len(batch.GetFens()))
	for i, fen := range batch.GetFens() {
		var d vf.Divide
		var err error
		if eng == nil {
			var opened vf.Engine
			if opened, err = vf.Open(ctx, local.Spec, CrossCheckTimeout); err == nil {
				eng = opened
			}
		}
		if err == nil {
			d, err = eng.Divide(ctx, vf.Query{FEN: fen, Depth: depth, Chess960: batch.GetChess960()})
		}
		if err != nil {
			return nil, fmt.Errorf("cross-check with %s, position %d (%s): %w", name, i, fen, err)
		}
		counts = append(counts, d.Total)
	}
	res := perftwire.Encode(counts)
	res.Program = name
	return res, nil
}
