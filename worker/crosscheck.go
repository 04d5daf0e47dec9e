package worker

// Perft cross-checks (PerftBatch.cross_check_engine): the batch's node
// counts by one of the worker's --verify-engine programs (`go perft N` of
// each position, read by package verify through enginehost), not by the
// embedded generator. The coordinator compares them with the counts of
// another identity's generator (kinds/perft/crosscheck.go).

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/perftwire"
)

// CrossCheckTimeout bounds one position's `go perft` by the cross-check
// program; the engine is killed after it and the lease released.
const CrossCheckTimeout = 30 * time.Minute

// crossCheckBatch counts every position of batch with the local engine
// name.
func (w *Worker) crossCheckBatch(ctx context.Context, batch *arbiterv1.PerftBatch) (*arbiterv1.PerftBatchResult, error) {
	name := batch.GetCrossCheckEngine()
	local, ok := w.verify.byName[name]
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
	counts := make([]engine.Count, 0, len(batch.GetFens()))
	for i, fen := range batch.GetFens() {
		u := verify.Unit{Engine: local.Spec, Query: verify.Query{FEN: fen, Depth: depth, Chess960: batch.GetChess960()}, Timeout: CrossCheckTimeout}
		d, err := w.verify.run(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("cross-check with %s, position %d (%s): %w", name, i, fen, err)
		}
		counts = append(counts, d.Total)
	}
	res := perftwire.Encode(counts)
	res.Program = name
	return res, nil
}

// runCrossCheck computes a cross-check batch and queues its result, or
// releases the lease saying why (the program failed, or shutdown).
func (w *Worker) runCrossCheck(cctx, bg context.Context, h *held, batch *arbiterv1.PerftBatch, log *zap.Logger) {
	start := time.Now()
	res, err := w.crossCheckBatch(cctx, batch)
	elapsed := time.Since(start)
	if cctx.Err() != nil {
		log.Info("cross-check not finished; releasing lease", zap.Error(cctx.Err()))
		w.release(bg, h.leaseID, "cancelled")
		return
	}
	if err != nil {
		log.Warn("cross-check program failed; releasing lease", zap.Error(err))
		w.release(bg, h.leaseID, perftwire.CrossCheckFailed+err.Error())
		return
	}
	log.Debug("cross-check computed", zap.String("program", res.GetProgram()), zap.Int("positions", len(batch.GetFens())),
		zap.Duration("elapsed", elapsed))
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, elapsed: elapsed,
		answer: &arbiterv1.SubmitRequest{Result: &arbiterv1.SubmitRequest_Perft{Perft: res}}}, 0)
}
