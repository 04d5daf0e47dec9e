// Package netloop is the NNUE net loop as one command (`arbiter net loop`):
// generate data with the current best net, train a net on it, SPRT the new
// net against the best, ship it on H1, K times. Every step is
// content-addressed under the loop's directory: its key is the SHA-256 of
// its kind, its settings and its inputs' hashes, its output is stored
// under that key and a done marker is written last, so a stopped loop
// resumes where it stood and a repeated step is not recomputed.
//
// The core (plan.go) decides the next step from the directory's state
// with no I/O; the runner (run.go) executes steps through the library
// functions of `arbiter datagen` (datagen.Local), `arbiter train` (train)
// and `arbiter match --sprt` (spec/matchplan); with Runner.Farm (farm.go)
// datagen is a DATAGEN job (through client/datagenclient), the SPRT a
// cluster test and a ship also sets the coordinator's default net, each
// job's id kept in its step's directory so that a rerun re-attaches to
// it. docs/nnue.md.
package netloop

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/train"
)

// Bounds of the loop's flags.
const (
	MaxGenerations = 100
	MaxPositions   = 100_000_000
	MaxGamesCap    = 1_000_000
	MaxNodes       = 10_000_000
)

// Settings are what a loop is: written to DIR/loop.json on its first run;
// a later run with other settings is refused (Diff) unless --force-new.
// The number of generations is not one of them: a loop can be extended.
type Settings struct {
	Engine    string `json:"engine"`    // --engine, the embedded engine (builtin)
	Each      string `json:"each"`      // --each: nodes=N[,option.X=V]
	Positions int    `json:"positions"` // positions a generation's data has
	Seed      uint64 `json:"seed"`      // generation g's data has the seed Seed+g-1
	Train     Train  `json:"train"`
	TrainOn   string `json:"train_on"` // new | all
	SPRT      string `json:"sprt"`
	GamesCap  int    `json:"games_cap"`
	Openings  string `json:"openings"` // --openings of the SPRT ("": openings the loop draws)
}

// Train is --train: arbiter train's settings that make the net (not its
// threads).
type Train struct {
	Epochs  int     `json:"epochs"`
	Batch   int     `json:"batch"`
	LR      float64 `json:"lr"`
	LRFinal float64 `json:"lr_final"`
	WDL     float64 `json:"wdl"`
	Scale   float64 `json:"scale"`
	Val     float64 `json:"val"`
	Decay   float64 `json:"weight_decay"`
	Seed    uint64  `json:"seed"`
}

// Config is the training's train.Config on threads.
func (t Train) Config(threads int) train.Config {
	return train.Config{Epochs: t.Epochs, BatchSize: t.Batch, LR: t.LR, LRFinal: t.LRFinal, WDL: t.WDL, Scale: t.Scale,
		Val: t.Val, Seed: t.Seed, Threads: threads, Decay: t.Decay}
}

// Flags are the command line of `arbiter net loop`, before checking.
type Flags struct {
	Dir         string
	Engine      string
	Generations int
	Positions   int
	Each        string
	Train       string // KEY=VAL,...
	TrainOn     string
	SPRT        string
	GamesCap    int
	Openings    string
	Seed        uint64
	Concurrency int
	Threads     int
}

// DefaultSPRT are the SPRT's bounds unless --sprt says otherwise.
const DefaultSPRT = "elo0=0,elo1=5"

// TrainKeys are the keys --train takes.
var TrainKeys = []string{"epochs", "batch", "lr", "lr-final", "wdl", "scale", "val", "weight-decay", "seed"}

