package main

// `arbiter submit sprt|match`, and the test flags `arbiter up` shares: the
// same engine, time-control, opening and SPRT syntax as `arbiter match`
// (spec/matchplan), sent to a coordinator that plays the game pairs on
// its workers (client/jobreport follows and prints the test).

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// testFlags are a cluster test's flags: `arbiter match`'s plus scheduling.
type testFlags struct {
	m      matchplan.TestFlags
	pgnout string
	// tags and notes find the test later (submit only).
	tags  []string
	notes string
}

// addFindable adds --tag and --notes.
func (f *testFlags) addFindable(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.tags, "tag", nil, "a tag to find the test by (repeat for more; letters, digits, '-', '_', '.'); editable with arbiter modify")
	fl.StringVar(&f.notes, "notes", "", "notes about the test (free text, at most 2000 bytes); editable with arbiter modify")
	fl.StringVar(&f.m.Group, "group", "", "a take of a group of takes of one idea (submit sprt): the group's name (letters, digits, '-', '_', '.'); with --takes")
	fl.IntVar(&f.m.Takes, "takes", 0, "with --group: the number of takes the group will have, the same for every take; each take's SPRT runs at alpha/takes so that the group's false-positive rate stays alpha")
}

func (f *testFlags) add(fl *pflag.FlagSet, prefix string) {
	m := &f.m.Match
	fl.StringArrayVar(&m.Engines, "engine", nil, "an engine: name=N,builtin[,option.X=V] or name=N,cmd=PATH (on the workers)[,args=...][,option.X=V], and its own limits [,tc=..|st=..|nodes=..|depth=..|movetime=..] over --each's (time odds); give two (the first is under test), or more for a tournament (submit match, up)")
	fl.StringVar(&m.Each, "each", "", "settings for every engine: tc=10+0.1 | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&m.Openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential][,seed=S][,plies=N][,start=N] (read here, sent to the coordinator)")
	fl.IntVar(&m.Games, "games", 0, "number of games (even); with --sprt, a cap; in a tournament (submit match), per pairing and round")
	fl.StringVar(&m.SPRT, prefix+"sprt", "", "elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]")
	fl.StringVar(&m.Stop, prefix+"stop", "", matchplan.StopUsage)
	fl.StringVar(&m.Resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&m.Draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&m.MaxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	tbFlags(fl, m)
	fl.IntVar(&m.TimeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing")
	fl.IntVar(&m.HangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&m.Event, "event", "", "PGN Event tag")
	fl.IntVar(&f.m.Priority, "priority", 0, "scheduling priority (higher first)")
	fl.Float64Var(&f.m.Throughput, "throughput", 1, "share of the workers among tests of equal priority")
	fl.IntVar(&f.m.BatchPairs, "batch-pairs", 0, "game pairs per batch (0: sized by the coordinator from the time control)")
	fl.Uint64Var(&f.m.ReferenceNPS, "reference-nps", 0, "bench nps the time control is meant for (0: the coordinator's default); clocks scale by it / worker nps")
	fl.Uint64Var(&f.m.Seed, "seed", 0, "the test's seed (default: --openings seed=, else 1)")
	fl.StringVar(&f.pgnout, "pgnout", "", "with --wait: write every game to this PGN file when the test ends")
}

// addTournament adds the flags of a tournament on the cluster, played as
// one test per pairing; rated says when the engines are rated.
func (f *testFlags) addTournament(fl *pflag.FlagSet, rated string) {
	m := &f.m.Match
	fl.StringVar(&m.Tournament, "tournament", "", "with more than two engines: roundrobin (default) or gauntlet; one test per pairing, "+rated)
	fl.IntVar(&m.Seeds, "seeds", 0, "gauntlet: how many of the first engines play all the others (default 1)")
	fl.IntVar(&m.Rounds, "rounds", 0, "tournament: every pairing plays --games games a round (its test: rounds x games)")
	fl.IntVar(&m.Repeat, "repeat", 0, "games per opening: the cluster plays game pairs (2)")
}

// run checks the flags and submits the test, or a tournament as one test
// per pairing (rated together when it waits), and follows it as o says.
// session opens the client once the flags are checked; needSPRT is
// `submit sprt`'s.
func (f *testFlags) run(out, stderr io.Writer, needSPRT bool, o jobreport.TestOutput,
	session func() (context.Context, *clusterclient.Client, func(), error)) error {
	if !needSPRT && f.m.Tournament() {
		if o.JSON {
			return usageError("--json: not available for a tournament (one test per pairing); use status TEST --json per test")
		}
		tests, plan, err := f.m.TournamentSpecs()
		if err != nil {
			return usageError("%v", err)
		}
		for _, t := range tests {
			t.Spec.Tags, t.Spec.Notes = f.tags, f.notes
		}
		ctx, c, done, err := session()
		if err != nil {
			return err
		}
		defer done()
		return jobreport.RunTournament(ctx, out, stderr, c, tests, plan, o)
	}
	spec, plan, err := f.m.Spec(needSPRT)
	if err != nil {
		return usageError("%v", err)
	}
	spec.Tags, spec.Notes = f.tags, f.notes
	if note := plan.RepeatNote(); note != "" {
		fmt.Fprintln(stderr, note)
	}
	ctx, c, done, err := session()
	if err != nil {
		return err
	}
	defer done()
	return jobreport.RunTestWith(ctx, out, stderr, c, spec, plan, o)
}

// The test family's submit commands, registered as every kind's are.
func init() {
	clicmd.RegisterSubmit(jobkind.SPRT, func() *cobra.Command { return newSubmitTestCommand(jobkind.SPRT) })
	clicmd.RegisterSubmit(jobkind.Match, func() *cobra.Command { return newSubmitTestCommand(jobkind.Match) })
}

func newSubmitTestCommand(kind string) *cobra.Command {
	var f testFlags
	var client clicmd.ClientFlags
	var wait, jsonOut bool
	short := "Submit a distributed SPRT test between two engines"
	example := `  arbiter submit sprt --engine name=new,builtin,option.RFPMargin=80 --engine name=base,builtin \
      --each nodes=2000 --openings file=book.epd,order=random,seed=7 --sprt elo0=0,elo1=10 --wait`
	if kind == jobkind.Match {
		short = "Submit a distributed match of a fixed number of games, or a tournament (one test per pairing)"
		example = `  arbiter submit match --engine name=a,builtin --engine name=b,cmd=/usr/games/stockfish \
      --each tc=10+0.1 --openings file=book.pgn --games 1000 --priority 1
  arbiter submit match --engine name=a,builtin --engine name=b,builtin,option.RFPMargin=80 \
      --engine name=c,cmd=/usr/games/stockfish --each nodes=5000 --openings file=book.epd \
      --tournament roundrobin --rounds 50 --games 2 --wait`
	}
	cmd := &cobra.Command{
		Use:     kind,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jsonOut && !wait {
				return usageError("--json needs --wait")
			}
			return f.run(cmd.OutOrStdout(), cmd.ErrOrStderr(), kind == jobkind.SPRT,
				jobreport.TestOutput{Wait: wait, JSON: jsonOut, PGNOut: f.pgnout, Pages: client.UpPages()}, client.Session)
		},
	}
	client.Add(cmd.Flags())
	f.add(cmd.Flags(), "")
	f.addFindable(cmd.Flags())
	if kind == jobkind.Match {
		f.addTournament(cmd.Flags(), "rated together by --wait")
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the test to end and print the report")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "with --wait: print the finished test as status --json does (docs/json.md)")
	return cmd
}
