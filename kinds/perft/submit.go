package perft

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// `arbiter submit perft`: a perft job on a coordinator, waited for and
// printed as `arbiter perft` prints one (waitJob, print.go).

type submitPerftFlags struct {
	client   clicmd.ClientFlags
	fen      string
	depth    int
	verify   float64
	splitPly int
	divide   bool
	wait     bool
	jsonOut  bool
	chess960 bool
	progress bool
	stats    bool
	slices   int
	cross    crossCheckFlags
	// A suite: an EPD file, or the 960 Chess960 start positions.
	epd         string
	chess960All bool
}

// crossCheckFlags are --cross-check and --cross-check-fraction, of
// submit perft and perft --coordinator.
type crossCheckFlags struct {
	engine   string
	fraction float64
}

func (c *crossCheckFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&c.engine, "cross-check", "", "recompute a sampled share of the units with this program on a worker of another identity: a NAME the workers offer with arbiter worker --verify-engine name=NAME,cmd=PATH (e.g. stockfish)")
	fl.Float64Var(&c.fraction, "cross-check-fraction", 0, "with --cross-check: share of units (above 0, at most 1; 0: the default 0.05) cross-checked")
}

// local refuses the flags where no cluster runs the job (arbiter perft
// without --coordinator, or an EPD suite).
func (c *crossCheckFlags) local() error {
	if c.engine != "" || c.fraction != 0 {
		return cliexit.Usage("--cross-check: only with --coordinator and one position (the cluster's workers run the other program)")
	}
	return nil
}

// check refuses a fraction out of range, or one without a program.
func (c *crossCheckFlags) check() error {
	if math.IsNaN(c.fraction) || c.fraction < 0 || c.fraction > 1 {
		return cliexit.Usage("--cross-check-fraction %v: must be above 0 and at most 1", c.fraction)
	}
	if c.fraction != 0 && c.engine == "" {
		return cliexit.Usage("--cross-check-fraction %v: needs --cross-check NAME (the program to check with)", c.fraction)
	}
	return nil
}

func init() { clicmd.RegisterSubmit(jobkind.Perft, newSubmitPerftCommand) }

func newSubmitPerftCommand() *cobra.Command {
	var f submitPerftFlags
	cmd := &cobra.Command{
		Use:   "perft",
		Short: "Submit a distributed perft job",
		Example: `  arbiter submit perft --coordinator host:7700 --depth 8 --wait --divide
  arbiter submit perft --fen "FEN" --depth 7 --recheck 0.1 --wait --json
  arbiter submit perft --chess960-all --depth 7 --cross-check stockfish --wait
  arbiter submit perft --epd suite.epd --depth 5 --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSubmitPerft(cmd, &f)
		},
	}
	fl := cmd.Flags()
	f.client.Add(fl)
	fl.StringVar(&f.fen, "fen", engine.StartFEN, "position (FEN, Shredder-FEN or X-FEN)")
	fl.IntVar(&f.depth, "depth", -1, "perft depth (required)")
	fl.Float64Var(&f.verify, "recheck", 0, "share of units (0..1) computed again by a worker of another identity (0: the coordinator's default, see arbiter coordinator --recheck-default)")
	fl.Float64Var(&f.verify, "verify", 0, "deprecated: use --recheck")
	fl.MarkDeprecated("verify", "use --recheck (arbiter verify is the move-generator check)")
	fl.IntVar(&f.splitPly, "split-ply", 0, "ply at which the root is split into units (0: chosen from depth)")
	fl.BoolVar(&f.divide, "divide", false, "print the count below each root move")
	fl.BoolVar(&f.wait, "wait", false, "wait for the result (survives coordinator restarts)")
	fl.BoolVar(&f.jsonOut, "json", false, "with --wait: print the result as one JSON object")
	fl.BoolVar(&f.chess960, "chess960", false, "treat the position as Chess960")
	fl.BoolVar(&f.progress, "progress", true, "with --wait: show a progress bar on a terminal")
	fl.BoolVar(&f.stats, "stats", false, "count the statistics too (captures, e.p., castles, promotions, checks, discovered and double checks, mates)")
	fl.IntVar(&f.slices, "slices", 0, "cut each position's tree into this many slices, one per worker table (0: from the workers, 1: none)")
	f.cross.add(fl)
	fl.StringVar(&f.epd, "epd", "", "a suite: one job over every position of this EPD/FEN file (one a line; blank lines and # comments skipped), numbered from 1")
	fl.BoolVar(&f.chess960All, "chess960-all", false, "a suite: one job over the 960 Chess960 start positions, numbered 0..959 as Scharnagl (518 is the standard one)")
	return cmd
}

func runSubmitPerft(cmd *cobra.Command, f *submitPerftFlags) error {
	if err := clicmd.CheckDepth(cmd.Flags(), f.depth, 0); err != nil {
		return err
	}
	if f.verify < 0 || f.verify > 1 {
		return cliexit.Usage("--recheck %v: must be between 0 and 1", f.verify)
	}
	if f.splitPly < 0 {
		return cliexit.Usage("--split-ply %d: must be 0 (automatic) or more", f.splitPly)
	}
	if f.slices < 0 || f.slices > 256 {
		return cliexit.Usage("--slices %d: must be between 0 (automatic) and 256", f.slices)
	}
	if _, err := engine.ParseFEN(f.fen); err != nil {
		return cliexit.Usage("--fen: %v", err)
	}
	if f.jsonOut && !f.wait {
		return cliexit.Usage("--json needs --wait")
	}
	if err := f.cross.check(); err != nil {
		return err
	}
	suite, first, err := perftSuite(cmd, f)
	if err != nil {
		return err
	}
	ctx, c, done, err := f.client.Session()
	if err != nil {
		return err
	}
	defer done()
	resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{
		Fen: f.fen, Depth: uint32(f.depth), SplitPly: uint32(f.splitPly), VerifyFraction: f.verify, Chess960: f.chess960 || f.chess960All,
		Stats: f.stats, Slices: uint32(f.slices), CrossCheck: f.cross.engine, CrossCheckFraction: f.cross.fraction,
		Suite: suite, SuiteFirst: first,
	}})
	if err != nil {
		return cliexit.Call(c, "submit", err)
	}
	job := resp.GetJob()
	if !f.wait {
		fmt.Fprintln(cmd.OutOrStdout(), job.GetJobId())
		return nil
	}
	if suite != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "suite of %d positions: ", len(suite))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "job %s: perft %d, %d units, %d unique positions at ply %d\n",
		job.GetJobId(), f.depth, job.GetProgress().GetUnitsTotal(), job.GetProgress().GetPositions(), job.GetPerft().GetSplitPly())
	_, err = waitJob(ctx, c, job, jobreport.WaitOptions{Out: cmd.OutOrStdout(), Progress: cmd.ErrOrStderr(),
		Bar: f.progress && !f.jsonOut, JSON: f.jsonOut, Divide: f.divide})
	return err
}

// runClusterPerft serves `arbiter perft --coordinator ADDR`: submit
// --wait with the same output.
func runClusterPerft(cmd *cobra.Command, client clicmd.ClientFlags, fen string, depth int, divide, jsonOut, stats bool, cross crossCheckFlags) error {
	f := submitPerftFlags{client: client, fen: fen, depth: depth, divide: divide, wait: true, jsonOut: jsonOut, progress: true, stats: stats,
		cross: cross}
	return runSubmitPerft(cmd, &f)
}
