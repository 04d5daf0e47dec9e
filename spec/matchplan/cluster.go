package matchplan

import (
	"fmt"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
)

// TestFlags are a cluster test's flags: the match flags plus scheduling.
type TestFlags struct {
	Match        Flags
	Priority     int
	Throughput   float64
	BatchPairs   int
	ReferenceNPS uint64
	Seed         uint64
	// Group and Takes make the test a take of a group of takes of one
	// idea (--group, --takes): its SPRT runs at alpha/takes.
	Group string
	Takes int
}

// Given reports whether any flag names a test (`arbiter up` runs one then).
func (f *TestFlags) Given() bool { return len(f.Match.Engines) > 0 || f.Match.SPRT != "" }

// Spec checks the flags and builds the test to submit; needSPRT is true
// for `submit sprt`, false for `submit match`. The book is read here and
// sent with the test.
func (f *TestFlags) Spec(needSPRT bool) (*arbiterv1.MatchSpec, *Plan, error) {
	if needSPRT && f.Match.SPRT == "" {
		return nil, nil, fmt.Errorf("--sprt: required (elo0=..,elo1=..); use `submit match` for a fixed number of games")
	}
	if !needSPRT && f.Match.SPRT != "" {
		return nil, nil, fmt.Errorf("--sprt: use `submit sprt` for an SPRT")
	}
	m := f.Match
	m.Remote = true
	m.Concurrency = 1
	if m.tournamentGiven() {
		return nil, nil, fmt.Errorf("--engine: a test is between exactly two engines (got %d); `submit match` plays a tournament as one test per pairing", len(m.Engines))
	}
	plan, err := Parse(m)
	if err != nil {
		return nil, nil, err
	}
	cfg := &plan.Config
	var engines [2]*arbiterv1.EngineSpec
	for i, e := range cfg.Engines {
		engines[i] = matchspec.EngineToProto(e)
		// An engine's own limits replace --each for it, as in `arbiter
		// match` (which has checked them); the cluster adds its own rules.
		if e.Limits != (match.Limits{}) {
			tc, err := clusterTimeControl(e.Limits)
			if err != nil {
				return nil, nil, fmt.Errorf("--engine %s: %v", e.Name, err)
			}
			engines[i].TimeControl = tc
		}
	}
	if f.BatchPairs < 0 || f.Priority < -1000 || f.Priority > 1000 || f.Throughput < 0 {
		return nil, nil, fmt.Errorf("--batch-pairs, --priority (-1000..1000) and --throughput must not be negative or out of range")
	}
	cs, err := plan.ClusterSetup(f.Seed)
	if err != nil {
		return nil, nil, err
	}
	spec := &arbiterv1.MatchSpec{
		EngineA: engines[0], EngineB: engines[1],
		TimeControl: cs.TimeControl, Openings: cs.Openings, BookName: cs.BookName, BookOrder: cs.BookOrder, Seed: cs.Seed,
		BookStart: cs.BookStart, Chess960: cs.Chess960,
		Games: uint64(f.Match.Games), Priority: int32(f.Priority), Throughput: f.Throughput, BatchPairs: uint32(f.BatchPairs),
		Adjudication: cs.Adjudication, TimeMargin: cs.TimeMargin, HangTimeout: cs.HangTimeout,
		ReferenceNps: f.ReferenceNPS, Event: f.Match.Event,
	}
	if p := plan.SPRT; p != nil {
		spec.Sprt = &arbiterv1.SprtParams{Elo0: p.Elo0, Elo1: p.Elo1, Alpha: p.Alpha, Beta: p.Beta, Model: string(p.Model)}
	}
	spec.StopPrecisionElo = plan.StopPrecision
	if err := f.group(spec); err != nil {
		return nil, nil, err
	}
	for i, e := range []*arbiterv1.EngineSpec{spec.EngineA, spec.EngineB} {
		if t := plan.Travel[i]; t.Travels() {
			// Upload= and source= get their hash when the client uploads
			// them (package artifactclient), before the test is sent.
			e.Command, e.Dir = "", ""
			e.Artifact = &arbiterv1.EngineArtifact{Sha256: t.Artifact, Build: t.Build, Exe: t.Exe, Bench: t.Bench}
		}
		e.Net = plan.Travel[i].NetProto()
	}
	return spec, plan, nil
}

// ClusterSetup is what a cluster job takes of a plan besides its engines:
// the time control, the book in file order with the order, seed and start
// that fix the order of play on the coordinator (match.OrderOpenings), and
// the game settings.
type ClusterSetup struct {
	TimeControl  *arbiterv1.TimeControl
	Openings     []*arbiterv1.Opening
	BookName     string
	BookOrder    string
	Seed         uint64
	BookStart    uint32
	Chess960     bool
	Adjudication *arbiterv1.Adjudication
	TimeMargin   *durationpb.Duration
	HangTimeout  *durationpb.Duration
}

// clusterTimeControl renders limits for the cluster, which takes one kind
// of limit at a time and refuses a clock no worker can play.
func clusterTimeControl(l match.Limits) (*arbiterv1.TimeControl, error) {
	tc, err := matchspec.LimitsToProto(l)
	if err != nil {
		return nil, err
	}
	if err := matchspec.CheckPlayable(l); err != nil {
		return nil, err
	}
	return tc, nil
}

