package perft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// MaxUnitDepth bounds the depth a unit computes: 218^16 < 2^128, so no
// position's count at that depth can pass the 128 bits results carry.
const MaxUnitDepth = 16

// MaxSlices bounds the slices a job may ask for; MaxAutoSlices the slices
// chosen from the workers seen (each slice walks the plies above its key
// ply itself, so past a few dozen workers share slices instead).
const (
	MaxSlices     = 256
	MaxAutoSlices = 16
)

// hashSpeedup is how much faster than NominalNodesPerSecond a worker with
// a hash table gets through a position's estimated leaves at depth
// remaining (perftsplit's estimate): measured on the start position, about
// a factor 8 a ply past depth 4 (transpositions, and the estimate's
// overcount, grow with depth).
func hashSpeedup(remaining int) float64 {
	return math.Pow(8, float64(max(remaining-4, 0)))
}

// Create implements core.Workload: spec is a *arbiterv1.PerftSpec.
func (w *Workload) Create(ctx context.Context, specAny any, submitter string) (core.JobRef, error) {
	spec, ok := specAny.(*arbiterv1.PerftSpec)
	if !ok || spec == nil {
		return core.JobRef{}, apierr.Invalid("perft spec missing")
	}
	in, err := w.checkSpec(spec)
	if err != nil {
		return core.JobRef{}, err
	}
	pos, depth, verify, slices := in.pos, in.depth, in.verify, in.slices
	chess960 := in.chess960
	// The farm the job is cut for: workers seen within a lease duration.
	workers, slicers, witnesses := 0, 0, 0
	if w.host != nil {
		tag := capability.Perft
		if chess960 {
			tag = capability.Perft960
		}
		workers, slicers, witnesses = w.host.LiveWorkers(tag), w.host.LiveWorkers(capability.PerftSlices), w.host.LiveIdentities(tag)
	}
	if verify == 0 && witnesses >= 2 {
		// The default verification needs a second identity to verify
		// anything: on a farm of one identity (one worker, or several
		// sharing a credential) a job that sets no fraction is computed
		// unverified, and says so, rather than wait for a witness that
		// may never come. A fraction the job sets is kept either way.
		verify = w.cfg.VerifyDefault
	}
	split := int(spec.GetSplitPly())
	if split == 0 && in.suite != nil {
		// A suite is many units at ply 1 already.
		split = 1
	} else if split == 0 {
		split = perftsplit.ChooseSplitPlyWorkers(pos, depth, max(workers, 1), MaxUnitDepth, w.cfg.SplitLimits)
	} else if depth == 0 || split > depth || split > perftsplit.MaxSplitPly {
		return core.JobRef{}, apierr.Invalid("split ply %d: must be between 1 and %d for depth %d",
			split, min(depth, perftsplit.MaxSplitPly), depth)
	}

	if depth-split > MaxUnitDepth {
		return core.JobRef{}, apierr.Invalid("depth %d with split ply %d leaves units of depth %d: at most %d (an exact count past that may need more than 128 bits)",
			depth, split, depth-split, MaxUnitDepth)
	}
	slicePly := perftsplit.SlicePly(depth - split)
	switch {
	case slices == 0 && slicePly > 0 && slicers >= 2:
		slices = min(slicers, MaxAutoSlices)
	case slices == 0 || slicePly == 0 && slices == 1:
		slices = 1
	case slicePly == 0:
		return core.JobRef{}, apierr.Invalid("slices %d: units of depth %d are too shallow to slice (depth %d or more: a smaller split ply)",
			slices, depth-split, perftsplit.KeyDepth+1)
	}
	if slices == 1 {
		slicePly = 0
	}

	id := "p" + randomHex(6)
	now := w.cfg.Now()
	rec := &store.Job{
		ID: id, Kind: Kind, FEN: pos.FEN(), Depth: depth, SplitPly: split, Verify: verify,
		Chess960: chess960, SuiteFirst: int(spec.GetSuiteFirst()), State: store.StateRunning, CreatedAt: now, RootMoves: []string{},
		Submitter: submitter, Priority: spec.GetPriority(), Throughput: in.throughput,
		Stats: spec.GetStats(), Slices: slices, SlicePly: slicePly,
	}
	var seed []byte
	if spec.GetCrossCheck() != "" {
		rec.CrossCheck, rec.CrossCheckFraction, rec.CrossCheckSeed = spec.GetCrossCheck(), in.crossFraction, newSeed()
		seed = decodeSeed(rec.CrossCheckSeed)
	}
	var positions []Position
	var units []Unit
	if depth == 0 {
		rec.State, rec.FinishedAt, rec.Total, rec.Divide = store.StateDone, now, "1", []string{}
	} else {
		select {
		case w.splitting <- struct{}{}:
			defer func() { <-w.splitting }()
		case <-ctx.Done():
			return core.JobRef{}, ctx.Err()
		}
		lim, held, err := w.splitBudget()
		if err != nil {
			return core.JobRef{}, err
		}
		plan, err := w.split(ctx, rec, in, split, lim)
		if err != nil {
			return core.JobRef{}, w.splitError(err, lim, held)
		}
		rec.RootMoves = plan.RootMoves
		positions, units = w.cutUnits(rec, plan, workers, seed)
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
	// Jobs created meanwhile may have taken the budget splitBudget saw.
	if held := w.heldPositions(); len(positions) > 0 && held+len(positions) > w.cfg.MaxHeldPositions {
		return core.JobRef{}, heldExhausted(held, w.cfg.MaxHeldPositions, fmt.Sprintf("this split has %d", len(positions)))
	}
	if err := createJob(ctx, w.store, rec, positions, units); err != nil {
		return core.JobRef{}, apierr.Store(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addJobLocked(rec, positions, units, now)
	w.log.Info("job submitted", zap.String(logging.JobID, id), zap.String("fen", rec.FEN), zap.Int("depth", depth),
		zap.Int("split_ply", split), zap.Int("positions", len(positions)), zap.Int("units", len(units)),
		zap.Int("slices", slices), zap.Int("slice_ply", slicePly), zap.Bool("stats", rec.Stats), zap.Int("workers", workers),
		zap.Float64("verify", verify), zap.Bool("chess960", rec.Chess960), zap.String("submitter", submitter),
		zap.String("cross_check", rec.CrossCheck), zap.Float64("cross_check_fraction", rec.CrossCheckFraction))
	return core.JobRef{ID: id, Seq: rec.Seq, Submitter: submitter}, nil
}

// split splits the job's position, or each of its suite's (the job then
// has no FEN), at split ply within lim.
func (w *Workload) split(ctx context.Context, rec *store.Job, in *specIn, split int, lim perftsplit.Limits) (*perftsplit.Plan, error) {
	if in.suite == nil {
		return perftsplit.SplitLimited(ctx, in.pos, in.depth, split, lim)
	}
	rec.FEN = ""
	return splitSuite(ctx, in.suite, in.depth, split, lim)
}

// specIn is a perft spec's checked basics.
type specIn struct {
	pos           engine.Position
	suite         []engine.Position // nil: one position, pos
	chess960      bool              // pos, or a position of the suite, is Chess960
	depth         int
	verify        float64
	throughput    float64
	slices        int
	crossFraction float64
}

// checkSpec checks a spec's position, depth, fractions, throughput and
// slices, each refused with a message that names it.
func (w *Workload) checkSpec(spec *arbiterv1.PerftSpec) (*specIn, error) {
	fen := spec.GetFen()
	if fen == "" {
		fen = engine.StartFEN
	}
	if len(fen) > 256 {
		return nil, apierr.Invalid("FEN %s: longer than 256 bytes", apierr.Q(fen))
	}
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return nil, apierr.Invalid("invalid FEN %s: %v", apierr.Q(fen), err)
	}
	if spec.GetChess960() {
		pos.SetChess960(true)
	}
	in := &specIn{pos: pos, chess960: pos.IsChess960(), depth: int(spec.GetDepth()), verify: spec.GetVerifyFraction(), throughput: spec.GetThroughput(), slices: int(spec.GetSlices())}
	if in.depth > perftsplit.MaxDepth {
		return nil, apierr.Invalid("depth %d: must be between 0 and %d", in.depth, perftsplit.MaxDepth)
	}
	if len(spec.GetSuite()) > 0 {
		if err := w.checkSuite(spec, in); err != nil {
			return nil, err
		}
	} else if est := perftsplit.EstimateNodes(pos, in.depth); est > w.cfg.MaxNodes {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge,
			"depth %d from this position is about %s nodes, over the limit of %s (coordinator flag %s): no farm would finish it; ask for a smaller depth",
			in.depth, sci(est), sci(w.cfg.MaxNodes), FlagMaxNodes)
	}
	if math.IsNaN(in.verify) || in.verify < 0 || in.verify > 1 {
		return nil, apierr.Invalid("verify fraction %v: must be between 0 and 1", spec.GetVerifyFraction())
	}
	if math.IsNaN(in.throughput) || in.throughput < 0 || in.throughput > 1e6 {
		return nil, apierr.Invalid("throughput %v: must be between 0 and 1e6", in.throughput)
	}
	if in.throughput == 0 {
		in.throughput = 1
	}
	if in.slices > MaxSlices {
		return nil, apierr.Invalid("slices %d: must be between 0 (chosen from the workers) and %d", in.slices, MaxSlices)
	}
	if in.crossFraction, in.slices, err = checkCrossCheck(spec.GetCrossCheck(), spec.GetCrossCheckFraction(), in.slices); err != nil {
		return nil, err
	}
	return in, nil
}

// splitError is the answer to a failed split under limits lim, with held
// positions held by running jobs.
func (w *Workload) splitError(err error, lim perftsplit.Limits, held int) error {
	switch {
	case errors.Is(err, perftsplit.ErrTooManyPositions) && lim.MaxPositions < w.cfg.SplitLimits.MaxPositions:
		return heldExhausted(held, w.cfg.MaxHeldPositions, "this split needs more than the "+fmt.Sprint(lim.MaxPositions)+" left")
	case errors.Is(err, perftsplit.ErrTooManyPositions):
		return apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "%v (coordinator flag %s)", err, FlagMaxSplitPositions)
	case errors.Is(err, perftsplit.ErrTooLarge):
		return apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return apierr.Invalid("%v", err)
}

// cutUnits turns a split into the job's positions and units: a unit
// computes a slice of its positions, a range of 1/slices of the estimated
// work per slice; the units of one slice are consecutive (a segment, see
// the package comment, is a run of them). A unit is rechecked or sampled
// for the cross-check (seed nil: none) by its index.
func (w *Workload) cutUnits(rec *store.Job, plan *perftsplit.Plan, workers int, seed []byte) ([]Position, []Unit) {
	slices := rec.Slices
	target := w.cfg.TargetUnitDuration.Seconds() * w.cfg.NominalNodesPerSecond * hashSpeedup(rec.Depth-rec.SplitPly) * float64(slices)
	minUnits := (max(w.cfg.MinUnits, 16*workers) + slices - 1) / slices
	positions := make([]Position, 0, len(plan.Positions))
	for _, p := range plan.Positions {
		m := make([]RootMult, len(p.Mult))
		for i, r := range p.Mult {
			m[i] = RootMult{Root: r.Root, N: r.N}
		}
		positions = append(positions, Position{FEN: p.FEN, Mult: m})
	}
	var units []Unit
	ranges := plan.Batch(target, minUnits, w.cfg.MaxPositionsPerUnit)
	for sl := 0; sl < slices; sl++ {
		for _, r := range ranges {
			i := len(units)
			cross := seed != nil && crossSampled(seed, i, rec.CrossCheckFraction)
			units = append(units, Unit{ID: unitID(rec.ID, i), JobID: rec.ID, Idx: i, First: r.First, End: r.End,
				Verify: verifyUnit(i, rec.Verify) && !cross, Slice: sl, CrossCheck: cross})
		}
	}
	return positions, units
}

// addJobLocked puts a stored job in memory, its fresh units in segments
// by slice. Caller holds mu.
func (w *Workload) addJobLocked(rec *store.Job, positions []Position, units []Unit, now time.Time) {
	j := &job{rec: rec, positions: positions, started: now, holders: map[string]int{}}
	j.divide = newDivide(len(rec.RootMoves))
	if rec.Stats {
		j.stats = newDivide(engine.NumPerftStats - 1)
	}
	for _, ur := range units {
		u := &unit{job: j, rec: ur, queued: true, holders: map[string]string{}}
		u.v = judgeUnit(u, nil, w.cfg.MaxRuns, nil)
		j.units = append(j.units, u)
		if ur.Idx == 0 || ur.Slice != units[ur.Idx-1].Slice {
			j.segs = append(j.segs, &segment{})
		}
		seg := j.segs[len(j.segs)-1]
		seg.units = append(seg.units, u)
		w.units[ur.ID] = u
	}
	w.jobs[rec.ID] = j
	if rec.State == store.StateRunning {
		w.running = append(w.running, j)
	}
}

// Coordinator flags of the limits, for messages.
const (
	FlagMaxNodes          = "--perft-max-nodes"
	FlagMaxHeldPositions  = "--perft-max-held-positions"
	FlagMaxSplitPositions = "--perft-max-split-positions"
)

// heldPositions counts the split positions running jobs keep in memory.
func (w *Workload) heldPositions() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, j := range w.running {
		n += len(j.positions)
	}
	return n
}

// splitBudget is the split limits for a new job: the configured ones, with
// the unique positions capped by what the running jobs leave of
// MaxHeldPositions.
func (w *Workload) splitBudget() (perftsplit.Limits, int, error) {
	lim := w.cfg.SplitLimits
	held := w.heldPositions()
	left := w.cfg.MaxHeldPositions - held
	if left <= 0 {
		return lim, held, heldExhausted(held, w.cfg.MaxHeldPositions, "")
	}
	if lim.MaxPositions == 0 || left < lim.MaxPositions {
		lim.MaxPositions = left
	}
	return lim, held, nil
}

func heldExhausted(held, limit int, detail string) error {
	if detail != "" {
		detail = "; " + detail
	}
	return apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
		"running perft jobs hold %d split positions, the limit is %d (coordinator flag %s)%s: wait for one to finish, cancel one, or choose a smaller split ply",
		held, limit, FlagMaxHeldPositions, detail)
}

// sci writes a large count as "4.2×10^27".
func sci(x float64) string {
	if x < 1e6 {
		return fmt.Sprintf("%.0f", x)
	}
	e := math.Floor(math.Log10(x))
	return fmt.Sprintf("%.1f×10^%d", x/math.Pow(10, e), int(e))
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