// Check validates f and returns the loop's settings. Errors name the flag
// and what is wrong with it.
func (f Flags) Check() (Settings, error) {
	var s Settings
	if f.Dir == "" {
		return s, fmt.Errorf("--dir: required (the directory the loop keeps its steps in)")
	}
	if f.Generations < 1 || f.Generations > MaxGenerations {
		return s, fmt.Errorf("--generations %d: must be between 1 and %d", f.Generations, MaxGenerations)
	}
	if f.Positions < 1 || f.Positions > MaxPositions {
		return s, fmt.Errorf("--positions %d: must be between 1 and %d", f.Positions, MaxPositions)
	}
	if f.GamesCap < 2 || f.GamesCap > MaxGamesCap || f.GamesCap%2 != 0 {
		return s, fmt.Errorf("--games-cap %d: must be even (game pairs) and between 2 and %d", f.GamesCap, MaxGamesCap)
	}
	if f.Concurrency < 1 || f.Concurrency > 1024 {
		return s, fmt.Errorf("--concurrency %d: must be between 1 and 1024", f.Concurrency)
	}
	if f.Threads < 1 || f.Threads > 256 {
		return s, fmt.Errorf("--threads %d: must be between 1 and 256", f.Threads)
	}
	if err := checkEngine(f.Engine); err != nil {
		return s, err
	}
	if _, err := Nodes(f.Each); err != nil {
		return s, err
	}
	cfg, err := ParseTrain(f.Train)
	if err != nil {
		return s, err
	}
	if f.TrainOn != "new" && f.TrainOn != "all" {
		return s, fmt.Errorf("--train-on %q: want new (the generation's data) or all (every generation's so far)", f.TrainOn)
	}
	sp := f.SPRT
	if sp == "" {
		sp = DefaultSPRT
	}
	if _, err := matchplan.ParseSPRT(sp); err != nil {
		return s, fmt.Errorf("--sprt %q: %v", sp, err)
	}
	// The SPRT's match as it will be played (its engines aside), checked
	// now rather than after a generation's datagen and training.
	if f.Openings != "" {
		mf := matchplan.Flags{Engines: []string{"name=a,builtin", "name=b,builtin"}, Each: f.Each, Openings: f.Openings,
			Games: f.GamesCap, SPRT: sp, Concurrency: 1, Recover: true, HangTimeout: 30000}
		if _, err := matchplan.Parse(mf); err != nil {
			return s, fmt.Errorf("the SPRT's match: %v", err)
		}
	}
	return Settings{Engine: f.Engine, Each: f.Each, Positions: f.Positions, Seed: f.Seed, Train: cfg, TrainOn: f.TrainOn,
		SPRT: sp, GamesCap: f.GamesCap, Openings: f.Openings}, nil
}

// checkEngine refuses an --engine that is not the embedded engine: the
// loop trains the embedded engine's net architecture and gives it to the
// engine by its EvalFile option, which the loop sets itself.
func checkEngine(spec string) error {
	if spec == "" {
		return fmt.Errorf("--engine: required (the embedded engine, e.g. name=dev,builtin)")
	}
	es, err := enginespec.Parse(spec, enginespec.LocalMatch)
	if err != nil {
		return fmt.Errorf("--engine %q: %v", spec, err)
	}
	if es.Proto != enginespec.Builtin || es.Travels() || es.HasNet() {
		return fmt.Errorf("--engine %q: not the embedded engine: the loop trains the embedded engine's net ((768→128)×2→1) and only builtin takes it; give name=NAME,builtin", spec)
	}
	for _, o := range es.Options {
		if strings.EqualFold(o.Key, "EvalFile") || strings.EqualFold(o.Key, "UseNNUE") {
			return fmt.Errorf("--engine %q: option.%s: the loop sets the engine's net itself (the current best net)", spec, o.Key)
		}
	}
	if len(es.Limits) > 0 {
		return fmt.Errorf("--engine %q: %s=: give the search limit in --each nodes=N", spec, es.Limits[0].Key)
	}
	return nil
}

// Nodes reads --each: nodes=N is required, the only limit (datagen plays
// at fixed nodes), options may follow.
func Nodes(each string) (int, error) {
	if each == "" {
		return 0, fmt.Errorf("--each: required: nodes=N (the nodes a move, in datagen and in the SPRT)")
	}
	es, err := enginespec.Parse(each, enginespec.Each)
	if err != nil {
		return 0, fmt.Errorf("--each %q: %v", each, err)
	}
	nodes := 0
	for _, l := range es.Limits {
		if l.Key != "nodes" {
			return 0, fmt.Errorf("--each %q: %s=: the loop plays at fixed nodes only (nodes=N)", each, l.Key)
		}
		n, err := strconv.Atoi(l.Value)
		if err != nil || n < 1 || n > MaxNodes {
			return 0, fmt.Errorf("--each %q: nodes=%s: must be an integer between 1 and %d", each, l.Value, MaxNodes)
		}
		nodes = n
	}
	if nodes == 0 {
		return 0, fmt.Errorf("--each %q: nodes=N is required", each)
	}
	for _, o := range es.Options {
		if strings.EqualFold(o.Key, "EvalFile") || strings.EqualFold(o.Key, "UseNNUE") {
			return 0, fmt.Errorf("--each %q: option.%s: the loop sets the engine's net itself", each, o.Key)
		}
	}
	return nodes, nil
}

