package test

import (
	"context"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Limits on what a test may ask for.
const (
	// MaxBatchPairs bounds a batch, so that its result (2 × pairs PGNs)
	// fits one message.
	MaxBatchPairs = gamepair.MaxBatchPairs
	// MaxOpenings bounds a test's book.
	MaxOpenings = gamepair.MaxOpenings
	// Tests stored before MaxBatchPairs existed were accepted with up to
	// this many pairs per batch; they still load.
	maxStoredBatchPairs = 10_000
)

// checked is a validated spec with what the workload derives from it.
type checked struct {
	spec       *arbiterv1.MatchSpec // defaults filled in
	kind       string
	openings   []*arbiterv1.Opening // in the order of play
	params     *sprt.Params
	batchPairs int
	totalPairs int
}

// checkSpec validates a test and fills in its defaults (in spec). Every
// refusal is an *apierr.Error naming the input. maxBatch is MaxBatchPairs
// at submit and the old limit for stored tests.
func (w *Workload) checkSpec(spec *arbiterv1.MatchSpec, maxBatch int) (*checked, error) {
	if spec == nil {
		return nil, apierr.Invalid("spec missing")
	}
	for i, e := range []*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()} {
		if err := gamepair.CheckEngine([2]string{"engine_a", "engine_b"}[i], e); err != nil {
			return nil, err
		}
	}
	if spec.GetEngineA().GetName() == spec.GetEngineB().GetName() {
		return nil, apierr.Invalid("both engines are named %s", apierr.Q(spec.GetEngineA().GetName()))
	}
	lims, err := gamepair.CheckLimits(spec.GetTimeControl(), [2]string{"engine_a", "engine_b"},
		[2]*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()})
	if err != nil {
		return nil, err
	}
	// Batches are sized for the longer games of the two engines' limits.
	lim := lims[0]
	if matchspec.GameSeconds(lims[1], 0) > matchspec.GameSeconds(lim, 0) {
		lim = lims[1]
	}
	c := &checked{spec: spec}
	if c.openings, err = gamepair.CheckBook(spec, gamepair.Text{What: "sprt model", S: spec.GetSprt().GetModel(), Max: gamepair.MaxWordBytes}); err != nil {
		return nil, err
	}
	games := spec.GetGames()
	if games%2 != 0 {
		return nil, apierr.Invalid("games: %d is odd (games are played in pairs)", games)
	}
	if games > testview.MaxGames {
		return nil, apierr.Invalid("games: %d is more than 100,000,000", games)
	}
	c.totalPairs = int(games / 2)
	if sp := spec.GetSprt(); sp != nil {
		p := sprt.Params{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: sprt.Normalized}
		if p.Alpha == 0 {
			p.Alpha = 0.05
		}
		if p.Beta == 0 {
			p.Beta = 0.05
		}
		if sp.GetModel() != "" {
			if p.Model, err = sprt.ParseModel(sp.GetModel()); err != nil {
				return nil, apierr.Invalid("sprt: %s", brief(err))
			}
		}
		if err := p.Validate(); err != nil {
			return nil, apierr.Invalid("sprt: %s", brief(err))
		}
		sp.Alpha, sp.Beta, sp.Model = p.Alpha, p.Beta, string(p.Model)
		c.params = &p
		c.kind = KindSPRT
	} else if games == 0 && spec.GetStopPrecisionElo() == 0 {
		return nil, apierr.Invalid("give a number of games, SPRT bounds or a precision stop")
	} else {
		c.kind = KindMatch
	}
	if c.params, err = checkStopAndGroup(spec, c.params); err != nil {
		return nil, err
	}
	if err := gamepair.CheckRun(spec); err != nil {
		return nil, err
	}
	if spec.GetBatchPairs() > uint32(maxBatch) {
		return nil, apierr.Invalid("batch pairs %d: at most %d", spec.GetBatchPairs(), maxBatch)
	}
	if spec.GetBatchPairs() == 0 {
		spec.BatchPairs = uint32(w.cfg.AutoBatchPairs(lim, spec.GetReferenceNps()))
	}
	c.batchPairs = int(spec.GetBatchPairs())
	if c.totalPairs > 0 && c.batchPairs > c.totalPairs {
		c.batchPairs = c.totalPairs
		spec.BatchPairs = uint32(c.totalPairs)
	}
	return c, nil
}

// brief is an error's text cut to a length fit for a message.
func brief(err error) string { return gamepair.Brief(err) }

