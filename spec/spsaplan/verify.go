package spsaplan

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/spsa"
)

// A verification match plays the tuned engine with a tune's values against
// the same engine with the tune's start values: the Elo of the tune.

// VerifyNames are the names of the two sides of a verification of a tune
// of the engine called name.
func VerifyNames(name string) (tuned, start string) { return name + "-tuned", name + "-start" }

// setParams sets the parameters over opts (replacing an option of the same
// name in another case: UCI option names are case-insensitive), the values
// as the engine takes them (integers rounded to the nearest in range).
func setParams(opts map[string]string, ps []spsa.Param, values []float64) {
	rounded := spsa.Rounded(ps, values)
	for i, p := range ps {
		for k := range opts {
			if strings.EqualFold(k, p.Name) {
				delete(opts, k)
			}
		}
		opts[p.Name] = p.OptionValue(rounded[i])
	}
}

// verifyEngine is engine e as a side of a verification: named name, with
// extra options (--each's) and the parameters at values.
func verifyEngine(e *arbiterv1.EngineSpec, name string, extra map[string]string, ps []spsa.Param, values []float64) *arbiterv1.EngineSpec {
	out := proto.Clone(e).(*arbiterv1.EngineSpec)
	out.Name = name
	if out.Options == nil {
		out.Options = map[string]string{}
	}
	for k, v := range extra {
		out.Options[k] = v
	}
	setParams(out.Options, ps, values)
	return out
}

// VerifySpec builds the cluster test that verifies the tune of snapshot
// tune: its engine with θ now (as `spsa export` gives it) against its
// engine with the start values, linked to the tune (verifies_tune and the
// updates θ stands at). f are the test's flags without engines; --each
// defaults to the tune's time control (and reference nps), and --openings
// is required (a tune's snapshot has no book).
func VerifySpec(tune *arbiterv1.Job, f matchplan.TestFlags) (*arbiterv1.MatchSpec, *matchplan.Plan, error) {
	ps, theta, err := spsaspec.Current(tune)
	if err != nil {
		return nil, nil, err
	}
	starts := startsOf(ps)
	spec := tune.GetSpsa()
	ms, plan, ownLimits, err := verifyTest(f)
	if err != nil {
		return nil, nil, err
	}
	extra := ms.GetEngineA().GetOptions()
	tunedName, startName := VerifyNames(spec.GetEngine().GetName())
	ms.EngineA = verifyEngine(spec.GetEngine(), tunedName, extra, ps, theta)
	ms.EngineB = verifyEngine(spec.GetEngine(), startName, extra, ps, starts)
	cfg := &plan.Config
	cfg.Engines[0], cfg.Engines[1] = matchspec.EngineFromProto(ms.EngineA), matchspec.EngineFromProto(ms.EngineB)
	plan.Engines = []match.EngineConfig{cfg.Engines[0], cfg.Engines[1]}
	if ownLimits {
		lim, err := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
		if err != nil {
			return nil, nil, fmt.Errorf("tune %s: time control: %v", tune.GetJobId(), err)
		}
		ms.TimeControl, cfg.Limits = proto.Clone(spec.GetTimeControl()).(*arbiterv1.TimeControl), lim
		if ms.ReferenceNps == 0 {
			ms.ReferenceNps = spec.GetReferenceNps()
		}
	}
	ms.VerifiesTune = tune.GetJobId()
	ms.VerifiesTuneUpdates = tune.GetSpsaProgress().GetUpdates()
	return ms, plan, nil
}

// CheckVerify checks the flags of a verification before there is a tune
// to verify (submit spsa --confirm-games checks them before the tune).
func CheckVerify(f matchplan.TestFlags) error {
	_, _, _, err := verifyTest(f)
	return err
}

// verifyTest is the test of flags f between two stand-in engines, which
// carry --each's options; ownLimits: --each gives no limits, the tune's
// are to be used.
func verifyTest(f matchplan.TestFlags) (ms *arbiterv1.MatchSpec, plan *matchplan.Plan, ownLimits bool, err error) {
	if len(f.Match.Engines) > 0 {
		return nil, nil, false, fmt.Errorf("--engine: the engines of a verification are the tune's")
	}
	ownLimits = f.Match.Each == ""
	if ownLimits {
		// A stand-in, replaced by the tune's own time control.
		f.Match.Each = "nodes=1"
	}
	f.Match.Engines = []string{"name=a,builtin", "name=b,builtin"}
	ms, plan, err = f.Spec(f.Match.SPRT != "")
	return ms, plan, ownLimits, err
}

// VerifyPlan is the local match that verifies this tune at theta: the
// tuned engine with theta against it with the start values, with the
// tune's limits, book and game settings, games games (or an SPRT with
// them as a cap), concurrency games at once.
func (p *Plan) VerifyPlan(theta []float64, games int, sprtFlag string, concurrency int) (*matchplan.Plan, error) {
	ps := p.Config.Params
	if len(theta) != len(ps) {
		return nil, fmt.Errorf("verify: %d values for %d parameters", len(theta), len(ps))
	}
	switch {
	case games < 0 || games%2 != 0:
		return nil, fmt.Errorf("--confirm-games %d: want an even number of games (pairs of one opening)", games)
	case games == 0 && sprtFlag == "":
		return nil, fmt.Errorf("--confirm-games: give a number of games (or --confirm-sprt)")
	}
	starts := p.Starts()
	// The book and settings as a fresh match would read them: --openings
	// with its own seed, not the tune's order of play. --each's options
	// are in p.Engine already and its limits are the tune's (set below):
	// the stand-in only gets the flags through.
	mf := matchplan.Flags{Each: "nodes=1", Openings: p.flags.Openings, Resign: p.flags.Resign, Draw: p.flags.Draw,
		MaxMoves: p.flags.MaxMoves, TimeMargin: p.flags.TimeMargin, HangTimeout: p.flags.HangTimeout, Event: p.flags.Event,
		Games: games, SPRT: sprtFlag, Concurrency: concurrency, Remote: true,
		Engines: []string{"name=a,builtin", "name=b,builtin"}}
	plan, err := matchplan.Parse(mf)
	if err != nil {
		return nil, VerifyFlagError(err)
	}
	tunedName, startName := VerifyNames(p.Engine.Name)
	cfg := &plan.Config
	cfg.Limits = p.Setup.Config.Limits
	for i, side := range []struct {
		name   string
		values []float64
	}{{tunedName, theta}, {startName, starts}} {
		e := p.Engine
		e.Name = side.name
		opts := engineOptions(e)
		setParams(opts, ps, side.values)
		e.Options = matchspec.EngineFromProto(&arbiterv1.EngineSpec{Options: opts}).Options
		cfg.Engines[i], plan.Engines[i] = e, e
	}
	return plan, nil
}

// engineOptions is e's options by name (the last of a name wins).
func engineOptions(e match.EngineConfig) map[string]string {
	opts := make(map[string]string, len(e.Options))
	for _, o := range e.Options {
		opts[o.Name] = o.Value
	}
	return opts
}

// VerifyFlagError names the flags of a verification after a tune as the
// tune's commands spell them.
func VerifyFlagError(err error) error {
	return errors.New(strings.NewReplacer("--sprt", "--confirm-sprt", "--games", "--confirm-games").Replace(err.Error()))
}

// Starts is the tune's start values.
func (p *Plan) Starts() []float64 { return startsOf(p.Config.Params) }

func startsOf(ps []spsa.Param) []float64 {
	out := make([]float64, len(ps))
	for i, par := range ps {
		out[i] = par.Start
	}
	return out
}