// ParseTrain reads --train KEY=VAL,... over train.DefaultConfig (keys:
// TrainKeys).
func ParseTrain(v string) (Train, error) {
	cfg := train.DefaultConfig()
	if strings.TrimSpace(v) != "" {
		for _, part := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok {
				return Train{}, fmt.Errorf("--train: %q is not KEY=VALUE (keys: %s)", part, strings.Join(TrainKeys, ", "))
			}
			if err := setTrain(&cfg, k, val); err != nil {
				return Train{}, fmt.Errorf("--train: %v", err)
			}
		}
	}
	if err := cfg.Validate(); err != nil {
		return Train{}, fmt.Errorf("--train: %v", err)
	}
	return Train{Epochs: cfg.Epochs, Batch: cfg.BatchSize, LR: cfg.LR, LRFinal: cfg.LRFinal, WDL: cfg.WDL, Scale: cfg.Scale,
		Val: cfg.Val, Decay: cfg.Decay, Seed: cfg.Seed}, nil
}

func setTrain(cfg *train.Config, k, val string) error {
	if !slices.Contains(TrainKeys, k) {
		return fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(TrainKeys, ", "))
	}
	var err error
	switch k {
	case "epochs", "batch":
		var n int
		if n, err = strconv.Atoi(val); err == nil {
			if k == "epochs" {
				cfg.Epochs = n
			} else {
				cfg.BatchSize = n
			}
		}
	case "seed":
		cfg.Seed, err = strconv.ParseUint(val, 10, 64)
	default:
		var x float64
		if x, err = strconv.ParseFloat(val, 64); err == nil {
			*map[string]*float64{"lr": &cfg.LR, "lr-final": &cfg.LRFinal, "wdl": &cfg.WDL, "scale": &cfg.Scale,
				"val": &cfg.Val, "weight-decay": &cfg.Decay}[k] = x
		}
	}
	if err != nil {
		return fmt.Errorf("%s=%q: not a number", k, val)
	}
	return nil
}

// Diff names the first setting in which b (this run's) differs from a
// (the directory's loop), "" when they are the same loop.
func Diff(a, b Settings) string {
	d := func(name string, x, y any) string {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			return fmt.Sprintf("%s: the directory's loop has %v, this run %v", name, x, y)
		}
		return ""
	}
	for _, c := range []string{
		d("--engine", a.Engine, b.Engine), d("--each", a.Each, b.Each), d("--positions", a.Positions, b.Positions),
		d("--seed", a.Seed, b.Seed), trainDiff(a.Train, b.Train),
		d("--train-on", a.TrainOn, b.TrainOn), d("--sprt", a.SPRT, b.SPRT), d("--games-cap", a.GamesCap, b.GamesCap),
		d("--openings", a.Openings, b.Openings),
	} {
		if c != "" {
			return c
		}
	}
	return ""
}

// trainDiff names the --train keys in which b differs from a.
func trainDiff(a, b Train) string {
	va, vb := a.values(), b.values()
	var diffs []string
	for _, k := range TrainKeys {
		if va[k] != vb[k] {
			diffs = append(diffs, fmt.Sprintf("%s: the directory's loop has %s, this run %s", k, va[k], vb[k]))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return "--train " + strings.Join(diffs, "; ")
}

// values are t's settings by --train key, as text.
func (t Train) values() map[string]string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return map[string]string{"epochs": strconv.Itoa(t.Epochs), "batch": strconv.Itoa(t.Batch), "lr": g(t.LR), "lr-final": g(t.LRFinal),
		"wdl": g(t.WDL), "scale": g(t.Scale), "val": g(t.Val), "weight-decay": g(t.Decay), "seed": strconv.FormatUint(t.Seed, 10)}
}
