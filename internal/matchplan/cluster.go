package matchplan

import (
	"fmt"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/internal/matchspec"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestFlags are a cluster test's flags: the match flags plus scheduling.
type TestFlags struct {
	Match        Flags
	Priority     int
	Throughput   float64
	BatchPairs   int
	ReferenceNPS uint64
	Seed         uint64
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
	plan, err := Parse(m)
	if err != nil {
		return nil, nil, err
	}
	cfg := &plan.Config
	for _, e := range cfg.Engines {
		if e.Limits != (match.Limits{}) {
			return nil, nil, fmt.Errorf("--engine %s: per-engine time controls are not supported on the cluster; use --each", e.Name)
		}
	}
	tc, err := matchspec.LimitsToProto(cfg.Limits)
	if err != nil {
		return nil, nil, fmt.Errorf("--each: %v", err)
	}
	if err := matchspec.CheckPlayable(cfg.Limits); err != nil {
		return nil, nil, fmt.Errorf("--each: %v", err)
	}
	if f.BatchPairs < 0 || f.Priority < -1000 || f.Priority > 1000 || f.Throughput < 0 {
		return nil, nil, fmt.Errorf("--batch-pairs, --priority (-1000..1000) and --throughput must not be negative or out of range")
	}
	// The book goes in file order; order, seed and start travel with it so
	// that the coordinator fixes the order of play (match.OrderOpenings).
	bo := plan.BookOptions
	fileOrder := bo
	fileOrder.Order, fileOrder.Start = "sequential", 0
	book, err := match.LoadBook(fileOrder)
	if err != nil {
		return nil, nil, fmt.Errorf("--openings: %v", err)
	}
	seed := f.Seed
	if seed == 0 {
		seed = bo.Seed
	}
	if seed == 0 {
		seed = 1
	}
	if bo.Order == "random" && bo.Seed == 0 {
		bo.Seed = seed
	}
	spec := &arbiterv1.MatchSpec{
		EngineA: matchspec.EngineToProto(cfg.Engines[0]), EngineB: matchspec.EngineToProto(cfg.Engines[1]),
		TimeControl: tc, BookName: plan.BookName, BookOrder: bo.Order, Seed: bo.Seed, BookStart: uint32(bo.Start),
		Games: uint64(f.Match.Games), Priority: int32(f.Priority), Throughput: f.Throughput, BatchPairs: uint32(f.BatchPairs),
		Adjudication: matchspec.AdjudicationToProto(cfg.Game.Adjudication),
		TimeMargin:   durationpb.New(cfg.Game.TimeMargin), HangTimeout: durationpb.New(cfg.Game.HangTimeout),
		ReferenceNps: f.ReferenceNPS, Event: f.Match.Event,
	}
	if bo.Order != "random" {
		spec.Seed = seed
	}
	for _, o := range book.Openings {
		spec.Openings = append(spec.Openings, matchspec.OpeningToProto(o))
		spec.Chess960 = spec.Chess960 || o.Chess960
	}
	if p := plan.SPRT; p != nil {
		spec.Sprt = &arbiterv1.SprtParams{Elo0: p.Elo0, Elo1: p.Elo1, Alpha: p.Alpha, Beta: p.Beta, Model: string(p.Model)}
	}
	return spec, plan, nil
}
