package spsa

import (
	"context"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	sp "github.com/arbiter-chess/arbiter/spsa"
)

// Limits on what a tune may ask for.
const (
	// MaxPairs bounds a tune's game pairs.
	MaxPairs = sp.MaxPairs
	// MaxParams bounds a tune's parameters.
	MaxParams = sp.MaxParams
)

// checked is a validated spec with what the workload derives from it.
type checked struct {
	spec     *arbiterv1.SpsaSpec  // defaults filled in
	openings []*arbiterv1.Opening // in the order of play
	tune     *sp.Tune             // at its start
}

// paramsOf converts a spec's parameters.
func paramsOf(spec *arbiterv1.SpsaSpec) []sp.Param {
	return spsaspec.ParamsFromProto(spec.GetParams())
}

// configOf is the tune's design of a checked spec.
func configOf(spec *arbiterv1.SpsaSpec) sp.Config { return spsaspec.Config(spec) }

// checkSpec validates a tune and fills in its defaults (in spec). Every
// refusal is an *apierr.Error naming the input. storedBatch is the batch
// size of a stored tune (0 at submit).
func (w *Workload) checkSpec(spec *arbiterv1.SpsaSpec, storedBatch int) (*checked, error) {
	if spec == nil {
		return nil, apierr.Invalid("spec missing")
	}
	e := spec.GetEngine()
	if err := gamepair.CheckEngine("engine", e); err != nil {
		return nil, err
	}
	if e.GetTimeControl() != nil {
		return nil, apierr.Invalid("engine %s: a tune plays both sides under the tune's time_control, not the engine's own", apierr.Q(e.GetName()))
	}
	if len(e.GetName()) >= gamepair.MaxNameBytes {
		return nil, apierr.Invalid("engine: name longer than %d bytes", gamepair.MaxNameBytes-1)
	}
	if n := len(spec.GetParams()); n > MaxParams {
		return nil, apierr.Invalid("params: %d, at most %d", n, MaxParams)
	}
	ps := paramsOf(spec)
	if err := sp.CheckParams(ps); err != nil {
		return nil, apierr.Invalid("%s", gamepair.Brief(err))
	}
	if matchspec.IsBuiltin(e) {
		decls, err := w.builtinOptions()
		if err != nil {
			return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "the embedded engine's options: %v", err)
		}
		if err := sp.CheckAgainst(ps, decls); err != nil {
			return nil, apierr.Invalid("engine %s: %s", apierr.Q(e.GetName()), gamepair.Brief(err))
		}
		if err := sp.CheckBuiltinWeights(ps, e.GetOptions()); err != nil {
			return nil, apierr.Invalid("engine %s: %s", apierr.Q(e.GetName()), gamepair.Brief(err))
		}
	}
	lim, err := gamepair.CheckTimeControl(spec.GetTimeControl())
	if err != nil {
		return nil, err
	}
	c := &checked{spec: spec}
	if c.openings, err = gamepair.CheckBook(spec); err != nil {
		return nil, err
	}
	if p := spec.GetPairs(); p < 1 || p > MaxPairs {
		return nil, apierr.Invalid("pairs %d: want 1 to %d", p, MaxPairs)
	}
	if err := gamepair.CheckRun(spec); err != nil {
		return nil, err
	}
	switch {
	case storedBatch > 0:
		spec.BatchPairs = uint32(storedBatch)
	case spec.GetBatchPairs() > gamepair.MaxBatchPairs:
		return nil, apierr.Invalid("batch pairs %d: at most %d", spec.GetBatchPairs(), gamepair.MaxBatchPairs)
	case spec.GetBatchPairs() == 0:
		spec.BatchPairs = uint32(w.cfg.AutoBatchPairs(lim, spec.GetReferenceNps()))
	}
	spec.BatchPairs = uint32(min(uint64(spec.GetBatchPairs()), spec.GetPairs()))
	d := spsaspec.WithDefaults(spec)
	spec.Alpha, spec.Gamma, spec.ARatio = d.Alpha, d.Gamma, d.ARatio
	if c.tune, err = sp.New(configOf(spec)); err != nil {
		return nil, apierr.Invalid("%s", gamepair.Brief(err))
	}
	return c, nil
}

// sides are the tuned engine as engines A (θ + c_k·Δ) and B (θ − c_k·Δ),
// named by spsa.SideNames; a batch sets their options.
func sides(e *arbiterv1.EngineSpec) (a, b *arbiterv1.EngineSpec) {
	a, b = proto.Clone(e).(*arbiterv1.EngineSpec), proto.Clone(e).(*arbiterv1.EngineSpec)
	a.Name, b.Name = sp.SideNames(e.GetName())
	return a, b
}

// submit checks a submitted tune (gamepair.Hooks.Submit): spec is a
// *arbiterv1.SpsaSpec.
func (w *Workload) submit(specAny any) (*gamepair.Submission[*tune], error) {
	spec, err := gamepair.SpecOf[*arbiterv1.SpsaSpec](specAny, "spsa spec")
	if err != nil {
		return nil, err
	}
	if spec.GetEngine().GetNet() != nil {
		return nil, apierr.Invalid("engine: a net is for tests; a tune plays the engine's own net")
	}
	// Resolved before the check, so that the spec stored is complete.
	if err := gamepair.ResolveArtifacts(w.cfg.ResolveArtifact, []string{"engine"}, spec.GetEngine()); err != nil {
		return nil, err
	}
	c, err := w.checkSpec(spec, 0)
	if err != nil {
		return nil, err
	}
	t := w.newTune(c)
	t.traj.add(0, t.st.Theta())
	return &gamepair.Submission[*tune]{Job: t, Kind: Kind, Prefix: "t", Spec: spec, UnitsTotal: t.Batches.Total(),
		Write: func(ctx context.Context, rec *store.Job, b []byte) error {
			return CreateTune(ctx, w.store, rec, &StoredTune{JobID: rec.ID, Spec: b, BatchPairs: int(spec.GetBatchPairs())})
		},
		Log: []zap.Field{zap.String("engine", spec.GetEngine().GetName()), zap.Int("params", len(spec.GetParams())),
			zap.Uint64("pairs", spec.GetPairs()), zap.Uint32("batch_pairs", spec.GetBatchPairs()), zap.Int("openings", len(c.openings))}}, nil
}
