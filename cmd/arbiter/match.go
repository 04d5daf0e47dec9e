package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/engineproc"
	"github.com/arbiter-chess/arbiter/internal/enginespec"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/sprt"
)

func init() { subcommands = append(subcommands, newMatchCommand) }

// matchFlags are the raw flag values; parseMatchFlags turns them into a
// match.MatchConfig, refusing bad input with an error naming the flag.
type matchFlags struct {
	engines        []string
	each           string
	openings       string
	games          int
	sprt           string
	concurrency    int
	pgnout         string
	resign         string
	draw           string
	maxMoves       int
	timeMargin     int
	hangTimeout    int
	event          string
	ratingInterval int
	quiet          bool
	cpuProfile     string

	// remote: the engines run on cluster workers, so a cmd= binary need
	// not exist here (`arbiter submit sprt|match`).
	remote bool
}

func newMatchCommand() *cobra.Command {
	var f matchFlags
	cmd := &cobra.Command{
		Use:   "match",
		Short: "Play a local match or SPRT between two engines (game pairs, pentanomial statistics)",
		Long: `Play game pairs between engine A (the first --engine, under test) and engine B
(the baseline) on this machine: every opening twice with colours swapped.
Prints a live report in fastchess's layout and stops on the SPRT bound.

  arbiter match --engine name=new,cmd=./sf --engine name=base,cmd=./sf,option.Hash=32 \
      --each tc=10+0.1 --openings file=books/arbiter-8moves-200.pgn,order=random,seed=1 \
      --sprt elo0=0,elo1=2 --concurrency 2 --pgnout games.pgn

--engine keys: name, cmd, args (split at blanks), arg (one argument), dir,
proto (uci|xboard), builtin, option.NAME=VALUE, and any --each limit to
override it for one engine. A value with a comma is quoted: args="-x a,b".
--each keys: tc=[MOVES/]SEC[+INC], nodes=N, depth=D, movetime=MS, option.NAME=VALUE, proto.
--openings keys: file, format (epd|pgn), order (sequential|random), seed, plies, start.
See docs/match.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMatch(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.engines, "engine", nil, "an engine (give two): "+enginespec.Usage(enginespec.Match))
	fl.StringVar(&f.each, "each", "", "settings for both engines: tc=10+0.1 | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&f.openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential][,seed=S][,plies=N][,start=N]")
	fl.IntVar(&f.games, "games", 0, "number of games (even: game pairs)")
	fl.StringVar(&f.sprt, "sprt", "", "elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]")
	fl.IntVar(&f.concurrency, "concurrency", 1, "game pairs played at once")
	fl.StringVar(&f.pgnout, "pgnout", "", "write every game to this PGN file (appended)")
	fl.StringVar(&f.resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&f.draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&f.maxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	fl.IntVar(&f.timeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing (overruns are recorded)")
	fl.IntVar(&f.hangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&f.event, "event", "", "PGN Event tag")
	fl.IntVar(&f.ratingInterval, "ratinginterval", 10, "print the report every this many games (0 = only at the end)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print a line per finished game")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write the runner's CPU profile here (for make bench-match)")
	fl.MarkHidden("cpuprofile")
	return cmd
}

// matchPlan is a parsed command line.
type matchPlan struct {
	cfg      match.MatchConfig
	book     *match.Book
	sprt     *sprt.Params
	bookName string
	bookOpts match.BookOptions
}

// parseKV splits "k=v,k2=v2,flag" into ordered pairs; a bare word has value "".
func parseKV(flag, s string) ([][2]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usageError("%s: empty value", flag)
	}
	var out [][2]string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, usageError("%s %q: empty item between commas", flag, s)
		}
		k, v, _ := strings.Cut(part, "=")
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

func unknownKey(flag, key string, known ...string) error {
	return usageError("%s: unknown key %q (known: %s)", flag, key, strings.Join(known, ", "))
}

func parseMatchFlags(f *matchFlags) (*matchPlan, error) {
	plan := &matchPlan{}
	cfg := &plan.cfg
	if len(f.engines) != 2 {
		return nil, usageError("--engine: give exactly two engines (got %d)", len(f.engines))
	}
	var each enginespec.Spec
	if f.each != "" {
		s, err := enginespec.Parse(f.each, enginespec.Each)
		if err != nil {
			return nil, usageError("--each: %v", err)
		}
		each = s
	}
	lim, err := enginespec.LimitsOf(each.Limits)
	if err != nil {
		return nil, usageError("--each: %v", err)
	}
	cfg.Limits = lim
	for i, s := range f.engines {
		spec, err := enginespec.Parse(s, enginespec.Match)
		if err != nil {
			return nil, usageError("--engine #%d: %v", i+1, err)
		}
		e, err := spec.MatchEngine(each)
		if err != nil {
			return nil, usageError("--engine %s: %v", spec.Name, err)
		}
		// On the cluster the workers run the engines: the program need
		// not exist here.
		if e.Proto != string(enginespec.Builtin) && !f.remote {
			if _, err := engineproc.LookPath(e.Cmd, e.Dir); err != nil {
				return nil, usageError("--engine %s: %v", e.Name, err)
			}
		}
		cfg.Engines[i] = e
	}
	if cfg.Engines[0].Name == cfg.Engines[1].Name {
		return nil, usageError("--engine: both engines are named %q", cfg.Engines[0].Name)
	}
	for _, e := range cfg.Engines {
		lim := cfg.Limits
		if e.Limits != (match.Limits{}) {
			lim = e.Limits
		}
		if err := lim.Validate(); err != nil {
			return nil, usageError("--each: engine %s: %v", e.Name, err)
		}
	}

	// Openings.
	if f.openings == "" {
		return nil, usageError("--openings: required (file=F[,format=epd|pgn][,order=...])")
	}
	kv, err := parseKV("--openings", f.openings)
	if err != nil {
		return nil, err
	}
	var bo match.BookOptions
	for _, p := range kv {
		k, v := p[0], p[1]
		switch k {
		case "file":
			bo.Path = v
		case "format":
			if v != "epd" && v != "pgn" {
				return nil, usageError("--openings: format=%q: want epd or pgn", v)
			}
			bo.Format = v
		case "order":
			if v != "random" && v != "sequential" {
				return nil, usageError("--openings: order=%q: want random or sequential", v)
			}
			bo.Order = v
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, usageError("--openings: seed=%q: want a non-negative integer", v)
			}
			bo.Seed = n
		case "plies":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, usageError("--openings: plies=%q: want a non-negative integer", v)
			}
			bo.Plies = n
		case "start":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, usageError("--openings: start=%q: want a non-negative integer", v)
			}
			bo.Start = n
		default:
			return nil, unknownKey("--openings", k, "file", "format", "order", "seed", "plies", "start")
		}
	}
	if bo.Path == "" {
		return nil, usageError("--openings: missing file=")
	}
	book, err := match.LoadBook(bo)
	if err != nil {
		return nil, usageError("--openings: %v", err)
	}
	plan.book = book
	plan.bookName = filepath.Base(bo.Path)
	plan.bookOpts = bo
	cfg.Openings = book.At

	// Games or SPRT.
	switch {
	case f.games < 0:
		return nil, usageError("--games: %d is negative", f.games)
	case f.games%2 != 0:
		return nil, usageError("--games: %d is odd: games are played in pairs (each opening with colours swapped)", f.games)
	case f.games == 0 && f.sprt == "":
		return nil, usageError("give --games N or --sprt elo0=..,elo1=..")
	}
	cfg.Pairs = f.games / 2
	if f.sprt != "" {
		kv, err := parseKV("--sprt", f.sprt)
		if err != nil {
			return nil, err
		}
		p := sprt.DefaultParams()
		seen := map[string]bool{}
		for _, kv := range kv {
			k, v := kv[0], kv[1]
			seen[k] = true
			if k == "model" {
				m, err := sprt.ParseModel(v)
				if err != nil {
					return nil, usageError("--sprt: %v", err)
				}
				p.Model = m
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil && (k == "elo0" || k == "elo1" || k == "alpha" || k == "beta") {
				return nil, usageError("--sprt: %s=%q: want a number", k, v)
			}
			switch k {
			case "elo0":
				p.Elo0 = x
			case "elo1":
				p.Elo1 = x
			case "alpha":
				p.Alpha = x
			case "beta":
				p.Beta = x
			default:
				return nil, unknownKey("--sprt", k, "elo0", "elo1", "alpha", "beta", "model")
			}
		}
		if !seen["elo0"] || !seen["elo1"] {
			return nil, usageError("--sprt: give both elo0= and elo1=")
		}
		if err := p.Validate(); err != nil {
			return nil, usageError("--sprt: %v", err)
		}
		plan.sprt = &p
	}
	if f.concurrency < 1 || f.concurrency > 1024 {
		return nil, usageError("--concurrency: %d is not in 1..1024", f.concurrency)
	}
	cfg.Concurrency = f.concurrency

	// Adjudication and time.
	adj := &cfg.Game.Adjudication
	if f.resign != "" {
		kv, err := parseKV("--resign", f.resign)
		if err != nil {
			return nil, err
		}
		for _, p := range kv {
			n, err := strconv.Atoi(p[1])
			if err != nil || n <= 0 {
				return nil, usageError("--resign: %s=%q: want a positive integer", p[0], p[1])
			}
			switch p[0] {
			case "movecount":
				adj.ResignMoves = n
			case "score":
				adj.ResignScore = n
			default:
				return nil, unknownKey("--resign", p[0], "movecount", "score")
			}
		}
		if adj.ResignMoves == 0 || adj.ResignScore == 0 {
			return nil, usageError("--resign: give movecount= and score=")
		}
	}
	if f.draw != "" {
		kv, err := parseKV("--draw", f.draw)
		if err != nil {
			return nil, err
		}
		for _, p := range kv {
			n, err := strconv.Atoi(p[1])
			if err != nil || n < 0 {
				return nil, usageError("--draw: %s=%q: want a non-negative integer", p[0], p[1])
			}
			switch p[0] {
			case "movenumber":
				adj.DrawMoveNumber = n
			case "movecount":
				adj.DrawMoves = n
			case "score":
				adj.DrawScore = n
			default:
				return nil, unknownKey("--draw", p[0], "movenumber", "movecount", "score")
			}
		}
		if adj.DrawMoves == 0 {
			return nil, usageError("--draw: give movecount= (and movenumber=, score=)")
		}
	}
	if f.maxMoves < 0 {
		return nil, usageError("--maxmoves: %d is negative", f.maxMoves)
	}
	adj.MaxMoves = f.maxMoves
	if f.timeMargin < 0 {
		return nil, usageError("--timemargin: %d is negative", f.timeMargin)
	}
	cfg.Game.TimeMargin = time.Duration(f.timeMargin) * time.Millisecond
	if f.hangTimeout <= 0 {
		return nil, usageError("--hangtimeout: %d is not positive", f.hangTimeout)
	}
	cfg.Game.HangTimeout = time.Duration(f.hangTimeout) * time.Millisecond
	if f.ratingInterval < 0 {
		return nil, usageError("--ratinginterval: %d is negative", f.ratingInterval)
	}
	cfg.PGNOptions.Event = f.event
	if h, err := os.Hostname(); err == nil {
		cfg.PGNOptions.Site = h
	}
	return plan, nil
}

func runMatch(cmd *cobra.Command, f *matchFlags) error {
	plan, err := parseMatchFlags(f)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	cfg := plan.cfg
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return usageError("--cpuprofile: %v", err)
		}
		defer pf.Close()
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	if f.pgnout != "" {
		pf, err := os.OpenFile(f.pgnout, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return usageError("--pgnout: %v", err)
		}
		defer pf.Close()
		cfg.PGN = pf
	}
	var seq *sprt.Sequential
	if plan.sprt != nil {
		seq, _ = sprt.NewSequential(*plan.sprt, 1)
	}
	rep := &reporter{out: out, plan: plan, seq: seq}
	games := 0
	cfg.OnPair = func(p *match.PairResult, t *match.Totals) bool {
		for _, g := range p.Games {
			games++
			if !f.quiet {
				fmt.Fprintf(out, "Finished game %s (%s vs %s): %s {%s}\n", g.Round, g.White, g.Black, g.Result, g.Reason)
				for _, inc := range g.Incidents {
					if inc.Kind != match.IncOverrun {
						fmt.Fprintf(out, "  incident: %s\n", inc)
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
		if stop || (f.ratingInterval > 0 && games/f.ratingInterval != (games-2)/f.ratingInterval) {
			rep.print(t)
		}
		return stop
	}
	cfg.Builtin = builtin.New
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(out, "Match %s vs %s: %s, %s, concurrency %d\n", cfg.Engines[0].Name, cfg.Engines[1].Name, describeLimits(&cfg), plan.bookName, cfg.Concurrency)
	t, err := match.Run(ctx, cfg)
	if err != nil {
		return usageError("%v", err)
	}
	if rep.printed != t.Games {
		rep.print(t)
	}
	rep.summary(t)
	return nil
}

func describeLimits(cfg *match.MatchConfig) string {
	a, b := cfg.Limits, cfg.Limits
	if cfg.Engines[0].Limits != (match.Limits{}) {
		a = cfg.Engines[0].Limits
	}
	if cfg.Engines[1].Limits != (match.Limits{}) {
		b = cfg.Engines[1].Limits
	}
	if a == b {
		return a.String()
	}
	return a.String() + " vs " + b.String()
}

// reporter prints the live report in fastchess's layout.
type reporter struct {
	out  io.Writer
	plan *matchPlan
	seq  *sprt.Sequential
	// printed is the game count of the last report, so the final report is
	// not repeated when the last pair just printed one.
	printed int
}

func (r *reporter) print(t *match.Totals) {
	if t.Results.Pentanomial == nil {
		return
	}
	e := r.plan.cfg.Engines
	fmt.Fprint(r.out, sprt.FormatReport(sprt.Report{
		First: e[0].Name, Second: e[1].Name,
		Details: describeLimits(&r.plan.cfg) + ", " + r.plan.bookName,
		Results: t.Results,
		SPRT:    r.plan.sprt,
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