// ClusterSetup renders the plan's setup for the coordinator; seed is
// --seed (0: the openings' seed, else 1). A clock no worker can play is
// refused, named by --each. When every engine has limits of its own,
// --each may give none: the test then has no time control of its own.
func (p *Plan) ClusterSetup(seed uint64) (*ClusterSetup, error) {
	cfg := &p.Config
	var tc *arbiterv1.TimeControl
	if cfg.Limits != (match.Limits{}) || !p.everyEngineTimed() {
		var err error
		if tc, err = clusterTimeControl(cfg.Limits); err != nil {
			return nil, fmt.Errorf("--each: %v", err)
		}
	}
	// The book goes in file order; order, seed and start travel with it so
	// that the coordinator fixes the order of play (match.OrderOpenings).
	bo := p.BookOptions
	fileOrder := bo
	fileOrder.Order, fileOrder.Start = "sequential", 0
	book, err := match.LoadBook(fileOrder)
	if err != nil {
		return nil, fmt.Errorf("--openings: %v", err)
	}
	if seed == 0 {
		seed = bo.Seed
	}
	if seed == 0 {
		seed = 1
	}
	if match.Shuffled(bo.Order) && bo.Seed == 0 {
		bo.Seed = seed
	}
	cs := &ClusterSetup{TimeControl: tc, BookName: p.BookName, BookOrder: bo.Order, Seed: bo.Seed, BookStart: uint32(bo.Start),
		Adjudication: matchspec.AdjudicationToProto(cfg.Game.Adjudication),
		TimeMargin:   durationpb.New(cfg.Game.TimeMargin), HangTimeout: durationpb.New(cfg.Game.HangTimeout)}
	if !match.Shuffled(bo.Order) {
		cs.Seed = seed
	}
	for _, o := range book.Openings {
		cs.Openings = append(cs.Openings, matchspec.OpeningToProto(o))
		cs.Chess960 = cs.Chess960 || o.Chess960
	}
	return cs, nil
}

// everyEngineTimed reports whether the plan has engines and each has
// limits of its own (a tune's plan has none).
func (p *Plan) everyEngineTimed() bool {
	for _, e := range p.Engines {
		if e.Limits == (match.Limits{}) {
			return false
		}
	}
	return len(p.Engines) > 0
}

// Tournament reports whether the flags ask for a tournament: more than two
// engines, or --tournament, --rounds, --repeat, --seeds.
func (f *TestFlags) Tournament() bool { return f.Match.tournamentGiven() }

// PairingTest is one pairing of a tournament on the cluster: a test of
// its own between engines A and B (indices into Plan.Engines).
type PairingTest struct {
	A, B int
	Spec *arbiterv1.MatchSpec
}

// TournamentSpecs checks a tournament's flags and builds one test per
// pairing of its schedule, each of --rounds x --games games in game pairs
// (the cluster's unit), with the same book, seed and settings; the client
// rates the engines from the tests' results (see RatingsOf).
func (f *TestFlags) TournamentSpecs() ([]PairingTest, *Plan, error) {
	m := f.Match
	m.Remote = true
	m.Concurrency = 1
	if m.SPRT != "" {
		return nil, nil, fmt.Errorf("--sprt: a tournament on the cluster plays a fixed number of games")
	}
	plan, err := Parse(m)
	if err != nil {
		return nil, nil, err
	}
	s := plan.Schedule
	if s.Repeat != 2 {
		return nil, nil, fmt.Errorf("--repeat: the cluster plays game pairs (repeat 2), not %d games per opening", s.Repeat)
	}
	if s.Rounds == 0 {
		return nil, nil, fmt.Errorf("--rounds: required for a tournament")
	}
	var tests []PairingTest
	for _, pr := range s.Pairings() {
		one := f.Match
		one.Engines = []string{f.Match.Engines[pr[0]], f.Match.Engines[pr[1]]}
		one.Tournament, one.Seeds, one.Rounds, one.Repeat = "", 0, 0, 0
		one.Games = s.Rounds * s.Games
		tf := *f
		tf.Match = one
		spec, _, err := tf.Spec(false)
		if err != nil {
			return nil, nil, err
		}
		tests = append(tests, PairingTest{A: pr[0], B: pr[1], Spec: spec})
	}
	return tests, plan, nil
}

// RatingsOf rates a tournament played as one test per pairing, from each
// test's counts (A's side) and pentanomial.
func RatingsOf(plan *Plan, results []match.PairingResult) *match.Standings {
	st := &match.Standings{Schedule: plan.Schedule, Pairings: results, Status: match.StatusComplete}
	for _, e := range plan.Engines {
		st.Engines = append(st.Engines, e.Name)
	}
	for _, r := range results {
		st.Games += int(r.Wins + r.Draws + r.Losses)
	}
	return st
}

// group sets spec's group of takes from --group and --takes: both or
// neither, and only on an SPRT (the split is of its alpha).
func (f *TestFlags) group(spec *arbiterv1.MatchSpec) error {
	switch {
	case f.Group == "" && f.Takes == 0:
		return nil
	case f.Group == "":
		return fmt.Errorf("--takes: %d without --group NAME", f.Takes)
	case f.Takes < 1 || f.Takes > sprt.MaxTakes:
		return fmt.Errorf("--takes: %d is not in [1, %d]; declare the group's number of takes with every take", f.Takes, sprt.MaxTakes)
	case spec.Sprt == nil:
		return fmt.Errorf("--group: a group of takes splits an SPRT's alpha: use submit sprt")
	}
	spec.Group, spec.GroupTakes = f.Group, uint32(f.Takes)
	return nil
}
