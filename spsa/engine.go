package spsa

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine/eval"
	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/protocol"
)

// Parameters straight from an engine: the UCI options it declares (a UCI
// binary started through engineproc, or the embedded engine's own table),
// every spin option with its default as start and its min/max as range.
// The step (c_end) is the embedded engine's Step for its parameters, and
// Stockfish's TUNE default (max − min) / 20 for other engines; r_end is
// DefaultREnd.

// OptionDecl is a UCI option as an engine declares it (typed and read by
// enginehost/protocol), with its tuning step.
type OptionDecl struct {
	protocol.Option
	// Step is the engine's own tuning step (the embedded engine's Params);
	// 0 when it has none.
	Step int
}

// ReadUCIOptions starts a UCI engine, asks for its options
// (enginehost/protocol's handshake) and stops it. The error names the
// program when it does not start or does not answer uciok within timeout
// (10s when zero).
func ReadUCIOptions(ctx context.Context, cfg engineproc.Config, timeout time.Duration) ([]OptionDecl, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	c, err := protocol.Start(cfg)
	if err != nil {
		return nil, err
	}
	defer c.Quit("quit", time.Second)
	c.Watch(ctx)
	u := protocol.NewUCI(c)
	if err := u.Handshake(timeout); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("engine %s: %w", quote(cfg.Path), err)
	}
	list := u.Options.List()
	list = list[:min(len(list), 10*MaxParams)]
	out := make([]OptionDecl, 0, len(list))
	for _, o := range list {
		out = append(out, OptionDecl{Option: o})
	}
	return out, nil
}

