// Package spsaplan turns the flags of `arbiter submit spsa` and `arbiter
// tune` (the tuned engine, --each, openings, --params, the tune's size and
// schedule) into a Plan: an SpsaSpec for the cluster (Spec), or a tune
// played on this machine with the match runner (Run). Both read the
// parameters the same way and check them against the engine's own options
// before anything is submitted or played; every error refuses an input and
// names it by its flag.
//
// The seed rule makes the two agree: the tune's seed is --seed, else the
// openings' seed=, else 1; it fixes the order of a random book and every
// batch's perturbation, so the same flags give the same batches, openings
// and perturbations locally and on the cluster.
package spsaplan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/spsa"
)

// DefaultLocalBatchPairs is the batch size of a local tune when
// --batch-pairs is 0 (on the cluster the coordinator sizes batches from
// the time control).
const DefaultLocalBatchPairs = 4

// Flags are a tune's flags as given on the command line.
type Flags struct {
	Engine   string
	Each     string
	Openings string
	// Params is --params: from-engine[:NAMES], a file, or an inline list.
	Params     string
	Pairs      int
	BatchPairs int
	// Alpha, Gamma and ARatio are the schedule (the commands default them
	// to Fishtest's).
	Alpha, Gamma, ARatio float64
	Seed                 uint64

	Resign      string
	Draw        string
	MaxMoves    int
	TimeMargin  int // milliseconds
	HangTimeout int // milliseconds
	Event       string

	// Cluster only.
	Priority     int
	Throughput   float64
	ReferenceNPS uint64

	// Concurrency is the batches a local tune plays at once.
	Concurrency int
	// Remote: the tune runs on cluster workers, so a cmd= binary need not
	// exist here (its options are then read only when it does).
	Remote bool
}

// Plan is a checked tune.
type Plan struct {
	// Setup is the book, limits and game settings (no engines).
	Setup *matchplan.Plan
	// Engine is the tuned engine with its own options; its limits are in
	// Setup.Config.Limits.
	Engine match.EngineConfig
	// Travel is the engine as given when it travels to the workers
	// (upload=, source= or artifact=; zero otherwise): the client uploads
	// it before the tune is submitted.
	Travel enginespec.Spec
	// Config is the tune's design: parameters, pairs, batch size (0 on the
	// cluster: the coordinator's choice), schedule and seed.
	Config spsa.Config
	// Unchecked, when set, says why the parameters could not be checked
	// against the engine here (a cluster engine absent on this machine):
	// the workers will refuse an option the engine lacks.
	Unchecked string
	flags     Flags
}

// Parse checks the flags, loads the book and reads the parameters.
func Parse(ctx context.Context, f Flags) (*Plan, error) {
	mf := matchplan.Flags{Each: f.Each, Openings: f.Openings, Resign: f.Resign, Draw: f.Draw, MaxMoves: f.MaxMoves,
		TimeMargin: f.TimeMargin, HangTimeout: f.HangTimeout, Event: f.Event}
	setup, each, err := matchplan.ParseSetup(mf)
	if err != nil {
		return nil, err
	}
	p := &Plan{Setup: setup, flags: f}
	if p.Engine, p.Travel, err = engineOf(f.Engine, each, f.Remote); err != nil {
		return nil, err
	}
	// Both sides are this engine, so its own limits are the tune's.
	if e := &p.Engine; e.Limits != (match.Limits{}) {
		p.Setup.Config.Limits, e.Limits = e.Limits, match.Limits{}
	}
	if err := p.Setup.Config.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("--each: %v", err)
	}
	if err := p.parseDesign(f); err != nil {
		return nil, err
	}
	if p.Config.Params, p.Unchecked, err = readParams(ctx, p.Engine, p.Travel, f.Params); err != nil {
		return nil, err
	}
	if p.Engine.Proto == string(enginespec.Builtin) {
		opts := make(map[string]string, len(p.Engine.Options))
		for _, o := range p.Engine.Options {
			opts[o.Name] = o.Value
		}
		if err := spsa.CheckBuiltinWeights(p.Config.Params, opts); err != nil {
			return nil, fmt.Errorf("--engine %s: %v", p.Engine.Name, err)
		}
	}
	check := p.Config
	if check.BatchPairs == 0 {
		check.BatchPairs = 1 // the coordinator's choice; any size checks the rest
	}
	if err := check.Validate(); err != nil {
		return nil, fmt.Errorf("--params: %v", err)
	}
	return p, nil
}

