package spsa

// The SPSA kind's commands: `arbiter submit spsa` (a tune on a
// coordinator), `arbiter tune` (the same tune on this machine), `arbiter
// spsa export` (a tune's values to paste back), `arbiter spsa params` (an
// engine's parameters as a tune takes them) and `arbiter spsa confirm` (a
// test of a tune's values against its start values, with the test flags
// of client/testflags). The flags become an spec/spsaplan plan;
// follow.go submits and follows tunes, report.go prints them.

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/testflags"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/spsaplan"
	sp "github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

const paramsUsage = `the parameters: from-engine (every tunable spin option of the engine), from-engine:NAME,NAME,
a file, or a list "Name,start,min,max,c_end,r_end;..." (Fishtest) or "Name,int,start,min,max,c_end,r_end;..." (OpenBench)`

// addTuneFlags registers the flags `submit spsa` and `tune` share.
func addTuneFlags(fl *pflag.FlagSet, f *spsaplan.Flags) {
	fl.StringVar(&f.Engine, "engine", "", "the engine to tune: "+enginespec.Usage(enginespec.Match))
	fl.StringVar(&f.Each, "each", "", "settings of the games: tc=10+0.1 | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&f.Openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential][,seed=S][,plies=N][,start=N]")
	fl.StringVar(&f.Params, "params", "", paramsUsage)
	fl.IntVar(&f.Pairs, "pairs", 0, "game pairs of the whole tune (required)")
	fl.Float64Var(&f.Alpha, "alpha", sp.DefaultAlpha, "the schedule's alpha: a_k = a / (A + k + 1)^alpha")
	fl.Float64Var(&f.Gamma, "gamma", sp.DefaultGamma, "the schedule's gamma: c_k = c / (k + 1)^gamma")
	fl.Float64Var(&f.ARatio, "A-ratio", sp.DefaultARatio, "the schedule's A as a share of --pairs")
	fl.Uint64Var(&f.Seed, "seed", 0, "the tune's seed: the order of a random book and every perturbation (default: --openings seed=, else 1)")
	fl.StringVar(&f.Resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&f.Draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&f.MaxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	fl.IntVar(&f.TimeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing")
	fl.IntVar(&f.HangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&f.Event, "event", "", "PGN Event tag")
}

func init() {
	clicmd.RegisterSubmit(jobkind.SPSA, newSubmitSpsaCommand)
	clicmd.RegisterCommand("tune", newTuneCommand)
	clicmd.RegisterCommand("spsa", newSPSACommand)
}

func newSubmitSpsaCommand() *cobra.Command {
	var f spsaplan.Flags
	var verify tuneVerifyFlags
	var client clicmd.ClientFlags
	var wait bool
	var pgnout string
	cmd := &cobra.Command{
		Use:   "spsa",
		Short: "Submit an SPSA tune of an engine's parameters",
		Long: `Tune an engine's parameters on the cluster with Fishtest's classic SPSA: each
batch of game pairs plays the engine with theta + c_k*delta against itself with
theta - c_k*delta, and its result moves theta once. The parameters are checked
against the engine's options before the tune is submitted. An engine given as
upload= or source= is sent to the coordinator first (artifact= names one
stored there) and played by the workers that can run it; from-engine reads an upload= binary's options
when it runs here (otherwise give the parameters as a list). See docs/spsa.md.`,
		Example: `  arbiter submit spsa --engine name=dev,builtin --params from-engine:RFPMargin,FutMargin \
      --pairs 2000 --each tc=10+0.1 --openings file=books/uho-200.epd,order=random,seed=7
  arbiter submit spsa --engine name=dev,cmd=./engine --params params.txt --pairs 5000 --batch-pairs 8 \
      --each nodes=20000 --openings file=book.epd --wait --pgnout tune.pgn
  arbiter submit spsa --engine name=dev,upload=./engine --params from-engine:RFPMargin,FutMargin \
      --pairs 2000 --each tc=10+0.1 --openings file=book.epd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := clicmd.SignalContext()
			defer stop()
			f.Remote = true
			plan, err := spsaplan.Parse(ctx, f)
			if err != nil {
				return cliexit.Usage("%v", err)
			}
			if plan.Unchecked != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "arbiter: warning: %s\n", plan.Unchecked)
			}
			spec, err := plan.Spec()
			if err != nil {
				return cliexit.Usage("%v", err)
			}
			if verify.given() {
				if !wait {
					return cliexit.Usage("--confirm-games and --confirm-sprt need --wait (the test is submitted when the tune ends; without --wait use spsa confirm)")
				}
				if err := verify.check(); err != nil {
					return cliexit.Usage("%v", err)
				}
				if err := spsaplan.CheckVerify(verify.testFlags(f)); err != nil {
					return cliexit.Usage("%v", spsaplan.VerifyFlagError(err))
				}
			}
			ctx, c, done, err := client.Session()
			if err != nil {
				return err
			}
			defer done()
			// An engine named by upload= or source= goes to the coordinator first.
			if err := artifactclient.UploadEngine(ctx, c.Conn(), plan.Travel, spec.GetEngine(), cmd.ErrOrStderr()); err != nil {
				return cliexit.Call(c, "upload", err)
			}
			var then func(string) error
			if verify.given() {
				tf := verify.testFlags(f)
				then = func(id string) error {
					fmt.Fprintf(cmd.ErrOrStderr(), "\nverifying tune %s: its values against its start values\n", id)
					return VerifyTune(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, id, tf, true, "")
				}
			}
			return RunTuneThen(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, spec, wait, pgnout, then)
		},
	}
	fl := cmd.Flags()
	client.Add(fl)
	addTuneFlags(fl, &f)
	fl.IntVar(&f.BatchPairs, "batch-pairs", 0, "game pairs per batch, one update each (0: sized by the coordinator from the time control)")
	fl.IntVar(&f.Priority, "priority", 0, "scheduling priority (higher first)")
	fl.Float64Var(&f.Throughput, "throughput", 1, "share of the workers among jobs of equal priority")
	fl.Uint64Var(&f.ReferenceNPS, "reference-nps", 0, "bench nps the time control is meant for (0: the coordinator's default); clocks scale by it / worker nps")
	verify.add(fl)
	fl.BoolVar(&wait, "wait", false, "wait for the tune to end and print it")
	fl.StringVar(&pgnout, "pgnout", "", "with --wait: write every game to this PGN file when the tune ends")
	return cmd
}

func newTuneCommand() *cobra.Command {
	var f spsaplan.Flags
	var verify tuneVerifyFlags
	var record, pgnout string
	var quiet bool
	var formats []string
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Tune an engine's parameters with SPSA on this machine",
		Long: `The SPSA tune of ` + "`arbiter submit spsa`" + ` played on this machine with the match runner:
the same batches, openings, perturbations and updates, --concurrency batches at
once. With --record FILE every update is written to FILE as it is applied, and
running the same command again resumes the tune from it. At the end the tuned
values are printed in each --format. See docs/spsa.md.`,
		Example: `  arbiter tune --engine name=dev,builtin --params from-engine:RFPMargin,FutMargin \
      --pairs 400 --each nodes=5000 --openings file=books/uho-200.epd,order=random,seed=7 \
      --concurrency 2 --record tune.rec`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTune(cmd, f, record, pgnout, quiet, formats, verify)
		},
	}
	fl := cmd.Flags()
	addTuneFlags(fl, &f)
	fl.IntVar(&f.BatchPairs, "batch-pairs", 0, fmt.Sprintf("game pairs per batch, one update each (0: %d)", spsaplan.DefaultLocalBatchPairs))
	fl.IntVar(&f.Concurrency, "concurrency", 1, "batches played at once")
	fl.StringVar(&record, "record", "", "record every update in this file; a tune started again with it resumes")
	fl.StringVar(&pgnout, "pgnout", "", "write every game to this PGN file (appended)")
	fl.BoolVar(&quiet, "quiet", false, "do not print a line per update")
	verify.add(fl)
	fl.StringSliceVar(&formats, "format", []string{"fishtest", "options"}, "print the tuned values in these formats at the end: fishtest, openbench, uci, options, go")
	return cmd
}

func runTune(cmd *cobra.Command, f spsaplan.Flags, record, pgnout string, quiet bool, formats []string, verify tuneVerifyFlags) error {
	if verify.given() {
		if err := verify.check(); err != nil {
			return cliexit.Usage("%v", err)
		}
	}
	var fs []sp.Format
	for _, s := range formats {
		ft, err := sp.ParseFormat(s)
		if err != nil {
			return cliexit.Usage("--format: %v", err)
		}
		fs = append(fs, ft)
	}
	ctx, stop := clicmd.SignalContext()
	defer stop()
	plan, err := spsaplan.Parse(ctx, f)
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	if verify.given() {
		// Refused now rather than after the tune.
		if _, err := plan.VerifyPlan(plan.Starts(), verify.games, verify.sprt, f.Concurrency); err != nil {
			return cliexit.Usage("%v", err)
		}
	}
	o := spsaplan.RunOptions{Out: cmd.OutOrStdout(), Quiet: quiet, Record: record, Builtin: builtin.New}
	if pgnout != "" {
		pf, err := os.OpenFile(pgnout, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return cliexit.Usage("--pgnout: %v", err)
		}
		defer pf.Close()
		o.PGN = pf
	}
	t, err := plan.Run(ctx, o)
	if err != nil {
		if t == nil {
			return cliexit.Usage("%v", err)
		}
		if ctx.Err() != nil {
			resume := ""
			if record != "" {
				resume = "; the same command resumes it from " + record
			}
			return cliexit.Failure("tune interrupted after %d of %d updates%s", t.Updates(), plan.Config.Batches(), resume)
		}
		return cliexit.Failure("tune stopped after %d of %d updates: %v", t.Updates(), plan.Config.Batches(), err)
	}
	for _, ft := range fs {
		s, err := sp.Export(ft, plan.Config.Params, t.Theta())
		if err != nil {
			return cliexit.Usage("--format: %v", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "\nTuned values (%s):\n%s", ft, s)
	}
	if !verify.given() {
		return nil
	}
	vp, err := plan.VerifyPlan(t.Theta(), verify.games, verify.sprt, f.Concurrency)
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nVerification: the tuned values against the start values\n")
	st, err := vp.Run(ctx, matchplan.RunOptions{Out: cmd.OutOrStdout(), Quiet: true, Builtin: builtin.New})
	if err != nil {
		return cliexit.Failure("verification: %v", err)
	}
	switch st.Status {
	case match.StatusInterrupted:
		return cliexit.Failure("verification interrupted after %d games", st.Games)
	case match.StatusFailed:
		return cliexit.Failure("verification stopped: %s", st.Failure)
	}
	return nil
}

// tuneVerifyFlags ask `tune` and `submit spsa --wait` to verify the tune when
// it ends: a match of its values against its start values.
type tuneVerifyFlags struct {
	games int
	sprt  string
}

func (v *tuneVerifyFlags) add(fl *pflag.FlagSet) {
	fl.IntVar(&v.games, "confirm-games", 0, "when the tune ends, play this many games (even) of its values against its start values (with --confirm-sprt: a cap)")
	fl.StringVar(&v.sprt, "confirm-sprt", "", "when the tune ends, an SPRT of its values against its start values: elo0=E0,elo1=E1[,alpha=..][,beta=..][,model=..]")
	// The former names ("verify" also named arbiter verify, perft's
	// recheck and more): still accepted, with a note.
	fl.IntVar(&v.games, "verify-games", 0, "deprecated: use --confirm-games")
	fl.StringVar(&v.sprt, "verify-sprt", "", "deprecated: use --confirm-sprt")
	fl.MarkDeprecated("verify-games", "use --confirm-games")
	fl.MarkDeprecated("verify-sprt", "use --confirm-sprt")
}

func (v *tuneVerifyFlags) given() bool { return v.games != 0 || v.sprt != "" }

func (v *tuneVerifyFlags) check() error {
	if v.games < 0 || v.games%2 != 0 {
		return fmt.Errorf("--confirm-games %d: want an even number of games (pairs of one opening)", v.games)
	}
	if v.games == 0 && v.sprt == "" {
		return fmt.Errorf("--confirm-games: give a number of games or --confirm-sprt")
	}
	return nil
}

// testFlags are the verification's cluster test flags: the tune's book
// and game settings, its scheduling and seed.
func (v *tuneVerifyFlags) testFlags(f spsaplan.Flags) matchplan.TestFlags {
	return matchplan.TestFlags{
		Match: matchplan.Flags{Each: f.Each, Openings: f.Openings, Games: v.games, SPRT: v.sprt, Resign: f.Resign, Draw: f.Draw,
			MaxMoves: f.MaxMoves, TimeMargin: f.TimeMargin, HangTimeout: f.HangTimeout, Event: f.Event},
		Priority: f.Priority, Throughput: f.Throughput, ReferenceNPS: f.ReferenceNPS,
	}
}

func newSPSACommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spsa",
		Short: "SPSA tunes: export a tune's values, verify them against the start values, list an engine's parameters",
	}
	cmd.AddCommand(newSPSAExportCommand(), newSPSAParamsCommand(), newSPSAVerifyCommand())
	return cmd
}

func newSPSAExportCommand() *cobra.Command {
	var client clicmd.ClientFlags
	var format string
	cmd := &cobra.Command{
		Use:   "export TUNE",
		Short: "Print a tune's current values to paste back (parameter lists, UCI options, Go rows)",
		Example: `  arbiter spsa export t1a2b3c4d5e6 --format openbench
  arbiter spsa export t1a2b3c4d5e6 --format go`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := sp.ParseFormat(format)
			if err != nil {
				return cliexit.Usage("--format: %v", err)
			}
			ctx, c, done, err := client.Session()
			if err != nil {
				return err
			}
			defer done()
			return ExportTune(ctx, cmd.OutOrStdout(), c, args[0], f)
		},
	}
	client.Add(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "fishtest", "fishtest | openbench | uci (setoption lines) | options (option.X=V, to append to an engine spec) | go (our engine's Params rows)")
	return cmd
}

func newSPSAParamsCommand() *cobra.Command {
	var engineFlag, params, format string
	cmd := &cobra.Command{
		Use:   "params",
		Short: "Print an engine's parameters as a tune takes them (from its spin options, or a list checked against them)",
		Example: `  arbiter spsa params --engine name=dev,builtin --params from-engine:RFPMargin,FutMargin --format openbench
  arbiter spsa params --engine name=toga,cmd=/usr/games/toga2 --params from-engine:"King Safety,Pawn Structure"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := sp.ParseFormat(format)
			if err != nil {
				return cliexit.Usage("--format: %v", err)
			}
			ctx, stop := clicmd.SignalContext()
			defer stop()
			ps, err := spsaplan.EngineParams(ctx, engineFlag, params)
			if err != nil {
				return cliexit.Usage("%v", err)
			}
			starts := make([]float64, len(ps))
			for i, p := range ps {
				starts[i] = p.Start
			}
			s, err := sp.Export(f, ps, starts)
			if err != nil {
				return cliexit.Usage("--format: %v", err)
			}
			fmt.Fprint(cmd.OutOrStdout(), s)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&engineFlag, "engine", "", "the engine: "+enginespec.Usage(enginespec.Match))
	fl.StringVar(&params, "params", sp.FromEnginePrefix, paramsUsage)
	fl.StringVar(&format, "format", "fishtest", "fishtest | openbench | uci | options | go")
	return cmd
}

func newSPSAVerifyCommand() *cobra.Command {
	var f testflags.Flags
	var client clicmd.ClientFlags
	var wait bool
	cmd := &cobra.Command{
		Use: "confirm TUNE",
		// Its former name, still accepted.
		Aliases: []string{"verify"},
		Short:   "Submit a match or SPRT of a tune's current values against its start values, shown by status TUNE",
		Long: `Submit an ordinary cluster test between the tuned engine with the tune's values now
(as spsa export gives them), named NAME-tuned, and the same engine with the
tune's start values, NAME-start. The test is linked to the tune: status TUNE
shows its games, W/D/L, Elo and state. --each defaults to the tune's time
control; --openings is required. Give --games N for a match, --sprt for an
SPRT (--games then caps it).`,
		Example: `  arbiter spsa confirm t1a2b3c4d5e6 --games 400 --openings file=books/uho-200.epd,order=random,seed=12
  arbiter spsa confirm t1a2b3c4d5e6 --sprt elo0=0,elo1=5 --each tc=10+0.1 --openings file=book.epd --wait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := client.Session()
			if err != nil {
				return err
			}
			defer done()
			return VerifyTune(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, args[0], f.M, wait, f.PGNOut)
		},
	}
	fl := cmd.Flags()
	client.Add(fl)
	f.Add(fl, "")
	// The sides are the tune's engine.
	_ = fl.MarkHidden("engine")
	fl.BoolVar(&wait, "wait", false, "wait for the test to end and print the report")
	return cmd
}
