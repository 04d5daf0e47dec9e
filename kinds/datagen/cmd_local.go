package datagen

// `arbiter datagen`: a DATAGEN dataset generated on this machine, the same
// batches a coordinator would lease (dg.BatchSeed), written in order
// so that the file depends on the seed and not on --concurrency.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
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

// datagenStats is what the summary reports, of the games whose records
// are in the file.
type datagenStats struct {
	positions, games, plies int
	wdl                     [3]int // White wins, draws, Black wins
	duplicates              int
	tablebase, rescored     int // games ended by the tables, records whose result the tables changed
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
	// The dataset is written under a temporary name and renamed when
	// complete: a file named --out is always a whole dataset.
	partial := f.out + ".partial"
	file, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		first.Quit()
		return cliexit.Usage("--out: %v", err)
	}
	defer file.Close()

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	if !f.quiet {
		fmt.Fprintf(stderr, "datagen: %s at nodes=%d, %d positions, %d-%d random plies, seed %d, %d batches at once, %s to %s\n",
			cfg.Name, s.Nodes, f.d.positions, s.RandomPliesMin, s.RandomPliesMax, f.d.randomSeed, f.concurrency, format, f.out)
	}
	start := time.Now()
	w := dg.NewWriter(file, format, dg.PGNInfo{Engine: cfg.Name})
	st, err := generate(ctx, f, s, cfg, first, w, stderr, start)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = file.Close()
	}
	if err == nil {
		err = os.Rename(partial, f.out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return cliexit.Failure("datagen stopped after %d positions; what was written is in %s", st.positions, partial)
		}
		return cliexit.Failure("datagen: %v (what was written is in %s)", err, partial)
	}
	printDatagenSummary(stdout, f, format, st, time.Since(start))
	return nil
}

// keptPlayer is a player that lives across batches: PlayGames quits the
// player it is given at the end of a batch, this one stays for the next.
type keptPlayer struct{ match.Player }

func (keptPlayer) Quit() error { return nil }

type batchResult struct {
	batch int
	games []dg.Game
	err   error
}

// generate plays batches 0, 1, 2, ... on f.concurrency engines and writes
// their records in batch order until f.d.positions are written. first is
// the first engine, started; generate quits it.
func generate(ctx context.Context, f *datagenLocalFlags, s dg.Settings, cfg match.EngineConfig, first match.Player, w *dg.Writer, stderr io.Writer, start time.Time) (datagenStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	results := make(chan batchResult, f.concurrency)
	var wg sync.WaitGroup
	for i := range f.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := first
			if i > 0 {
				var err error
				if p, err = match.NewPlayer(cfg, builtin.New); err != nil {
					results <- batchResult{batch: -1, err: err}
					return
				}
			}
			defer p.Quit()
			newPlayer := func() (match.Player, error) { return keptPlayer{p}, nil }
			for b := range jobs {
				games, err := dg.PlayGames(ctx, newPlayer, s, dg.BatchSeed(f.d.randomSeed, uint64(b)), f.batchGames)
				results <- batchResult{batch: b, games: games, err: err}
				if err != nil {
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for b := 0; ; b++ {
			select {
			case jobs <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		// Stop the engines and let the last batches' results fall away.
		cancel()
		go func() {
			for range results {
			}
		}()
		wg.Wait()
		close(results)
	}()

	var st datagenStats
	seen := map[[16]byte]struct{}{}
	pending := map[int][]dg.Game{}
	next := 0
	lastReport := start
	n := f.d.positions
	for st.positions < n {
		var r batchResult
		select {
		case r = <-results:
		case <-ctx.Done():
			return st, ctx.Err()
		}
		if r.err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			return st, r.err
		}
		pending[r.batch] = r.games
		for games, ok := pending[next]; ok && st.positions < n; games, ok = pending[next] {
			delete(pending, next)
			next++
			for _, g := range games {
				if st.positions == n {
					break
				}
				recs := dg.Records(g, s.Filters)
				kept := recs[:0]
				for _, rec := range recs {
					k := dg.PositionKey(rec.FEN)
					if _, dup := seen[k]; dup {
						st.duplicates++
						if f.duplicates == "drop" {
							continue
						}
					} else {
						seen[k] = struct{}{}
					}
					kept = append(kept, rec)
					if st.positions+len(kept) == n {
						break
					}
				}
				if s.Tablebase.Rescore {
					st.rescored += dg.RescoreRecords(kept, s.Tablebase)
				}
				if g.Termination == dg.TermTablebase {
					st.tablebase++
				}
				if err := w.WriteGame(g, kept); err != nil {
					return st, err
				}
				st.positions += len(kept)
				st.games++
				st.plies += len(g.Moves)
				st.wdl[g.Result-dg.WhiteWins]++
			}
		}
		if !f.quiet && time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(stderr, "datagen: %d/%d positions (%.1f%%), %d games, %.0f positions/s\n",
				st.positions, n, 100*float64(st.positions)/float64(n), st.games, float64(st.positions)/el)
		}
	}
	return st, nil
}

func printDatagenSummary(out io.Writer, f *datagenLocalFlags, format dg.Format, st datagenStats, el time.Duration) {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	size := ""
	if fi, err := os.Stat(f.out); err == nil && st.positions > 0 {
		size = fmt.Sprintf(", %d bytes: %.2f a position", fi.Size(), float64(fi.Size())/float64(st.positions))
	}
	fmt.Fprintf(out, "positions   %d (%s, %s%s)\n", st.positions, format, f.out, size)
	fmt.Fprintf(out, "games       %d: white wins %d (%.1f%%), draws %d (%.1f%%), black wins %d (%.1f%%)\n", st.games,
		st.wdl[0], pct(st.wdl[0], st.games), st.wdl[1], pct(st.wdl[1], st.games), st.wdl[2], pct(st.wdl[2], st.games))
	avg := 0.0
	if st.games > 0 {
		avg = float64(st.plies) / float64(st.games)
	}
	fmt.Fprintf(out, "length      %.1f plies a game on average\n", avg)
	verb := "kept"
	if f.duplicates == "drop" {
		verb = "dropped"
	}
	if f.d.tb != "" {
		fmt.Fprintf(out, "tablebase   %d games adjudicated by the tables, %d records rescored\n", st.tablebase, st.rescored)
	}
	fmt.Fprintf(out, "duplicates  %d (%.2f%% of the positions seen), %s\n", st.duplicates, pct(st.duplicates, st.positions+dropped(f, st)), verb)
	fmt.Fprintf(out, "speed       %.0f positions/s, %.1f games/s (%.1fs, %d at once)\n",
		float64(st.positions)/el.Seconds(), float64(st.games)/el.Seconds(), el.Seconds(), f.concurrency)
}

// dropped is how many duplicates were left out of the file.
func dropped(f *datagenLocalFlags, st datagenStats) int {
	if f.duplicates == "drop" {
		return st.duplicates
	}
	return 0
}
