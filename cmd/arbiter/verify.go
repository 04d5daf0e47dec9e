package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/enginespec"
	"github.com/arbiter-chess/arbiter/internal/verifyproto"
	"github.com/arbiter-chess/arbiter/verify"
)

func init() { subcommands = append(subcommands, newVerifyCommand) }

type verifyFlags struct {
	engine      string
	epd         string
	fen         string
	depth       int
	random      int
	seed        uint64
	chess960    bool
	timeout     time.Duration
	jsonOut     bool
	maxFindings int
	maxProbes   int
	threads     int
	// --coordinator
	client   clientFlags
	parallel int
}

func newVerifyCommand() *cobra.Command {
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
  arbiter verify --engine cmd=./perft.sh,proto=perftree --random 200 --seed 1 --depth 3

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
	fl.StringVar(&f.epd, "epd", "", "EPD perft suite (\"FEN ;D1 n ;D2 n ...\"); the line's D<depth> count is the reference")
	fl.StringVar(&f.fen, "fen", "", "one position (default: the start position, unless --epd or --random)")
	fl.IntVar(&f.depth, "depth", 0, "perft depth (required)")
	fl.IntVar(&f.random, "random", 0, "also verify K random positions (seeded walks, standard and Chess960)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of --random (same seed, same positions)")
	fl.BoolVar(&f.chess960, "chess960", false, "Chess960 notation for --fen/--epd positions; only Chess960 starts for --random")
	fl.DurationVar(&f.timeout, "timeout", time.Minute, "limit per engine query (one position at one depth)")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON object with every position's report")
	f.client.addOptional(fl, "run the engine queries as units on the workers of this coordinator that have the engine (--engine name=NAME or the base name of cmd)")
	fl.IntVar(&f.parallel, "parallel", 8, "--coordinator: positions verified at once")
	fl.IntVar(&f.maxFindings, "max-findings", 8, "distinct findings per position before the descent stops")
	fl.IntVar(&f.maxProbes, "max-probes", 200, "engine queries per position before the descent stops")
	fl.IntVar(&f.threads, "threads", 0, "threads for Arbiter's own perft (default: all cores)")
	return cmd
}

// verifyTargets turns the flags into the positions to check.
func verifyTargets(f *verifyFlags) ([]verify.Target, error) {
	var ts []verify.Target
	if f.fen != "" {
		pos, err := engine.ParseFEN(f.fen)
		if err != nil {
			return nil, usageError("--fen: %v", err)
		}
		ts = append(ts, verify.Target{ID: "fen", FEN: pos.FEN(), Depth: f.depth, Chess960: f.chess960 || pos.IsChess960()})
	}
	if f.epd != "" {
		file, err := os.Open(f.epd)
		if err != nil {
			return nil, usageError("--epd: %v", err)
		}
		defer file.Close()
		et, err := verify.LoadEPD(file, filepath.Base(f.epd), f.depth, f.chess960)
		if err != nil {
			return nil, usageError("--epd: %v", err)
		}
		ts = append(ts, et...)
	}
	if f.random > 0 {
		ts = append(ts, verify.RandomTargets(f.random, f.seed, verify.RandomOptions{Depth: f.depth, Chess960: f.chess960})...)
	}
	if len(ts) == 0 {
		ts = append(ts, verify.Target{ID: "startpos", FEN: engine.StartFEN, Depth: f.depth})
	}
	return ts, nil
}

