package verify

// arbiter verify: the command (registered with clicmd from init), on this
// machine or, with --coordinator, with each engine query a unit of this
// kind (command_cluster.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/kinds/verify/verifyrun"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	vf "github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

type verifyFlags struct {
	engine      string
	positions   verifyrun.Positions
	timeout     time.Duration
	jsonOut     bool
	maxFindings int
	maxProbes   int
	threads     int
	// --coordinator
	client   clicmd.ClientFlags
	parallel int
}

func init() { clicmd.RegisterCommand("verify", NewCommand) }

// NewCommand is `arbiter verify`.
func NewCommand() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Find the bug in another engine's move generator: the exact position and move",
		Long: `verify runs an engine's perft against Arbiter's exact counts and, where they
differ, descends through the divide to the position where the engine lists
an illegal move or misses a legal one, and says why.

  arbiter verify --engine cmd=/usr/games/stockfish --depth 4          start position
  arbiter verify --engine cmd=./myengine --fen "FEN" --depth 5
  arbiter verify --engine cmd=./myengine --epd suite.epd --depth 4     expected counts from the EPD
  arbiter verify --engine cmd=scripts/perft/uci-perftree.sh,args=stockfish,proto=perftree --random 200 --seed 1 --depth 3

--engine: cmd=PATH[,args=A B][,proto=uci|perftree][,option.NAME=VALUE]...
  (a value with a comma is quoted: args="-bug a,b"; see docs/verify.md)
  uci       the engine answers "go perft N" with divide lines and a total
  perftree  PATH [args] DEPTH "FEN" "MOVES" prints divide lines, a blank line, the total

--coordinator ADDR: the same, with each engine query a unit for a worker of the
coordinator at ADDR that has the engine (arbiter worker --verify-engine
name=NAME,cmd=PATH); --engine name=NAME[,args=...][,option.X=V] or
cmd=PATH (NAME: the base name of PATH). Reports print as positions finish.

Exit status: 0 when no bug is found, 1 when a bug is found (or the engine fails),
2 on bad input, 3 when the coordinator is unreachable or refuses the credential.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runVerify(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.engine, "engine", "", "engine under test (required): "+enginespec.Usage(enginespec.Verify))
	fl.StringVar(&f.positions.EPD, "epd", "", "EPD perft suite (\"FEN ;D1 n ;D2 n ...\"); the line's D<depth> count is the reference")
	fl.StringVar(&f.positions.FEN, "fen", "", "one position (default: the start position, unless --epd or --random)")
	fl.IntVar(&f.positions.Depth, "depth", 0, "perft depth (required)")
	fl.IntVar(&f.positions.Random, "random", 0, "also verify K random positions (seeded walks from the start positions --random-variant says)")
	fl.StringVar(&f.positions.RandomVariant, "random-variant", "mixed", "starts of --random's walks: mixed (half standard, half Chess960), standard, or 960")
	fl.Uint64Var(&f.positions.Seed, "seed", 1, "seed of --random (same seed, same positions)")
	fl.BoolVar(&f.positions.Chess960, "chess960", false, "Chess960 notation for --fen/--epd positions; only Chess960 starts for --random (as --random-variant 960)")
	fl.DurationVar(&f.timeout, "timeout", time.Minute, "limit per engine query (one position at one depth)")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON object with every position's report")
	f.client.AddOptional(fl, "run the engine queries as units on the workers of this coordinator that have the engine (--engine name=NAME or the base name of cmd)")
	fl.IntVar(&f.parallel, "parallel", 8, "--coordinator: positions verified at once")
	fl.IntVar(&f.maxFindings, "max-findings", 8, "distinct findings per position before the descent stops")
	fl.IntVar(&f.maxProbes, "max-probes", 200, "engine queries per position before the descent stops")
	fl.IntVar(&f.threads, "threads", 0, "threads for Arbiter's own perft (default: all cores)")
	return cmd
}

func runVerify(cmd *cobra.Command, f *verifyFlags) error {
	if f.engine == "" {
		return cliexit.Usage("--engine is required (cmd=PATH[,args=...][,proto=uci|perftree][,option.X=V])")
	}
	var (
		spec vf.EngineSpec
		name string // the engine's name on the workers (--coordinator)
		err  error
	)
	if f.client.Given() {
		name, spec, err = verifyproto.ParseClientEngine(f.engine)
	} else {
		spec, err = localVerifyEngine(f.engine)
	}
	if err != nil {
		return cliexit.Usage("--engine: %v", err)
	}
	if err := clicmd.CheckDepth(cmd.Flags(), f.positions.Depth, 1); err != nil {
		return err
	}
	if err := clicmd.CheckRange("random", f.positions.Random, 0, 10_000_000); err != nil {
		return err
	}
	if f.timeout < 0 {
		return cliexit.Usage("--timeout %v: must not be negative", f.timeout)
	}
	if f.maxFindings < 1 || f.maxProbes < 1 {
		return cliexit.Usage("--max-findings and --max-probes must be at least 1")
	}
	if err := clicmd.CheckThreads(f.threads); err != nil {
		return err
	}
	targets, err := f.positions.Targets()
	if err != nil {
		return err
	}
	if f.client.Given() {
		return runVerifyCluster(cmd, f, name, spec, targets)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	eng, err := vf.Open(ctx, spec, f.timeout)
	if err != nil {
		var ee *vf.EngineError
		if errors.As(err, &ee) && ee.Kind == "start" {
			return cliexit.Usage("--engine: %v", err)
		}
		return cliexit.Failure("%v", err)
	}
	defer eng.Close()
	out := cmd.OutOrStdout()
	res := verifyrun.Run(ctx, verifyrun.Config{Engine: eng, Targets: targets, Depth: f.positions.Depth, Parallel: 1, Out: out, JSON: f.jsonOut,
		Options: vf.Options{MaxFindings: f.maxFindings, MaxProbes: f.maxProbes, Threads: f.threads}})
	if err := res.Print(out, f.jsonOut, nil); err != nil {
		return err
	}
	return res.Err(ctx)
}

// localVerifyEngine reads --engine for a local run: a program is required
// (name= alone names an engine on the workers of --cluster).
func localVerifyEngine(s string) (vf.EngineSpec, error) {
	es, err := enginespec.Parse(s, enginespec.Verify)
	if err != nil {
		return vf.EngineSpec{}, err
	}
	if es.Cmd == "" {
		return vf.EngineSpec{}, fmt.Errorf("no cmd=PATH (name=%s alone names an engine of the workers: add --cluster)", es.Name)
	}
	return es.VerifyEngine(), nil
}
