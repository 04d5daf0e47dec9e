package main

// `arbiter submit sprt|match`, the status of a test, and the test part of
// `arbiter up`: the same engine, time-control, opening and SPRT syntax as
// `arbiter match` (parseMatchFlags), sent to a coordinator that plays the
// game pairs on its workers.

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/matchspec"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// testFlags are a cluster test's flags: `arbiter match`'s plus scheduling.
type testFlags struct {
	m          matchFlags
	priority   int
	throughput float64
	batchPairs int
	refNPS     uint64
	seed       uint64
	pgnout     string
}

func (f *testFlags) add(fl *pflag.FlagSet, prefix string) {
	fl.StringArrayVar(&f.m.engines, "engine", nil, "an engine: name=N,builtin[,option.X=V] or name=N,cmd=PATH (on the workers)[,args=...][,option.X=V] (give two; the first is under test)")
	fl.StringVar(&f.m.each, "each", "", "settings for both engines: tc=10+0.1 | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&f.m.openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential][,seed=S][,plies=N][,start=N] (read here, sent to the coordinator)")
	fl.IntVar(&f.m.games, "games", 0, "number of games (even); with --sprt, a cap")
	fl.StringVar(&f.m.sprt, prefix+"sprt", "", "elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]")
	fl.StringVar(&f.m.resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&f.m.draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&f.m.maxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	fl.IntVar(&f.m.timeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing")
	fl.IntVar(&f.m.hangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&f.m.event, "event", "", "PGN Event tag")
	fl.IntVar(&f.priority, "priority", 0, "scheduling priority (higher first)")
	fl.Float64Var(&f.throughput, "throughput", 1, "share of the workers among tests of equal priority")
	fl.IntVar(&f.batchPairs, "batch-pairs", 0, "game pairs per batch (0: sized by the coordinator from the time control)")
	fl.Uint64Var(&f.refNPS, "reference-nps", 0, "bench nps the time control is meant for (0: the coordinator's default); clocks scale by it / worker nps")
	fl.Uint64Var(&f.seed, "seed", 0, "the test's seed (default: --openings seed=, else 1)")
	fl.StringVar(&f.pgnout, "pgnout", "", "with --wait: write every game to this PGN file when the test ends")
}

// given reports whether any test flag was set (for `arbiter up`).
func (f *testFlags) given() bool { return len(f.m.engines) > 0 || f.m.sprt != "" }

// spec parses the flags into a MatchSpec; needSPRT is true for `submit sprt`.
func (f *testFlags) spec(needSPRT bool) (*arbiterv1.MatchSpec, *matchPlan, error) {
	if needSPRT && f.m.sprt == "" {
		return nil, nil, usageError("--sprt: required (elo0=..,elo1=..); use `submit match` for a fixed number of games")
	}
	if !needSPRT && f.m.sprt != "" {
		return nil, nil, usageError("--sprt: use `submit sprt` for an SPRT")
	}
	m := f.m
	m.remote = true
	m.concurrency = 1
	plan, err := parseMatchFlags(&m)
	if err != nil {
		return nil, nil, err
	}
	cfg := &plan.cfg
	for _, e := range cfg.Engines {
		if e.Limits != (match.Limits{}) {
			return nil, nil, usageError("--engine %s: per-engine time controls are not supported on the cluster; use --each", e.Name)
		}
	}
	tc, err := matchspec.LimitsToProto(cfg.Limits)
	if err != nil {
		return nil, nil, usageError("--each: %v", err)
	}
	if err := matchspec.CheckPlayable(cfg.Limits); err != nil {
		return nil, nil, usageError("--each: %v", err)
	}
	if f.batchPairs < 0 || f.priority < -1000 || f.priority > 1000 || f.throughput < 0 {
		return nil, nil, usageError("--batch-pairs, --priority (-1000..1000) and --throughput must not be negative or out of range")
	}
	// The book goes in file order; order, seed and start travel with it so
	// that the coordinator fixes the order of play (match.OrderOpenings).
	bo := plan.bookOpts
	fileOrder := bo
	fileOrder.Order, fileOrder.Start = "sequential", 0
	book, err := match.LoadBook(fileOrder)
	if err != nil {
		return nil, nil, usageError("--openings: %v", err)
	}
	seed := f.seed
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
		TimeControl: tc, BookName: plan.bookName, BookOrder: bo.Order, Seed: bo.Seed, BookStart: uint32(bo.Start),
		Games: uint64(f.m.games), Priority: int32(f.priority), Throughput: f.throughput, BatchPairs: uint32(f.batchPairs),
		Adjudication: matchspec.AdjudicationToProto(cfg.Game.Adjudication),
		TimeMargin:   durationpb.New(cfg.Game.TimeMargin), HangTimeout: durationpb.New(cfg.Game.HangTimeout),
		ReferenceNps: f.refNPS, Event: f.m.event,
	}
	if bo.Order != "random" {
		spec.Seed = seed
	}
	for _, o := range book.Openings {
		spec.Openings = append(spec.Openings, matchspec.OpeningToProto(o))
		spec.Chess960 = spec.Chess960 || o.Chess960
	}
	if p := plan.sprt; p != nil {
		spec.Sprt = &arbiterv1.SprtParams{Elo0: p.Elo0, Elo1: p.Elo1, Alpha: p.Alpha, Beta: p.Beta, Model: string(p.Model)}
	}
	return spec, plan, nil
}

func newSubmitTestCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, kind := range []string{"sprt", "match"} {
		var f testFlags
		var client clientFlags
		var wait bool
		short := "Submit a distributed SPRT test between two engines"
		example := `  arbiter submit sprt --engine name=new,builtin,option.RFPMargin=80 --engine name=base,builtin \
      --each nodes=2000 --openings file=book.epd,order=random,seed=7 --sprt elo0=0,elo1=10 --wait`
		if kind == "match" {
			short = "Submit a distributed match of a fixed number of games"
			example = `  arbiter submit match --engine name=a,builtin --engine name=b,cmd=/usr/games/stockfish \
      --each tc=10+0.1 --openings file=book.pgn --games 1000 --priority 1`
		}
		cmd := &cobra.Command{
			Use:     kind,
			Short:   short,
			Example: example,
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				spec, plan, err := f.spec(kind == "sprt")
				if err != nil {
					return err
				}
				ctx, c, done, err := client.session()
				if err != nil {
					return err
				}
				defer done()
				return runTest(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, spec, plan, wait, f.pgnout)
			},
		}
		client.add(cmd.Flags())
		f.add(cmd.Flags(), "")
		cmd.Flags().BoolVar(&wait, "wait", false, "wait for the test to end and print the report")
		cmds = append(cmds, cmd)
	}
	return cmds
}