// batchCount is the number of batches of a test: all its pairs, or testview.MaxPairs
// worth of full batches for an SPRT without a cap.
func batchCount(totalPairs, batchPairs int) int {
	if totalPairs > 0 {
		return (totalPairs + batchPairs - 1) / batchPairs
	}
	return testview.MaxPairs / batchPairs
}

// submit checks a submitted test (gamepair.Hooks.Submit): spec is a
// *arbiterv1.MatchSpec, its uploaded engines are completed from the
// artifact store before the check, so that the spec stored is complete.
func (w *Workload) submit(specAny any) (*gamepair.Submission[*test], error) {
	spec, err := gamepair.SpecOf[*arbiterv1.MatchSpec](specAny, "match spec")
	if err != nil {
		return nil, err
	}
	if err := w.resolveArtifacts(spec); err != nil {
		return nil, err
	}
	if err := w.checkVerifies(spec); err != nil {
		return nil, err
	}
	if err := w.checkFindable(spec); err != nil {
		return nil, err
	}
	c, err := w.checkSpec(spec, MaxBatchPairs)
	if err != nil {
		return nil, err
	}
	if err := w.checkGroupRoom(spec); err != nil {
		return nil, err
	}
	t := w.newTest(c)
	if c.params != nil {
		if t.seq, err = sprt.NewSequential(*c.params, int64(c.batchPairs)); err != nil {
			return nil, apierr.Invalid("sprt: %s", brief(err))
		}
	}
	seq, err := seqJSON(t.seq)
	if err != nil {
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "%v", err)
	}
	sub := &gamepair.Submission[*test]{Job: t, Kind: c.kind, Prefix: "s", Spec: spec,
		Write: func(ctx context.Context, rec *store.Job, b []byte) error {
			// Again under CommitMu: two takes submitted at once to a
			// group with one place left cannot both pass.
			if err := w.checkGroupRoom(spec); err != nil {
				return err
			}
			if err := CreateTest(ctx, w.store, rec, &StoredTest{JobID: rec.ID, Spec: b, BatchPairs: c.batchPairs, SPRT: seq}); err != nil {
				return err
			}
			w.noteCopy(spec.GetRescheduledFrom(), rec.ID)
			return nil
		},
		Log: []zap.Field{zap.String("kind", c.kind), zap.String("engine_a", spec.GetEngineA().GetName()),
			zap.String("engine_b", spec.GetEngineB().GetName()), zap.Int("openings", len(c.openings)),
			zap.Int("batch_pairs", c.batchPairs), zap.Int("pairs", c.totalPairs)}}
	if c.totalPairs > 0 {
		sub.UnitsTotal = t.nBatches
	}
	return sub, nil
}

// newTest is a running test's memory for a validated spec (rec, seq and
// counts are the caller's).
func (w *Workload) newTest(c *checked) *test {
	n := batchCount(c.totalPairs, c.batchPairs)
	return &test{
		Job:        gamepair.Job{Workers: w.cfg.NewJudgedWorkers(), Openings: c.openings, Batches: gamepair.NewBatches(n)},
		spec:       gamepair.WithoutOpenings(c.spec),
		batchPairs: c.batchPairs,
		totalPairs: c.totalPairs,
		nBatches:   n,
	}
}

// resolveArtifacts completes the uploaded engines of a submitted test from
// the artifact store.
func (w *Workload) resolveArtifacts(spec *arbiterv1.MatchSpec) error {
	return gamepair.ResolveArtifacts(w.cfg.ResolveArtifact, []string{"engine_a", "engine_b"}, spec.GetEngineA(), spec.GetEngineB())
}

// checkVerifies refuses a test that claims to verify something other than
// an SPSA tune. Only at submission: a stored test keeps its link even if
// loading the tune fails.
func (w *Workload) checkVerifies(spec *arbiterv1.MatchSpec) error {
	id := spec.GetVerifiesTune()
	if id == "" {
		if spec.GetVerifiesTuneUpdates() != 0 {
			return apierr.Invalid("verifies_tune_updates: %d without verifies_tune", spec.GetVerifiesTuneUpdates())
		}
		return nil
	}
	if err := gamepair.CheckText(gamepair.Text{What: "verifies_tune", S: id, Max: gamepair.MaxWordBytes}); err != nil {
		return err
	}
	if w.cfg.TuneExists == nil || !w.cfg.TuneExists(id) {
		return apierr.Invalid("verifies_tune: %s is not an SPSA tune of this coordinator", apierr.Q(id))
	}
	return nil
}
