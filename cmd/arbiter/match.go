package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/enginespec"
	"github.com/arbiter-chess/arbiter/internal/matchplan"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// matchFlags are `arbiter match`'s flags: the match (internal/matchplan)
// and how this run reports it.
type matchFlags struct {
	m          matchplan.Flags
	pgnout     string
	quiet      bool
	cpuProfile string
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
	fl.StringArrayVar(&f.m.Engines, "engine", nil, "an engine (give two): "+enginespec.Usage(enginespec.Match))
	fl.StringVar(&f.m.Each, "each", "", "settings for both engines: tc=10+0.1 | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&f.m.Openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential][,seed=S][,plies=N][,start=N]")
	fl.IntVar(&f.m.Games, "games", 0, "number of games (even: game pairs)")
	fl.StringVar(&f.m.SPRT, "sprt", "", "elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]")
	fl.IntVar(&f.m.Concurrency, "concurrency", 1, "game pairs played at once")
	fl.StringVar(&f.pgnout, "pgnout", "", "write every game to this PGN file (appended)")
	fl.StringVar(&f.m.Resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&f.m.Draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&f.m.MaxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	fl.IntVar(&f.m.TimeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing (overruns are recorded)")
	fl.IntVar(&f.m.HangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&f.m.Event, "event", "", "PGN Event tag")
	fl.IntVar(&f.m.RatingInterval, "ratinginterval", 10, "print the report every this many games (0 = only at the end)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print a line per finished game")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write the runner's CPU profile here (for make bench-match)")
	fl.MarkHidden("cpuprofile")
	return cmd
}

func runMatch(cmd *cobra.Command, f *matchFlags) error {
	plan, err := matchplan.Parse(f.m)
	if err != nil {
		return usageError("%v", err)
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return usageError("--cpuprofile: %v", err)
		}
		defer pf.Close()
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	o := matchplan.RunOptions{Out: cmd.OutOrStdout(), Quiet: f.quiet, RatingInterval: f.m.RatingInterval, Builtin: builtin.New}
	if f.pgnout != "" {
		pf, err := os.OpenFile(f.pgnout, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return usageError("--pgnout: %v", err)
		}
		defer pf.Close()
		o.PGN = pf
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := plan.Run(ctx, o); err != nil {
		return usageError("%v", err)
	}
	return nil
}