// runTest submits a test and, with wait, follows it to the end, prints the
// report and optionally downloads the games.
func runTest(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, spec *arbiterv1.MatchSpec, plan *matchPlan, wait bool, pgnout string) error {
	resp, err := c.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: spec})
	if err != nil {
		return callError(c, "submit", err)
	}
	job := resp.GetJob()
	if !wait {
		fmt.Fprintln(out, job.GetJobId())
		return nil
	}
	fmt.Fprintf(stderr, "test %s: %s vs %s, %s, %d openings, %d pairs per batch\n", job.GetJobId(),
		spec.GetEngineA().GetName(), spec.GetEngineB().GetName(), describeLimits(&plan.cfg), len(spec.GetOpenings()),
		job.GetMatchProgress().GetBatchPairs())
	// Progress lines as batches arrive.
	lastGames := uint64(0)
	final, err := waitTest(ctx, c, job.GetJobId(), stderr, func(j *arbiterv1.Job) {
		mp := j.GetMatchProgress()
		if mp.GetGames() != lastGames {
			lastGames = mp.GetGames()
			line := fmt.Sprintf("games %d: +%d =%d -%d", mp.GetGames(), mp.GetWins(), mp.GetDraws(), mp.GetLosses())
			if mp.GetSprtState() != "" {
				line += fmt.Sprintf(", LLR %.2f (%.2f, %.2f)", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound())
			}
			fmt.Fprintln(stderr, line)
		}
	})
	if err != nil {
		return err
	}
	printTestDetail(out, final)
	if pgnout != "" {
		n, err := downloadPGN(ctx, c, final.GetJobId(), pgnout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d games to %s\n", n, pgnout)
	}
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		return failure("test %s %s: %s", final.GetJobId(), stateName(final.GetState()), final.GetError())
	}
	return nil
}

// waitTest follows a test to its end through the reconnecting watch
// (coordinator restarts included), saying so on stderr when it reconnects.
func waitTest(ctx context.Context, c *clusterclient.Client, id string, stderr io.Writer, progress func(*arbiterv1.Job)) (*arbiterv1.Job, error) {
	final, err := c.WatchJob(ctx, id, watchPolicy(c, stderr), progress)
	if ctx.Err() != nil {
		return nil, failure("interrupted while waiting for test %s (it keeps running)", id)
	}
	if err != nil {
		return nil, callError(c, "watch "+id, err)
	}
	return final, nil
}

