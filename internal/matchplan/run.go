package matchplan

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/sprt"
)

// RunOptions are how a local match reports and what it plays with.
type RunOptions struct {
	// Out receives a line per game (unless Quiet), the live report every
	// RatingInterval games (0: at the end only) and the summary.
	Out            io.Writer
	Quiet          bool
	RatingInterval int
	// PGN, when set, receives every game.
	PGN io.Writer
	// Builtin makes the embedded engine's players (match/builtin.New).
	Builtin match.BuiltinFactory
}

// Run plays the plan on this machine with fastchess's live report,
// stopping on the SPRT bound, and prints the summary. An error is the
// match's own (an engine that cannot start, a book that runs out).
func (p *Plan) Run(ctx context.Context, o RunOptions) error {
	cfg := p.Config
	cfg.PGN = o.PGN
	cfg.Builtin = o.Builtin
	var seq *sprt.Sequential
	if p.SPRT != nil {
		seq, _ = sprt.NewSequential(*p.SPRT, 1)
	}
	rep := &reporter{out: o.Out, plan: p, seq: seq}
	games := 0
	cfg.OnPair = func(pr *match.PairResult, t *match.Totals) bool {
		for _, g := range pr.Games {
			games++
			if !o.Quiet {
				fmt.Fprintf(o.Out, "Finished game %s (%s vs %s): %s {%s}\n", g.Round, g.White, g.Black, g.Result, g.Reason)
				for _, inc := range g.Incidents {
					if inc.Kind != match.IncOverrun {
						fmt.Fprintf(o.Out, "  incident: %s\n", inc)
					}
				}
			}
		}
		stop := false
		if seq != nil {
			st, err := seq.Update(t.Results)
			if err == nil && st.State != sprt.Continue {
				stop = true
			}
		}
		if stop || (o.RatingInterval > 0 && games/o.RatingInterval != (games-2)/o.RatingInterval) {
			rep.print(t)
		}
		return stop
	}
	fmt.Fprintf(o.Out, "Match %s vs %s: %s, %s, concurrency %d\n", cfg.Engines[0].Name, cfg.Engines[1].Name, p.Limits(), p.BookName, cfg.Concurrency)
	t, err := match.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if rep.printed != t.Games {
		rep.print(t)
	}
	rep.summary(t)
	return nil
}

// reporter prints the live report in fastchess's layout.
type reporter struct {
	out  io.Writer
	plan *Plan
	seq  *sprt.Sequential
	// printed is the game count of the last report, so the final report is
	// not repeated when the last pair just printed one.
	printed int
}

func (r *reporter) print(t *match.Totals) {
	if t.Results.Pentanomial == nil {
		return
	}
	e := r.plan.Config.Engines
	fmt.Fprint(r.out, sprt.FormatReport(sprt.Report{
		First: e[0].Name, Second: e[1].Name,
		Details: r.plan.Limits() + ", " + r.plan.BookName,
		Results: t.Results,
		SPRT:    r.plan.SPRT,
	}))
	r.printed = t.Games
}

func (r *reporter) summary(t *match.Totals) {
	w := r.out
	if r.seq != nil {
		st := r.seq.Status()
		switch st.State {
		case sprt.Accepted:
			fmt.Fprintln(w, "SPRT: H1 was accepted")
		case sprt.Rejected:
			fmt.Fprintln(w, "SPRT: H0 was accepted")
		default:
			fmt.Fprintln(w, "SPRT: no decision")
		}
	}
	rate := 0.0
	if t.Elapsed > 0 {
		rate = float64(t.Games) / t.Elapsed.Minutes()
	}
	fmt.Fprintf(w, "Games: %d in %v (%.1f games/min); time losses %d, crashes %d, hangs %d, illegal moves %d, overruns %d (max %v)\n",
		t.Games, t.Elapsed.Round(time.Millisecond), rate, t.TimeLosses, t.Crashes, t.Hangs, t.Illegal, t.Overruns, t.MaxOverrun.Round(time.Microsecond))
	// The runner's own CPU, never the engines' (they are children).
	if u, ok := cpuUsage(); ok && t.Games > 0 {
		cpu := u.user + u.system
		fmt.Fprintf(w, "Runner CPU: %.2f ms/game (%v total: user %v, system %v; engines %v)\n", float64(cpu.Microseconds())/1000/float64(t.Games), cpu.Round(time.Millisecond),
			u.user.Round(time.Millisecond), u.system.Round(time.Millisecond), u.children.Round(time.Millisecond))
	}
	fmt.Fprintln(w, "Finished match")
}
