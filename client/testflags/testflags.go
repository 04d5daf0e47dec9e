// Package testflags is the flag set of a match or SPRT test on a cluster:
// `arbiter match`'s engine, time-control, opening and SPRT syntax
// (spec/matchplan) plus scheduling, shared by the commands that submit
// a test (the test kind's `submit sprt|match`, the SPSA kind's `spsa
// confirm`) and by `arbiter up`, which plays one on its local workers. It
// sits a floor below kinds/ so that up (cmd/arbiter) and the kinds share
// it without cmd/ or client/ importing a kind; Run submits and follows the
// test through client/jobreport.
package testflags

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
)

// Flags are a cluster test's flags: `arbiter match`'s plus scheduling.
type Flags struct {
	M      matchplan.TestFlags
	PGNOut string
	// Tags and Notes find the test later (submit only).
	Tags  []string
	Notes string
}

// AddFindable adds --tag and --notes (and --group, --takes).
func (f *Flags) AddFindable(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.Tags, "tag", nil, "a tag to find the test by (repeat for more; letters, digits, '-', '_', '.'); editable with arbiter modify")
	fl.StringVar(&f.Notes, "notes", "", "notes about the test (free text, at most 2000 bytes); editable with arbiter modify")
	fl.StringVar(&f.M.Group, "group", "", "a take of a group of takes of one idea (submit sprt): the group's name (letters, digits, '-', '_', '.'); with --takes")
	fl.IntVar(&f.M.Takes, "takes", 0, "with --group: the number of takes the group will have, the same for every take; each take's SPRT runs at alpha/takes so that the group's false-positive rate stays alpha")
}

// Add adds the test's engines, games, adjudication and scheduling flags;
// prefix goes before --sprt and --stop.
func (f *Flags) Add(fl *pflag.FlagSet, prefix string) {
	m := &f.M.Match
	fl.StringArrayVar(&m.Engines, "engine", nil, "an engine: name=N,builtin[,option.X=V] or name=N,cmd=PATH (on the workers)[,args=...][,option.X=V], and its own limits [,tc=..|st=..|nodes=..|depth=..|movetime=..] over --each's (time odds); give two (the first is under test), or more for a tournament (submit match, up)")
	fl.StringVar(&m.Each, "each", "", "settings for every engine: tc=10+0.1 | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&m.Openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential][,seed=S][,plies=N][,start=N] (read here, sent to the coordinator)")
	fl.IntVar(&m.Games, "games", 0, "number of games (even); with --sprt, a cap; in a tournament (submit match), per pairing and round")
	fl.StringVar(&m.SPRT, prefix+"sprt", "", "elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]")
	fl.StringVar(&m.Stop, prefix+"stop", "", matchplan.StopUsage)
	fl.StringVar(&m.Resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&m.Draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&m.MaxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	AddTB(fl, m)
	fl.IntVar(&m.TimeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing")
	fl.IntVar(&m.HangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&m.Event, "event", "", "PGN Event tag")
	fl.IntVar(&f.M.Priority, "priority", 0, "scheduling priority (higher first)")
	fl.Float64Var(&f.M.Throughput, "throughput", 1, "share of the workers among tests of equal priority")
	fl.IntVar(&f.M.BatchPairs, "batch-pairs", 0, "game pairs per batch (0: sized by the coordinator from the time control)")
	fl.Uint64Var(&f.M.ReferenceNPS, "reference-nps", 0, "bench nps the time control is meant for (0: the coordinator's default); clocks scale by it / worker nps")
	fl.Uint64Var(&f.M.Seed, "seed", 0, "the test's seed (default: --openings seed=, else 1)")
	fl.StringVar(&f.PGNOut, "pgnout", "", "with --wait: write every game to this PGN file when the test ends")
}

// AddTB declares the tablebase adjudication flags of a match (a local
// one's, `arbiter match`, and a cluster test's).
func AddTB(fl *pflag.FlagSet, m *matchplan.Flags) {
	fl.StringVar(&m.TB, "tb", "", "Syzygy tablebase directory: adjudicate games by the tables (fastchess -tb; local matches only: a cluster test uses the tables of each arbiter worker --syzygy)")
	fl.IntVar(&m.TBPieces, "tb-pieces", 0, "adjudicate positions of at most this many pieces by the tables (with --tb, 0 = as many as the tables have; on the cluster, turns tablebase adjudication on)")
	fl.StringVar(&m.TBAdjudicate, "tb-adjudicate", "", "with --tb: which verdicts end a game: win_loss, draw or both (default both)")
	fl.BoolVar(&m.TBIgnore50, "tb-ignore50", false, "with --tb: take cursed wins and blessed losses as wins and losses (ignore the 50-move rule)")
}

// AddTournament adds the flags of a tournament on the cluster, played as
// one test per pairing; rated says when the engines are rated.
func (f *Flags) AddTournament(fl *pflag.FlagSet, rated string) {
	m := &f.M.Match
	fl.StringVar(&m.Tournament, "tournament", "", "with more than two engines: roundrobin (default) or gauntlet; one test per pairing, "+rated)
	fl.IntVar(&m.Seeds, "seeds", 0, "gauntlet: how many of the first engines play all the others (default 1)")
	fl.IntVar(&m.Rounds, "rounds", 0, "tournament: every pairing plays --games games a round (its test: rounds x games)")
	fl.IntVar(&m.Repeat, "repeat", 0, "games per opening: the cluster plays game pairs (2)")
}

// Session opens a client once the flags are checked: its context, the
// client, and what closes it.
type Session func() (context.Context, *clusterclient.Client, func(), error)

// Run checks the flags and submits the test, or a tournament as one test
// per pairing (rated together when it waits), and follows it as o says.
// session opens the client once the flags are checked; needSPRT is
// `submit sprt`'s.
func (f *Flags) Run(out, stderr io.Writer, needSPRT bool, o jobreport.TestOutput, session Session) error {
	if !needSPRT && f.M.Tournament() {
		if o.JSON {
			return cliexit.Usage("--json: not available for a tournament (one test per pairing); use status TEST --json per test")
		}
		tests, plan, err := f.M.TournamentSpecs()
		if err != nil {
			return cliexit.Usage("%v", err)
		}
		for _, t := range tests {
			t.Spec.Tags, t.Spec.Notes = f.Tags, f.Notes
		}
		ctx, c, done, err := session()
		if err != nil {
			return err
		}
		defer done()
		return jobreport.RunTournament(ctx, out, stderr, c, tests, plan, o)
	}
	spec, plan, err := f.M.Spec(needSPRT)
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	spec.Tags, spec.Notes = f.Tags, f.Notes
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