// printTestDetail prints a test: spec, fastchess-style report (via
// sprt.FormatReport), the coordinator's SPRT state, incidents by worker.
func printTestDetail(out io.Writer, j *arbiterv1.Job) {
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	fmt.Fprintf(out, "Test:       %s (%s)\nState:      %s\n", j.GetJobId(), j.GetKind(), stateName(j.GetState()))
	lim, _ := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	fmt.Fprintf(out, "Engines:    %s vs %s\n", engineDesc(spec.GetEngineA()), engineDesc(spec.GetEngineB()))
	fmt.Fprintf(out, "Limits:     %s (reference nps %d)\nOpenings:   %s, %d, order %s, seed %d\n", lim.String(), spec.GetReferenceNps(),
		spec.GetBookName(), spec.GetOpeningsCount(), orDefault(spec.GetBookOrder(), "sequential"), spec.GetSeed())
	fmt.Fprintf(out, "Schedule:   priority %d, throughput %g, %d pairs per batch; %d batches done, %d leased\n",
		spec.GetPriority(), spec.GetThroughput(), mp.GetBatchPairs(), mp.GetBatchesDone(), mp.GetBatchesLeased())
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	p := mp.GetPentanomial()
	penta := sprt.Pentanomial{int64(p.GetLl()), int64(p.GetLd()), int64(p.GetDd()), int64(p.GetWd()), int64(p.GetWw())}
	rep := sprt.Report{First: spec.GetEngineA().GetName(), Second: spec.GetEngineB().GetName(),
		Details: lim.String() + ", " + spec.GetBookName(),
		Results: sprt.Results{Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()), Pentanomial: &penta}}
	var params *sprt.Params
	if sp := spec.GetSprt(); sp != nil {
		m, _ := sprt.ParseModel(sp.GetModel())
		params = &sprt.Params{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: m}
		rep.SPRT = params
	}
	if mp.GetGames() > 0 {
		fmt.Fprint(out, sprt.FormatReport(rep))
	} else {
		fmt.Fprintln(out, "No games counted yet.")
	}
	if params != nil {
		verdict := "no decision yet"
		switch mp.GetSprtState() {
		case string(sprt.Accepted):
			verdict = "H1 accepted"
		case string(sprt.Rejected):
			verdict = "H0 accepted (H1 rejected)"
		}
		fmt.Fprintf(out, "SPRT:       LLR %.2f in (%.2f, %.2f) [%g, %g] %s: %s\n", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(),
			params.Elo0, params.Elo1, params.Model, verdict)
	}
	fmt.Fprintf(out, "Games:      %d (PGNs stored: %d)\n", mp.GetGames(), mp.GetPgns())
	if len(mp.GetWorkers()) > 0 {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tNAME\tNPS\tTC×\tGAMES\tTIME LOSSES\tCRASHES\tILLEGAL\tDISCONNECTS\tOTHER\tSTATUS")
		for _, w := range mp.GetWorkers() {
			st := "ok"
			if w.GetExcluded() {
				st = "excluded: " + w.GetReason()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", w.GetWorkerId(), w.GetName(), w.GetBenchNps(), w.GetTimeScale(),
				w.GetGames(), w.GetTimeLosses(), w.GetCrashes(), w.GetIllegalMoves(), w.GetDisconnects(), w.GetOther(), st)
		}
		tw.Flush()
	}
}

func engineDesc(e *arbiterv1.EngineSpec) string {
	s := e.GetName() + " (" + e.GetCommand()
	for k, v := range e.GetOptions() {
		s += ", " + k + "=" + v
	}
	return s + ")"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// downloadPGN writes every game of a test to path ("-": stdout writer is
// not supported here) and returns the number of games.
func downloadPGN(ctx context.Context, c *clusterclient.Client, id, path string) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, usageError("%v", err)
	}
	n, err := streamPGN(ctx, c, id, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return n, err
}

func streamPGN(ctx context.Context, c *clusterclient.Client, id string, w io.Writer) (int, error) {
	stream, err := c.Jobs.DownloadPGN(ctx, &arbiterv1.DownloadPGNRequest{JobId: id})
	if err != nil {
		return 0, callError(c, "pgn", err)
	}
	n := 0
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, callError(c, "pgn", err)
		}
		if _, err := io.WriteString(w, resp.GetPgn()); err != nil {
			return n, err
		}
		n += int(resp.GetGames())
	}
}

// runUpTest runs a test on `arbiter up`'s local cluster and prints the report.
func runUpTest(ctx context.Context, out, stderr io.Writer, addrToken [2]string, f *testFlags) error {
	spec, plan, err := f.spec(f.m.sprt != "")
	if err != nil {
		return err
	}
	c, err := clusterclient.Connect(clusterclient.Options{Address: addrToken[0], Token: addrToken[1]})
	if err != nil {
		return err
	}
	defer c.Close()
	return runTest(ctx, out, stderr, c, spec, plan, true, f.pgnout)
}