// EngineParams reads --params for the engine of --engine as a tune would
// (`arbiter spsa params`).
func EngineParams(ctx context.Context, engine, params string) ([]spsa.Param, error) {
	e, _, err := engineOf(engine, enginespec.Spec{}, false)
	if err != nil {
		return nil, err
	}
	ps, _, err := readParams(ctx, e, enginespec.Spec{}, params)
	return ps, err
}

// readParams resolves --params for engine e and checks the parameters
// against its options (travel: as engineOf returns it). unchecked says why
// they could not be (a cluster engine absent here).
func readParams(ctx context.Context, e match.EngineConfig, travel enginespec.Spec, params string) (ps []spsa.Param, unchecked string, err error) {
	src, err := spsa.ParseSource(params, os.ReadFile)
	if err != nil {
		return nil, "", fmt.Errorf("--params: %v", err)
	}
	decls, unchecked, err := optionReader(ctx, e, travel, src)
	if err != nil {
		return nil, "", err
	}
	if ps, err = src.Params(decls); err != nil {
		return nil, "", fmt.Errorf("--params: %v", err)
	}
	if src.FromEngine {
		if ps, err = startsFromEngineSpec(e, ps); err != nil {
			return nil, "", err
		}
	}
	return ps, unchecked, nil
}

// engineOf reads --engine over --each: a UCI engine or the embedded
// one (an xboard engine has no spin options to set). A remote engine's
// program need not be on this machine, and may travel to the workers
// (upload=, source=, artifact=: returned as travel).
func engineOf(flag string, each enginespec.Spec, remote bool) (e match.EngineConfig, travel enginespec.Spec, err error) {
	if strings.TrimSpace(flag) == "" {
		return e, travel, errors.New("--engine: required (the engine to tune: name=N,builtin or name=N,cmd=PATH)")
	}
	spec, err := enginespec.Parse(flag, enginespec.Match)
	if err != nil {
		return e, travel, fmt.Errorf("--engine: %v", err)
	}
	if spec.HasNet() {
		return e, travel, fmt.Errorf("--engine %s: net= is for a test's engines; a tune plays the engine's own net", spec.Name)
	}
	if spec.MovegenGate != "" {
		return e, travel, fmt.Errorf("--engine %s: perft-gate= is for matches and tests; check a tune's engine with arbiter verify", spec.Name)
	}
	if spec.Travels() {
		if !remote {
			return e, travel, fmt.Errorf("--engine %s: upload=, source= and artifact= are for tunes on the cluster (submit spsa); here give cmd=", spec.Name)
		}
		travel = spec
	}
	if e, err = spec.MatchEngine(each); err != nil {
		return e, travel, fmt.Errorf("--engine %s: %v", spec.Name, err)
	}
	if e.Proto == "xboard" {
		return e, travel, fmt.Errorf("--engine %s: an xboard engine; a tune sets UCI spin options (give a UCI engine or builtin)", e.Name)
	}
	if e.Proto != string(enginespec.Builtin) && !remote {
		if _, err := engineproc.LookPath(e.Cmd, e.Dir); err != nil {
			return e, travel, fmt.Errorf("--engine %s: %v", e.Name, err)
		}
	}
	if e.Proto == string(enginespec.Builtin) {
		opts := make(map[string]string, len(e.Options))
		for _, o := range e.Options {
			opts[o.Name] = o.Value
		}
		if err := matchspec.CheckBuiltinOptions(e.Name, opts); err != nil {
			return e, travel, fmt.Errorf("--engine %s: %v", e.Name, err)
		}
	}
	return e, travel, nil
}

