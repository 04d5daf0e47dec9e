package spsaplan

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spsa"
)

// RunOptions are how a local tune reports and what it plays with.
type RunOptions struct {
	// Out receives the tune's first line, a line per update (unless
	// Quiet) and the parameters at the end.
	Out   io.Writer
	Quiet bool
	// PGN, when set, receives every game.
	PGN io.Writer
	// Record is the record file ("" for none): created, or resumed when it
	// records this tune.
	Record string
	// Builtin makes the embedded engine's players (match/builtin.New).
	Builtin match.BuiltinFactory
}

// maxLineParams is how many parameters an update's line shows.
const maxLineParams = 6

// Run plays the tune on this machine (spsa.Local): its batches, in order,
// Concurrency at a time, each result applied as it comes. It returns the
// tune as it stands, also on an error or an interrupt (with the error):
// with a record, running again resumes it.
func (p *Plan) Run(ctx context.Context, o RunOptions) (*spsa.Tune, error) {
	t, err := spsa.New(p.Config)
	if err != nil {
		return nil, fmt.Errorf("--params: %v", err)
	}
	cfg := &p.Setup.Config
	fmt.Fprintf(o.Out, "Tune %s: %d parameters, %d pairs in %d batches of %d, %s, %s, concurrency %d, seed %d\n", p.Engine.Name,
		len(p.Config.Params), p.Config.Pairs, p.Config.Batches(), p.Config.BatchPairs, p.Limits(), p.Setup.BookName,
		p.flags.Concurrency, p.Config.Seed)
	var rec *record
	skip := map[int]bool{}
	if o.Record != "" {
		var done []spsa.Update
		rec, done, err = openRecord(o.Record, recordHeader{Config: p.Config, Setup: p.setupLine()})
		if err != nil {
			return nil, err
		}
		defer rec.close()
		if len(done) > 0 {
			if t, err = spsa.Replay(p.Config, done); err != nil {
				return nil, fmt.Errorf("--record %s: %v", o.Record, err)
			}
			for _, u := range done {
				skip[u.Batch] = true
			}
			fmt.Fprintf(o.Out, "Resumed from %s: %d of %d updates applied\n", o.Record, len(done), p.Config.Batches())
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := cfg.PGNOptions
	if opts.Event == "" {
		opts.Event = "Arbiter tune"
	}
	var recErr error
	started := time.Now()
	l := &spsa.Local{Engine: p.Engine, Limits: cfg.Limits, Game: cfg.Game, Openings: cfg.Openings, Concurrency: p.flags.Concurrency,
		Builtin: o.Builtin, PGN: o.PGN, PGNOptions: opts,
		OnUpdate: func(u spsa.Update, t *spsa.Tune) {
			if rec != nil && recErr == nil {
				if recErr = rec.add(u); recErr != nil {
					cancel()
				}
			}
			if !o.Quiet {
				fmt.Fprintln(o.Out, p.updateLine(u, t))
			}
		}}
	_, err = l.Run(ctx, t, skip)
	if recErr != nil {
		return t, recErr
	}
	if err != nil {
		return t, err
	}
	p.PrintParams(o.Out, t.Theta())
	fmt.Fprintf(o.Out, "Finished tune: %d updates, %d pairs in %v\n", t.Updates(), t.PairsApplied(), time.Since(started).Round(time.Millisecond))
	return t, nil
}

// updateLine is an update as a local tune reports it: the batch's result
// (engine A, θ + c_k·Δ) and where the parameters stand.
func (p *Plan) updateLine(u spsa.Update, t *spsa.Tune) string {
	_, pairs := p.Config.BatchRange(u.Batch)
	var b strings.Builder
	fmt.Fprintf(&b, "update %d/%d (batch %d): +%d =%d -%d", t.Updates(), p.Config.Batches(), u.Batch, u.Wins, 2*pairs-u.Wins-u.Losses, u.Losses)
	theta := t.Theta()
	for i, par := range p.Config.Params {
		if i == maxLineParams {
			fmt.Fprintf(&b, " (+%d more)", len(theta)-i)
			break
		}
		fmt.Fprintf(&b, "  %s %.2f", par.Name, theta[i])
	}
	return b.String()
}

// PrintParams prints every parameter's start, current value (θ, and as
// the engine is given it), range and schedule ends.
func (p *Plan) PrintParams(w io.Writer, theta []float64) {
	PrintParams(w, p.Config.Params, theta)
}

// PrintParams prints ps with their values theta: start, θ, θ as the
// engine takes it, min, max, c_end, r_end.
func PrintParams(w io.Writer, ps []spsa.Param, theta []float64) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARAM\tSTART\tCURRENT\tVALUE\tMIN\tMAX\tC_END\tR_END")
	rounded := spsa.Rounded(ps, theta)
	for i, par := range ps {
		fmt.Fprintf(tw, "%s\t%g\t%.3f\t%s\t%g\t%g\t%g\t%g\n", par.Name, par.Start, theta[i], par.OptionValue(rounded[i]), par.Min, par.Max, par.CEnd, par.REnd)
	}
	tw.Flush()
}

// setupLine is what a record keeps of the engine, limits and book.
func (p *Plan) setupLine() string {
	e := p.Engine
	bo := p.Setup.BookOptions
	return fmt.Sprintf("engine %s (%s %s %v) options %v; %s; book %s order %s start %d plies %d", e.Name, e.Proto, e.Cmd, e.Args, e.Options,
		p.Limits(), p.Setup.BookName, bo.Order, bo.Start, bo.Plies)
}
