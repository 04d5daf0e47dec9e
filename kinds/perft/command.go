package perft

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftrun"
)

// `arbiter perft`: perft of a FEN or an EPD suite on this machine, all
// cores (perftrun), or with --coordinator the same job on a cluster, as
// `submit perft --wait` (submit.go).

func init() { clicmd.RegisterCommand("perft", newPerftCommand) }

// localHashMB is arbiter perft's default hash table: none, since below
// depth 7 the table costs more to clear than it saves (README, "Hash
// tables").
const localHashMB = 0

type perftFlags struct {
	fen      string
	depth    int
	divide   bool
	stats    bool
	threads  int
	hashMB   int
	chess960 bool
	jsonOut  bool
	epd      string
	maxDepth int
	maxNodes string
	client   clicmd.ClientFlags
	cross    crossCheckFlags
}

func newPerftCommand() *cobra.Command {
	var f perftFlags
	cmd := &cobra.Command{
		Use:   "perft",
		Short: "Count the legal move tree of a position (or check an EPD suite) on this machine",
		Long: `perft counts the leaves of the legal move tree to a depth, exactly, on all cores.

  arbiter perft --depth 6                         start position
  arbiter perft --fen "FEN" --depth 5 --divide    count per root move
  arbiter perft --depth 5 --stats                 captures, e.p., castles, promotions, checks, mates
  arbiter perft --epd suite.epd --max-nodes 1e7   check a suite of "FEN ;D1 n ;D2 n ..." lines
  arbiter perft --depth 8 --coordinator HOST      run it on a cluster (as submit perft --wait)

Exit status: 0 on success, 1 when a suite count does not match, 2 on bad input,
3 when the coordinator is unreachable or refuses the credential.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.epd != "" {
				return runPerftSuite(cmd, &f)
			}
			return runPerftOne(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.fen, "fen", engine.StartFEN, "position as FEN (standard, X-FEN or Shredder-FEN castling)")
	fl.IntVar(&f.depth, "depth", 0, "depth in plies (required unless --epd)")
	fl.BoolVar(&f.divide, "divide", false, "print the count below each root move")
	fl.BoolVar(&f.stats, "stats", false, "extended statistics (captures, e.p., castles, promotions, checks incl. mates, discovered and double checks, mates); --hash then sizes a statistics table")
	fl.IntVar(&f.threads, "threads", 0, "threads (default: all cores)")
	fl.IntVar(&f.hashMB, "hash", localHashMB, "perft hash table size in MB, shared by all threads (0: none; worth it from depth 7)")
	fl.BoolVar(&f.chess960, "chess960", false, "Chess960 notation (detected from Shredder-FEN/X-FEN castling letters otherwise)")
	fl.BoolVar(&f.jsonOut, "json", false, "one JSON object per position and depth")
	fl.StringVar(&f.epd, "epd", "", "suite mode: EPD file of \"FEN ;D1 n ;D2 n ...\" lines")
	fl.IntVar(&f.maxDepth, "max-depth", 0, "suite mode: check depths up to this (0: all)")
	fl.StringVar(&f.maxNodes, "max-nodes", "", "suite mode: skip depths whose expected count exceeds this (e.g. 1e8)")
	f.client.AddOptional(fl, "submit to this coordinator instead of running here (see arbiter submit perft)")
	f.cross.add(fl)
	return cmd
}

func (f *perftFlags) validateCommon() error {
	if err := clicmd.CheckThreads(f.threads); err != nil {
		return err
	}
	return clicmd.CheckHash(f.hashMB, 0)
}

func perftContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func runPerftOne(cmd *cobra.Command, f *perftFlags) error {
	if err := f.validateCommon(); err != nil {
		return err
	}
	if err := clicmd.CheckDepth(cmd.Flags(), f.depth, 0); err != nil {
		return err
	}
	pos, err := engine.ParseFEN(f.fen)
	if err != nil {
		return cliexit.Usage("--fen: %v", err)
	}
	if f.chess960 {
		pos.SetChess960(true)
	}
	if f.client.Given() {
		return runClusterPerft(cmd, f.client, pos.FEN(), f.depth, f.divide, f.jsonOut, f.stats, f.cross)
	}
	if err := f.cross.local(); err != nil {
		return err
	}
	ctx, cancel := perftContext()
	defer cancel()
	opt := engine.PerftOptions{Threads: f.threads, Stats: f.stats}
	tableBytes := 0
	if f.stats {
		if opt.StatsTable = engine.NewPerftStatsTable(f.hashMB); opt.StatsTable != nil {
			tableBytes = opt.StatsTable.SizeBytes()
		}
	} else if opt.Table = engine.NewPerftTable(f.hashMB); opt.Table != nil {
		tableBytes = opt.Table.SizeBytes()
	}
	out := cmd.OutOrStdout()
	res, elapsed, err := perftrun.Run(ctx, cmd.ErrOrStderr(), pos, f.depth, opt)
	if err != nil {
		return fmt.Errorf("perft interrupted: %w", err)
	}
	if f.jsonOut {
		return perftrun.WriteJSON(out, pos.FEN(), f.depth, res, elapsed, f.divide)
	}
	perftrun.PrintText(out, res, elapsed, f.divide)
	if h := res.Hash; h != nil {
		perftrun.PrintHash(out, tableBytes, *h)
	}
	return nil
}

func runPerftSuite(cmd *cobra.Command, f *perftFlags) error {
	if err := f.validateCommon(); err != nil {
		return err
	}
	if err := f.cross.local(); err != nil {
		return err
	}
	if err := clicmd.CheckRange("max-depth", f.maxDepth, 0, engine.MaxPerftDepth); err != nil {
		return err
	}
	var maxNodes *engine.Count
	if f.maxNodes != "" {
		n, err := perftrun.ParseNodeLimit(f.maxNodes)
		if err != nil {
			return cliexit.Usage("--max-nodes %q: %v", f.maxNodes, err)
		}
		maxNodes = &n
	}
	lines, err := perftrun.LoadSuite(f.epd, f.chess960)
	if err != nil {
		return err
	}
	ctx, cancel := perftContext()
	defer cancel()
	return perftrun.RunSuite(ctx, lines, perftrun.SuiteOptions{MaxDepth: f.maxDepth, MaxNodes: maxNodes, Threads: f.threads,
		Table: engine.NewPerftTable(f.hashMB), JSON: f.jsonOut, Out: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
}
