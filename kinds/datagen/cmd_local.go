package datagen

// `arbiter datagen`: a DATAGEN dataset generated on this machine, the same
// batches a coordinator would lease (dg.BatchSeed), written in order
// so that the file depends on the seed and not on --concurrency.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// datagenLocalFlags are `arbiter datagen`'s flags: the dataset's and how
// this machine runs it.
type datagenLocalFlags struct {
	d           datagenFlags
	engine      string
	out         string
	concurrency int
	batchGames  int
	duplicates  string
	quiet       bool
}

// Bounds of the local flags.
const (
	maxDatagenConcurrency = 1024
	defaultBatchGames     = 8
	maxBatchGames         = 10000
)

// The kind's commands: `arbiter submit datagen`, and `arbiter datagen`
// (generation on this machine) with its `pull` (a dataset of the farm).
func init() {
	clicmd.RegisterSubmit(Kind, newSubmitDatagenCommand)
	clicmd.RegisterCommand(Kind, newDatagenCommand)
}

func newDatagenCommand() *cobra.Command {
	var f datagenLocalFlags
	cmd := &cobra.Command{
		Use:   "datagen",
		Short: "Generate NNUE training data on this machine: self-play at fixed nodes, bullet's text or binary records, viriformat, or PGN",
		Long: `Play an engine against itself at a fixed node count from random openings and write
the positions it saw, with its score and the game's result, in bullet's formats:

  arbiter datagen --engine name=dev,builtin --each nodes=5000 --positions 1000000 \
      --random-plies 8-9 --random-seed 1 --format bulletformat --out dev.bin

The same seed gives the same file (with a deterministic engine such as the builtin
one) whatever --concurrency. Exactly --positions records are written (the last
game's cut to fit; --format pgn writes whole games instead). --format viriformat writes
games, one for each run of positions at consecutive plies that passed the filters:
with --filters none --duplicates keep every game is one run (about 4.6 bytes a position)
and the trainer's viriformat filter picks positions as it reads them.

--engine keys: name, cmd, args, arg, dir, proto (uci|xboard), builtin,
option.NAME=VALUE, nodes=N. --each: nodes=N (required) and option.NAME=VALUE.
See docs/datagen.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return generateHere(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.engine, "engine", "", "the engine: "+enginespec.Usage(enginespec.LocalMatch))
	f.d.add(fl)
	f.d.addTablebase(fl)
	fl.StringVar(&f.out, "out", "", "write the dataset to this file (refused if it exists)")
	fl.IntVar(&f.concurrency, "concurrency", runtime.NumCPU(), "batches played at once (one engine each)")
	fl.IntVar(&f.batchGames, "batch-games", defaultBatchGames, "games in a batch (the unit a seed derives)")
	fl.StringVar(&f.duplicates, "duplicates", "drop", "keep or drop records of a position already written (counted either way)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	cmd.AddCommand(newDatagenPullCommand())
	return cmd
}

// datagenEngine reads --engine and --each's options into the engine
// config; nodes= on the engine overrides --each's.
func datagenEngine(spec string, opts []enginespec.Setting, s *dg.Settings) (match.EngineConfig, error) {
	if spec == "" {
		return match.EngineConfig{}, clicmd.Required("engine", "the engine that plays both sides, e.g. name=dev,builtin or cmd=./engine")
	}
	es, err := enginespec.Parse(spec, enginespec.LocalMatch)
	if err != nil {
		return match.EngineConfig{}, cliexit.Usage("--engine: %v", err)
	}
	if es.MovegenGate != "" {
		return match.EngineConfig{}, cliexit.Usage("--engine: perft-gate= is for matches and tests; check a generator with arbiter verify")
	}
	for _, l := range es.Limits {
		if l.Key != "nodes" {
			return match.EngineConfig{}, cliexit.Usage("--engine: %s=: datagen plays at fixed nodes only (give nodes=N)", l.Key)
		}
	}
	cfg, err := es.MatchEngine(enginespec.Spec{Options: opts})
	if err != nil {
		return cfg, cliexit.Usage("--engine: %v", err)
	}
	if cfg.Limits.Nodes > 0 {
		s.Nodes = int(cfg.Limits.Nodes)
		if err := s.Validate(); err != nil {
			return cfg, cliexit.Usage("--engine: %v", err)
		}
	}
	if cfg.Name == "" {
		cfg.Name = "builtin"
		if cfg.Cmd != "" {
			cfg.Name = filepath.Base(cfg.Cmd)
		}
	}
	return cfg, nil
}

func generateHere(cmd *cobra.Command, f *datagenLocalFlags) error {
	s, opts, format, err := f.d.settings()
	if err != nil {
		return err
	}
	cfg, err := datagenEngine(f.engine, opts, &s)
	if err != nil {
		return err
	}
	if err := clicmd.CheckRange("concurrency", f.concurrency, 1, maxDatagenConcurrency); err != nil {
		return err
	}
	if err := clicmd.CheckRange("batch-games", f.batchGames, 1, maxBatchGames); err != nil {
		return err
	}
	if f.duplicates != "keep" && f.duplicates != "drop" {
		return cliexit.Usage("--duplicates %q: want keep or drop", f.duplicates)
	}
	if f.out == "" {
		return clicmd.Required("out", "the file the dataset is written to")
	}
	if _, err := os.Stat(f.out); err == nil {
		return cliexit.Usage("--out %s: the file exists (remove it or choose another name)", f.out)
	}
	// One engine is started before anything is written: an engine that
	// cannot start is bad input, and leaves no file behind.
	first, err := match.NewPlayer(cfg, builtin.New)
	if err != nil {
		return cliexit.Usage("--engine: %v", err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	if !f.quiet {
		fmt.Fprintf(stderr, "datagen: %s at nodes=%d, %d positions, %d-%d random plies, seed %d, %d batches at once, %s to %s\n",
			cfg.Name, s.Nodes, f.d.positions, s.RandomPliesMin, s.RandomPliesMax, f.d.randomSeed, f.concurrency, format, f.out)
	}
	start := time.Now()
	l := dg.Local{Settings: s, Seed: f.d.randomSeed, Positions: f.d.positions, Concurrency: f.concurrency, BatchGames: f.batchGames,
		KeepDuplicates: f.duplicates == "keep", NewPlayer: func() (match.Player, error) { return match.NewPlayer(cfg, builtin.New) }}
	if !f.quiet {
		l.Progress = stderr
	}
	// The dataset is written under a temporary name and renamed when
	// complete: a file named --out is always a whole dataset.
	partial := f.out + ".partial"
	st, err := l.WriteFile(ctx, first, f.out, format, dg.PGNInfo{Engine: cfg.Name})
	var open *dg.OpenError
	if errors.As(err, &open) {
		return cliexit.Usage("--out: %v", err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return cliexit.Failure("datagen stopped after %d positions; what was written is in %s", st.Positions, partial)
		}
		return cliexit.Failure("datagen: %v (what was written is in %s)", err, partial)
	}
	printDatagenSummary(stdout, f, format, st, time.Since(start))
	return nil
}

func printDatagenSummary(out io.Writer, f *datagenLocalFlags, format dg.Format, st dg.LocalStats, el time.Duration) {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	size := ""
	if fi, err := os.Stat(f.out); err == nil && st.Positions > 0 {
		size = fmt.Sprintf(", %d bytes: %.2f a position", fi.Size(), float64(fi.Size())/float64(st.Positions))
	}
	fmt.Fprintf(out, "positions   %d (%s, %s%s)\n", st.Positions, format, f.out, size)
	fmt.Fprintf(out, "games       %d: white wins %d (%.1f%%), draws %d (%.1f%%), black wins %d (%.1f%%)\n", st.Games,
		st.WDL[0], pct(st.WDL[0], st.Games), st.WDL[1], pct(st.WDL[1], st.Games), st.WDL[2], pct(st.WDL[2], st.Games))
	avg := 0.0
	if st.Games > 0 {
		avg = float64(st.Plies) / float64(st.Games)
	}
	fmt.Fprintf(out, "length      %.1f plies a game on average\n", avg)
	verb := "kept"
	if f.duplicates == "drop" {
		verb = "dropped"
	}
	if f.d.tb != "" {
		fmt.Fprintf(out, "tablebase   %d games adjudicated by the tables, %d records rescored\n", st.Tablebase, st.Rescored)
	}
	fmt.Fprintf(out, "duplicates  %d (%.2f%% of the positions seen), %s\n", st.Duplicates, pct(st.Duplicates, st.Positions+dropped(f, st)), verb)
	fmt.Fprintf(out, "speed       %.0f positions/s, %.1f games/s (%.1fs, %d at once)\n",
		float64(st.Positions)/el.Seconds(), float64(st.Games)/el.Seconds(), el.Seconds(), f.concurrency)
}

// dropped is how many duplicates were left out of the file.
func dropped(f *datagenLocalFlags, st dg.LocalStats) int {
	if f.duplicates == "drop" {
		return st.Duplicates
	}
	return 0
}