func runVerify(cmd *cobra.Command, f *verifyFlags) error {
	if f.engine == "" {
		return usageError("--engine is required (cmd=PATH[,args=...][,proto=uci|perftree][,option.X=V])")
	}
	var (
		spec verify.EngineSpec
		name string // the engine's name on the workers (--coordinator)
		err  error
	)
	if f.client.given() {
		name, spec, err = verifyproto.ParseClientEngine(f.engine)
	} else {
		spec, err = localVerifyEngine(f.engine)
	}
	if err != nil {
		return usageError("--engine: %v", err)
	}
	if f.depth < 1 || f.depth > engine.MaxPerftDepth {
		return usageError("--depth %d: want 1..%d", f.depth, engine.MaxPerftDepth)
	}
	if f.random < 0 || f.random > 10_000_000 {
		return usageError("--random %d: want 0..10000000", f.random)
	}
	if f.timeout < 0 {
		return usageError("--timeout %v: must not be negative", f.timeout)
	}
	if f.maxFindings < 1 || f.maxProbes < 1 {
		return usageError("--max-findings and --max-probes must be at least 1")
	}
	if f.threads < 0 || f.threads > 4096 {
		return usageError("--threads %d: must be between 0 (all cores) and 4096", f.threads)
	}
	targets, err := verifyTargets(f)
	if err != nil {
		return err
	}
	if f.client.given() {
		return runVerifyCluster(cmd, f, name, spec, targets)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	eng, err := verify.Open(ctx, spec, f.timeout)
	if err != nil {
		var ee *verify.EngineError
		if errors.As(err, &ee) && ee.Kind == "start" {
			return usageError("--engine: %v", err)
		}
		return failure("%v", err)
	}
	defer eng.Close()

	out := cmd.OutOrStdout()
	opt := verify.Options{MaxFindings: f.maxFindings, MaxProbes: f.maxProbes, Threads: f.threads}
	start := time.Now()
	var reps []verify.Report
	sum := verifySummary{Engine: eng.Name(), Depth: f.depth}
	for _, t := range targets {
		rep := verify.Verify(ctx, eng, t, opt)
		reps = append(reps, rep)
		sum.add(rep)
		if !f.jsonOut {
			printVerifyReport(out, &rep)
		}
		if ctx.Err() != nil {
			break
		}
	}
	sum.Positions = len(reps)
	sum.Seconds = time.Since(start).Seconds()
	if f.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Summary   verifySummary   `json:"summary"`
			Positions []verify.Report `json:"positions"`
		}{sum, reps}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "\n%s: %d positions at depth %d: %d ok, %d with bugs (%d findings), %d engine errors, in %.1fs\n",
			sum.Engine, sum.Positions, sum.Depth, sum.OK, sum.Bugs, sum.Findings, sum.Errors, sum.Seconds)
	}
	if ctx.Err() != nil {
		return failure("interrupted")
	}
	if sum.Bugs > 0 || sum.Errors > 0 {
		return failure("%d of %d positions show a bug, %d engine errors", sum.Bugs, sum.Positions, sum.Errors)
	}
	return nil
}

// localVerifyEngine reads --engine for a local run: a program is required
// (name= alone names an engine on the workers of --cluster).
func localVerifyEngine(s string) (verify.EngineSpec, error) {
	es, err := enginespec.Parse(s, enginespec.Verify)
	if err != nil {
		return verify.EngineSpec{}, err
	}
	if es.Cmd == "" {
		return verify.EngineSpec{}, fmt.Errorf("no cmd=PATH (name=%s alone names an engine of the workers: add --cluster)", es.Name)
	}
	return es.VerifyEngine(), nil
}

type verifySummary struct {
	Engine    string  `json:"engine"`
	Depth     int     `json:"depth"`
	Positions int     `json:"positions"`
	OK        int     `json:"ok"`
	Bugs      int     `json:"bugs"`
	Findings  int     `json:"findings"`
	Errors    int     `json:"errors"`
	Seconds   float64 `json:"seconds"`
}

// add counts one position's report.
func (s *verifySummary) add(r verify.Report) {
	switch r.Status {
	case "ok":
		s.OK++
	case "bug":
		s.Bugs++
	default:
		s.Errors++
	}
	s.Findings += len(r.Findings)
}

// printVerifyReport prints one position: a line when it is fine, the
// findings in full when not.
func printVerifyReport(w io.Writer, r *verify.Report) {
	tag := map[string]string{"ok": "ok   ", "bug": "BUG  ", "error": "ERROR"}[r.Status]
	variant := ""
	if r.Chess960 {
		variant = " (Chess960)"
	}
	fmt.Fprintf(w, "%s %s%s  depth %d  engine %s  %s %s\n", tag, r.ID, variant, r.Depth, orDash(r.EngineTotal), r.ReferenceFrom, orDash(r.Reference))
	if r.Status == "ok" {
		return
	}
	fmt.Fprintf(w, "      root: %s\n", r.FEN)
	if r.ReferenceMismatch != "" {
		fmt.Fprintf(w, "      reference: %s\n", r.ReferenceMismatch)
	}
	for i, f := range r.Findings {
		moves := strings.Join(f.Moves, " ")
		if moves == "" {
			moves = "(the root)"
		}
		fmt.Fprintf(w, "  finding %d: after %s\n", i+1, moves)
		fmt.Fprintf(w, "      position: %s\n", f.FEN)
		for _, m := range f.Illegal {
			fmt.Fprintf(w, "      illegal move listed: %-6s %s\n", m.Move, m.Reason)
		}
		for _, m := range f.Missed {
			fmt.Fprintf(w, "      legal move missed:   %-6s %s\n", m.Move, m.Reason)
		}
		for _, n := range f.Notes {
			fmt.Fprintf(w, "      note: %s\n", n)
		}
	}
	if r.Duplicates > 0 {
		fmt.Fprintf(w, "      (%d more branches showed the same bugs)\n", r.Duplicates)
	}
	if r.Truncated {
		fmt.Fprintf(w, "      (descent stopped at --max-findings/--max-probes; %d engine queries)\n", r.Probes)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "      engine error: %s\n", r.Error)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
