package epd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// MaxConcurrency bounds --concurrency.
const MaxConcurrency = 256

type commandFlags struct {
	engines     []string
	suite       string
	each        string
	concurrency int
	json        bool
}

// NewCommand is `arbiter epd`: a suite searched by engines on this machine.
func NewCommand() *cobra.Command {
	var f commandFlags
	cmd := &cobra.Command{
		Use:   "epd",
		Short: "Search an EPD test suite (WAC, Bratko-Kopec, ...) with one or more engines and count the solved positions",
		Long: `Search every position of an EPD suite with each engine under one limit. A
position is solved when the engine's move is one of its bm moves and none of
its am moves (SAN, LAN such as Nf3-e5, or UCI in the file). Time and depth to
solve are the engine's at the first report from which its pv's first move
stayed a solving move. Each position is searched as a new game (hash cleared).

  arbiter epd --engine builtin --engine cmd=/usr/games/stockfish,option.Threads=1 \
      --suite wac.epd --each movetime=1000 --concurrency 2

--engine takes what arbiter match takes (builtin, cmd=PATH, args, name,
option.NAME=VALUE, proto); --each is one of movetime=MS, nodes=N, depth=D.
A suite with a bad line (no bm or am, an illegal or ambiguous move, an
illegal position) is refused with every bad line's number.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCommand(cmd.Context(), f, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.engines, "engine", nil, "an engine (repeat to compare several): builtin, cmd=PATH[,option.NAME=VALUE...]")
	fs.StringVar(&f.suite, "suite", "", "the EPD file")
	fs.StringVar(&f.each, "each", "", "the search of each position: movetime=MS, nodes=N or depth=D")
	fs.IntVar(&f.concurrency, "concurrency", 1, "searches at once")
	fs.BoolVar(&f.json, "json", false, "print the results as one JSON object at the end (docs/json/epd.schema.json) instead of lines and a table")
	return cmd
}

func runCommand(ctx context.Context, f commandFlags, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := commandConfig(f)
	if err != nil {
		return err
	}
	names := engineNames(cfg.Engines)
	if !f.json {
		fmt.Fprintf(out, "%s: %d positions, %d engine(s), %s, concurrency %d\n", cfg.Suite.Name, len(cfg.Suite.Positions), len(names), cfg.Limit, cfg.Concurrency)
		cfg.OnResult = func(r Result) { fmt.Fprintln(out, Line(cfg.Suite, names, r)) }
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	rows := Table(names, results)
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(reportJSON(cfg, names, rows, results))
	}
	fmt.Fprintln(out)
	WriteTable(out, rows)
	return nil
}

// commandConfig validates the flags into a run.
func commandConfig(f commandFlags) (RunConfig, error) {
	var cfg RunConfig
	switch {
	case len(f.engines) == 0:
		return cfg, fmt.Errorf("--engine: give at least one engine (builtin, cmd=PATH)")
	case len(f.engines) > MaxEngines:
		return cfg, fmt.Errorf("--engine: %d engines, at most %d", len(f.engines), MaxEngines)
	case f.suite == "":
		return cfg, fmt.Errorf("--suite: give the EPD file")
	case f.each == "":
		return cfg, fmt.Errorf("--each: give movetime=MS, nodes=N or depth=D")
	case f.concurrency < 1 || f.concurrency > MaxConcurrency:
		return cfg, fmt.Errorf("--concurrency %d: want 1 to %d", f.concurrency, MaxConcurrency)
	}
	limit, err := ParseLimit(f.each)
	if err != nil {
		return cfg, err
	}
	for _, s := range f.engines {
		spec, err := enginespec.Parse(s, enginespec.LocalMatch)
		if err != nil {
			return cfg, fmt.Errorf("--engine: %w", err)
		}
		if len(spec.Limits) > 0 {
			return cfg, fmt.Errorf("--engine %q: %s= is a limit; every engine searches under --each", s, spec.Limits[0].Key)
		}
		e, err := spec.MatchEngine(enginespec.Spec{})
		if err != nil {
			return cfg, fmt.Errorf("--engine: %w", err)
		}
		cfg.Engines = append(cfg.Engines, e)
	}
	suite, err := readSuite(f.suite)
	if err != nil {
		return cfg, err
	}
	cfg.Suite, cfg.Limit, cfg.Concurrency, cfg.Builtin = suite, limit, f.concurrency, builtin.New
	return cfg, nil
}

func readSuite(path string) (*Suite, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--suite: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxSuiteBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--suite %s: %w", path, err)
	}
	return ParseSuite(path, data)
}

// engineNames names each engine: its name=, else "builtin" or its
// program's file name, made unique with "#2", "#3"...; the configs get
// the names too (a player reports under its config's name).
func engineNames(engines []match.EngineConfig) []string {
	names := make([]string, len(engines))
	used := map[string]int{}
	for i := range engines {
		n := engines[i].Name
		switch {
		case n != "":
		case engines[i].Proto == string(enginespec.Builtin):
			n = "builtin"
		default:
			n = filepath.Base(engines[i].Cmd)
		}
		used[n]++
		if used[n] > 1 {
			n += "#" + strconv.Itoa(used[n])
		}
		names[i], engines[i].Name = n, n
	}
	return names
}