// parseDesign reads the tune's size, schedule and seed.
func (p *Plan) parseDesign(f Flags) error {
	c := &p.Config
	switch {
	case f.Pairs < 1 || f.Pairs > spsa.MaxPairs:
		return fmt.Errorf("--pairs %d: want 1 to %d game pairs (the whole tune)", f.Pairs, spsa.MaxPairs)
	case f.BatchPairs < 0:
		return fmt.Errorf("--batch-pairs %d: is negative", f.BatchPairs)
	}
	for _, fl := range []struct {
		name string
		v    float64
		max  float64
	}{{"--alpha", f.Alpha, spsa.MaxAlpha}, {"--gamma", f.Gamma, spsa.MaxGamma}, {"--A-ratio", f.ARatio, spsa.MaxARatio}} {
		if math.IsNaN(fl.v) || fl.v < 0 || fl.v > fl.max {
			return fmt.Errorf("%s %v: want a number from 0 to %v", fl.name, fl.v, fl.max)
		}
	}
	c.Pairs, c.Alpha, c.Gamma, c.ARatio = f.Pairs, f.Alpha, f.Gamma, f.ARatio
	c.BatchPairs = min(f.BatchPairs, f.Pairs)
	if c.BatchPairs == 0 && !f.Remote {
		c.BatchPairs = min(DefaultLocalBatchPairs, f.Pairs)
	}
	if !f.Remote && (f.Concurrency < 1 || f.Concurrency > 1024) {
		return fmt.Errorf("--concurrency %d: want 1 to 1024 batches at once", f.Concurrency)
	}
	if f.Priority < -1000 || f.Priority > 1000 {
		return fmt.Errorf("--priority %d: want -1000 to 1000", f.Priority)
	}
	if math.IsNaN(f.Throughput) || f.Throughput < 0 {
		return fmt.Errorf("--throughput %v: must not be negative", f.Throughput)
	}
	bo := &p.Setup.BookOptions
	if f.Seed != 0 && match.Shuffled(bo.Order) && bo.Seed != 0 && bo.Seed != f.Seed {
		return fmt.Errorf("--seed %d and --openings seed=%d: a tune has one seed (it orders the openings and fixes every perturbation); give one", f.Seed, bo.Seed)
	}
	c.Seed = f.Seed
	if c.Seed == 0 {
		c.Seed = bo.Seed
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if match.Shuffled(bo.Order) && bo.Seed != c.Seed {
		// A random book is ordered by the tune's seed, as the coordinator
		// orders it.
		bo.Seed = c.Seed
		book, err := match.LoadBook(*bo)
		if err != nil {
			return fmt.Errorf("--openings: %v", err)
		}
		p.Setup.Book, p.Setup.Config.Openings = book, book.At
	}
	return nil
}

// optionReader is how an engine's declared options are read: the
// embedded engine's table, or a UCI engine asked with "uci". It is nil
// when the engine is not on this machine (a cluster engine), which a list
// of parameters survives (unchecked says so) and from-engine does not. An
// uploaded binary is asked here when it runs here; a source tree or an
// artifact= never is.
func optionReader(ctx context.Context, e match.EngineConfig, travel enginespec.Spec, src spsa.Source) (read func() ([]spsa.OptionDecl, error), unchecked string, err error) {
	if e.Proto == string(enginespec.Builtin) {
		return spsa.BuiltinOptions, "", nil
	}
	if travel.Travels() {
		return uploadOptions(ctx, e, travel, src)
	}
	if _, err := engineproc.LookPath(e.Cmd, e.Dir); err != nil {
		if src.FromEngine {
			return nil, "", fmt.Errorf("--params from-engine: the options of engine %s are read on this machine, where it is missing: %v", e.Name, err)
		}
		return nil, fmt.Sprintf("engine %s is not on this machine: its options were not read, so the parameters are checked by the workers", e.Name), nil
	}
	return func() ([]spsa.OptionDecl, error) {
		decls, err := spsa.ReadUCIOptions(ctx, engineproc.Config{Path: e.Cmd, Args: e.Args, Dir: e.Dir}, e.StartTimeout)
		if err != nil {
			return nil, fmt.Errorf("engine %s: %v", e.Name, err)
		}
		return decls, nil
	}, "", nil
}

// uploadOptions reads the options of an engine that travels: from the
// binary of upload= when it runs on this machine. Otherwise a list of
// parameters goes unchecked (the workers check it) and from-engine is
// refused, saying to give the list.
func uploadOptions(ctx context.Context, e match.EngineConfig, travel enginespec.Spec, src spsa.Source) (read func() ([]spsa.OptionDecl, error), unchecked string, err error) {
	var why string
	switch {
	case travel.Source != "":
		why = "source=" + clip(travel.Source) + " is built on the workers"
	case travel.Artifact != "":
		why = "artifact=" + clip(travel.Artifact) + " is on the coordinator, not here"
	default:
		// Absolute, so that a bare file name is the file here, not a
		// program on PATH.
		path, err := filepath.Abs(travel.Upload)
		if err != nil {
			return nil, "", fmt.Errorf("--engine %s: upload=%s: %v", e.Name, clip(travel.Upload), err)
		}
		decls, err := spsa.ReadUCIOptions(ctx, engineproc.Config{Path: path, Args: e.Args}, e.StartTimeout)
		if err == nil {
			return func() ([]spsa.OptionDecl, error) { return decls, nil }, "", nil
		}
		why = fmt.Sprintf("upload=%s does not run as a UCI engine on this machine (%v)", clip(travel.Upload), err)
	}
	if src.FromEngine {
		return nil, "", fmt.Errorf("--params from-engine: engine %s: its options cannot be read here: %s; give the parameters as a list or a file", e.Name, why)
	}
	return nil, fmt.Sprintf("engine %s: %s: its options were not read, so the parameters are checked by the workers", e.Name, why), nil
}

// clip is s cut to a length fit for a message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// startsFromEngineSpec starts every parameter the engine spec sets
// (option.X=V on --engine) at that value rather than at the engine's
// default: from-engine tunes the engine as given.
func startsFromEngineSpec(e match.EngineConfig, ps []spsa.Param) ([]spsa.Param, error) {
	for i := range ps {
		for _, o := range e.Options {
			if !strings.EqualFold(o.Name, ps[i].Name) {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(o.Value), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("--engine %s: option %s=%s: a tuned parameter's value must be a number", e.Name, o.Name, apierr.Q(o.Value))
			}
			ps[i].Start = v
		}
	}
	if err := spsa.CheckParams(ps); err != nil {
		return nil, fmt.Errorf("--params from-engine with --engine's options: %v", err)
	}
	return ps, nil
}

// Limits is the tune's time control as people read it.
func (p *Plan) Limits() string { return p.Setup.Config.Limits.String() }

// Spec is the tune for the coordinator: the book in file order with the
// order, seed and start that fix the order of play; batch pairs 0 lets the
// coordinator size batches.
func (p *Plan) Spec() (*arbiterv1.SpsaSpec, error) {
	cs, err := p.Setup.ClusterSetup(p.Config.Seed)
	if err != nil {
		return nil, err
	}
	c, f := p.Config, p.flags
	engine := matchspec.EngineToProto(p.Engine)
	if t := p.Travel; t.Travels() {
		// Upload= and source= get their hash when the client uploads them
		// (artifactclient.UploadEngine), before the tune is sent.
		engine.Command, engine.Dir = "", ""
		engine.Artifact = &arbiterv1.EngineArtifact{Sha256: t.Artifact, Build: t.Build, Exe: t.Exe, Bench: t.Bench}
	}
	return &arbiterv1.SpsaSpec{
		Engine: engine, Params: spsaspec.ParamsToProto(c.Params),
		Pairs: uint64(c.Pairs), BatchPairs: uint32(c.BatchPairs),
		Alpha: proto.Float64(c.Alpha), Gamma: proto.Float64(c.Gamma), ARatio: proto.Float64(c.ARatio),
		TimeControl: cs.TimeControl, Openings: cs.Openings, BookName: cs.BookName, BookOrder: cs.BookOrder, Seed: cs.Seed,
		BookStart: cs.BookStart, Chess960: cs.Chess960, Adjudication: cs.Adjudication, TimeMargin: cs.TimeMargin,
		HangTimeout: cs.HangTimeout, Priority: int32(f.Priority), Throughput: f.Throughput, ReferenceNps: f.ReferenceNPS,
		Event: f.Event,
	}, nil
}
