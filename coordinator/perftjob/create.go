package perftjob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/perftsplit"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// MaxUnitDepth bounds the depth a unit computes: 218^16 < 2^128, so no
// position's count at that depth can pass the 128 bits results carry.
const MaxUnitDepth = 16

// Create implements core.Workload: spec is a *arbiterv1.PerftSpec.
func (w *Workload) Create(ctx context.Context, specAny any, submitter string) (core.JobRef, error) {
	spec, ok := specAny.(*arbiterv1.PerftSpec)
	if !ok || spec == nil {
		return core.JobRef{}, apierr.Invalid("perft spec missing")
	}
	fen := spec.GetFen()
	if fen == "" {
		fen = engine.StartFEN
	}
	if len(fen) > 256 {
		return core.JobRef{}, apierr.Invalid("FEN %s: longer than 256 bytes", apierr.Q(fen))
	}
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return core.JobRef{}, apierr.Invalid("invalid FEN %s: %v", apierr.Q(fen), err)
	}
	if spec.GetChess960() {
		pos.SetChess960(true)
	}
	depth := int(spec.GetDepth())
	if depth > perftsplit.MaxDepth {
		return core.JobRef{}, apierr.Invalid("depth %d: must be between 0 and %d", depth, perftsplit.MaxDepth)
	}
	verify := spec.GetVerifyFraction()
	if verify == 0 {
		verify = w.cfg.VerifyDefault
	}
	if math.IsNaN(verify) || verify < 0 || verify > 1 {
		return core.JobRef{}, apierr.Invalid("verify fraction %v: must be between 0 and 1", spec.GetVerifyFraction())
	}
	throughput := spec.GetThroughput()
	if math.IsNaN(throughput) || throughput < 0 || throughput > 1e6 {
		return core.JobRef{}, apierr.Invalid("throughput %v: must be between 0 and 1e6", throughput)
	}
	if throughput == 0 {
		throughput = 1
	}
	split := int(spec.GetSplitPly())
	if split == 0 {
		split = perftsplit.ChooseSplitPlyFor(pos, depth, w.cfg.SplitLimits)
	} else if depth == 0 || split > depth || split > perftsplit.MaxSplitPly {
		return core.JobRef{}, apierr.Invalid("split ply %d: must be between 1 and %d for depth %d",
			split, min(depth, perftsplit.MaxSplitPly), depth)
	}

	if depth-split > MaxUnitDepth {
		return core.JobRef{}, apierr.Invalid("depth %d with split ply %d leaves units of depth %d: at most %d (an exact count past that may need more than 128 bits)",
			depth, split, depth-split, MaxUnitDepth)
	}

	id := "p" + randomHex(6)
	now := w.cfg.Now()
	rec := &store.Job{
		ID: id, Kind: Kind, FEN: pos.FEN(), Depth: depth, SplitPly: split, Verify: verify,
		Chess960: pos.IsChess960(), State: store.StateRunning, CreatedAt: now, RootMoves: []string{},
		Submitter: submitter, Priority: spec.GetPriority(), Throughput: throughput,
	}
	var positions []store.Position
	var units []store.Unit
	if depth == 0 {
		rec.State, rec.FinishedAt, rec.Total, rec.Divide = store.StateDone, now, "1", []string{}
	} else {
		plan, err := perftsplit.SplitLimited(ctx, pos, depth, split, w.cfg.SplitLimits)
		switch {
		case errors.Is(err, perftsplit.ErrTooLarge):
			return core.JobRef{}, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "%v", err)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return core.JobRef{}, err
		case err != nil:
			return core.JobRef{}, apierr.Invalid("%v", err)
		}
		rec.RootMoves = plan.RootMoves
		target := w.cfg.TargetUnitDuration.Seconds() * w.cfg.NominalNodesPerSecond
		for _, p := range plan.Positions {
			m := make([]store.RootMult, len(p.Mult))
			for i, r := range p.Mult {
				m[i] = store.RootMult{Root: r.Root, N: r.N}
			}
			positions = append(positions, store.Position{FEN: p.FEN, Mult: m})
		}
		for i, r := range plan.Batch(target, w.cfg.MinUnits, w.cfg.MaxPositionsPerUnit) {
			units = append(units, store.Unit{ID: unitID(id, i), JobID: id, Idx: i, First: r.First, End: r.End, Verify: verifyUnit(i, verify)})
		}
		rec.UnitsTotal, rec.Positions = len(units), len(positions)
		if len(units) == 0 {
			// Every line ends (mate or stalemate) before the split ply.
			rec.State, rec.FinishedAt, rec.Total = store.StateDone, now, "0"
			rec.Divide = make([]string, len(rec.RootMoves))
			for i := range rec.Divide {
				rec.Divide[i] = "0"
			}
		}
	}
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	if err := w.store.CreateJob(ctx, rec, positions, units); err != nil {
		return core.JobRef{}, apierr.Store(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	j := &job{rec: rec, positions: positions, started: now, holders: map[string]int{}}
	j.divide = newDivide(len(rec.RootMoves))
	for _, ur := range units {
		u := &unit{job: j, rec: ur, queued: true, holders: map[string]string{}}
		u.v = judge(nil, required(u), w.cfg.MaxRuns)
		j.units = append(j.units, u)
		j.queue = append(j.queue, u)
		w.units[ur.ID] = u
	}
	w.jobs[id] = j
	if rec.State == store.StateRunning {
		w.running = append(w.running, j)
	}
	w.log.Info("job submitted", zap.String(logging.JobID, id), zap.String("fen", rec.FEN), zap.Int("depth", depth),
		zap.Int("split_ply", split), zap.Int("positions", len(positions)), zap.Int("units", len(units)),
		zap.Float64("verify", verify), zap.Bool("chess960", rec.Chess960), zap.String("submitter", submitter))
	return core.JobRef{ID: id, Seq: rec.Seq, Submitter: submitter}, nil
}

// verifyUnit decides deterministically whether unit i is verified: exactly
// floor(n × fraction) of n units, spread evenly over the job.
func verifyUnit(i int, fraction float64) bool {
	if fraction <= 0 {
		return false
	}
	if fraction >= 1 {
		return true
	}
	return math.Floor(float64(i+1)*fraction) > math.Floor(float64(i)*fraction)
}

func unitID(jobID string, i int) string { return fmt.Sprintf("%s.%d", jobID, i) }

// jobOfUnit is the job id part of a unit id.
func jobOfUnit(unitID string) string {
	if i := strings.LastIndexByte(unitID, '.'); i > 0 {
		return unitID[:i]
	}
	return ""
}