// BuiltinOptions are the embedded engine's options, with the tuning step
// of each of its parameters.
func BuiltinOptions() ([]OptionDecl, error) {
	// Hash 1: building the engine must not allocate its default table.
	e, err := search.NewEngine(map[string]string{search.OptHash: "1"})
	if err != nil {
		return nil, err
	}
	var out []OptionDecl
	for _, s := range e.Options() {
		o := OptionDecl{Option: protocol.Option{Name: s.Name, Type: protocol.OptionType(s.Type), Default: s.Default}}
		if o.Type == protocol.Spin {
			o.Min, o.Max, o.HasRange = int64(s.Min), int64(s.Max), true
		}
		for _, table := range [][]eval.Param{eval.Params[:], search.Params[:]} {
			if i := eval.FindParam(table, s.Name); i >= 0 {
				o.Step = table[i].Step
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// notTuned are spin options that set up an engine rather than make it play
// better: FromEngine leaves them out unless they are named.
var notTuned = map[string]bool{"multipv": true, "move overhead": true,
	"minimum thinking time": true, "slow mover": true, "nodestime": true, "skill level": true,
	"syzygyprobedepth": true, "syzygyprobelimit": true, "contempt": true, "search time": true, "search depth": true}

// tunable: not a set-up option by name, nor one of the tables, threads
// and caches that engines name in their own ways ("Hash", "Number of
// Threads", "Bitbases Cache Size").
func tunable(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"hash", "thread", "cache"} {
		if strings.Contains(n, w) {
			return false
		}
	}
	return !notTuned[n] && !strings.HasPrefix(n, "uci_")
}

// FromEngine makes parameters of an engine's spin options: the ones named
// (any letter case), or every tunable one when names is empty (not Hash,
// Threads, MultiPV, Move Overhead, UCI_*, ...). Start is the default, the
// range the declared min and max.
func FromEngine(decls []OptionDecl, names []string) ([]Param, error) {
	var picked []OptionDecl
	if len(names) == 0 {
		for _, d := range decls {
			if d.Type == protocol.Spin && tunable(d.Name) {
				picked = append(picked, d)
			}
		}
		if len(picked) == 0 {
			return nil, errors.New("params from-engine: the engine declares no spin option to tune")
		}
	}
	for _, n := range names {
		d, err := find(decls, strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		if d.Type != protocol.Spin {
			return nil, fmt.Errorf("param %s: the engine's option is a %s, not a spin", quote(d.Name), d.Type)
		}
		picked = append(picked, d)
	}
	out := make([]Param, 0, len(picked))
	for _, d := range picked {
		p, err := paramOf(d)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := CheckParams(out); err != nil {
		return nil, err
	}
	return out, nil
}

func find(decls []OptionDecl, name string) (OptionDecl, error) {
	for _, d := range decls {
		if strings.EqualFold(d.Name, name) {
			return d, nil
		}
	}
	return OptionDecl{}, fmt.Errorf("param %s: the engine has no option of that name", quote(name))
}

func paramOf(d OptionDecl) (Param, error) {
	q := quote(d.Name)
	if !d.HasRange {
		return Param{}, fmt.Errorf("param %s: the engine's spin option declares no min and max", q)
	}
	if d.Real {
		return Param{}, fmt.Errorf("param %s: the engine's spin option is real-valued (%s..%s): declare the parameter with its start, range and steps", q, d.MinText, d.MaxText)
	}
	start, err := strconv.ParseInt(strings.TrimSpace(d.Default), 10, 64)
	if err != nil {
		return Param{}, fmt.Errorf("param %s: the engine's default %s is not an integer", q, quote(d.Default))
	}
	p := Param{Name: d.Name, Start: float64(start), Min: float64(d.Min), Max: float64(d.Max), CEnd: float64(d.Step), REnd: DefaultREnd}
	if d.Step <= 0 {
		p.CEnd = float64(d.Max-d.Min) / 20
	}
	if p.CEnd <= 0 {
		return Param{}, fmt.Errorf("param %s: min = max = %d leaves nothing to tune", q, d.Min)
	}
	return p, nil
}

// CheckAgainst refuses parameters that the engine cannot be given: an
// option it lacks, one that is not a spin (a real-valued parameter needs a
// string option), a range reaching outside the engine's.
func CheckAgainst(ps []Param, decls []OptionDecl) error {
	for _, p := range ps {
		d, err := find(decls, p.Name)
		if err != nil {
			return err
		}
		q := quote(p.Name)
		switch {
		case p.Float && d.Type != protocol.String:
			return fmt.Errorf("param %s: real-valued, but the engine's option is a %s (a string option takes real values)", q, d.Type)
		case p.Float:
			continue
		case d.Type != protocol.Spin:
			return fmt.Errorf("param %s: the engine's option is a %s, not a spin", q, d.Type)
		case !d.HasRange:
			continue
		case d.Real && p.Min < d.MinReal:
			return fmt.Errorf("param %s: min %s is below the engine's min %s", q, num(p.Min), d.MinText)
		case d.Real && p.Max > d.MaxReal:
			return fmt.Errorf("param %s: max %s is above the engine's max %s", q, num(p.Max), d.MaxText)
		case d.Real:
			continue
		case math.Ceil(p.Min) < float64(d.Min):
			return fmt.Errorf("param %s: min %s is below the engine's min %d", q, num(p.Min), d.Min)
		case math.Floor(p.Max) > float64(d.Max):
			return fmt.Errorf("param %s: max %s is above the engine's max %d", q, num(p.Max), d.Max)
		}
	}
	return nil
}

// CheckBuiltinWeights refuses a tune of the embedded engine's hand-written
// evaluation weights while its net evaluates (search.CheckEvalWeights): the
// tune would chase noise. options are the engine's fixed options.
func CheckBuiltinWeights(ps []Param, options map[string]string) error {
	all := make(map[string]string, len(options)+len(ps))
	for k, v := range options {
		all[k] = v
	}
	for _, p := range ps {
		if _, ok := all[p.Name]; !ok {
			all[p.Name] = num(p.Start)
		}
	}
	if err := search.CheckEvalWeights(all); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	return nil
}
