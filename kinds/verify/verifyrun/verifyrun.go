// Package verifyrun is `arbiter verify`'s loop: the positions to check
// (Positions), each verified against an engine (verify.Verify), several at
// once when the engine is the cluster's, each report printed as soon as it
// is complete, then the summary as text or JSON, and the exit status: 1
// when a position shows a bug or the engine failed.
package verifyrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/verify"
)

// Positions say what to verify: one FEN, an EPD suite (its counts the
// reference), K random positions, or else the start position.
type Positions struct {
	FEN      string
	EPD      string
	Depth    int
	Random   int
	Seed     uint64
	Chess960 bool
	// RandomVariant is which starts the random walks take: "mixed" (or
	// ""; half standard, half Chess960), "standard" or "960".
	RandomVariant string
}

// RandomVariants are the values of --random-variant.
var RandomVariants = []string{"mixed", "standard", "960"}

// Targets reads the positions; a bad FEN or EPD file is bad input naming
// its flag.
func (p Positions) Targets() ([]verify.Target, error) {
	var ts []verify.Target
	if p.FEN != "" {
		pos, err := engine.ParseFEN(p.FEN)
		if err != nil {
			return nil, cliexit.Usage("--fen: %v", err)
		}
		ts = append(ts, verify.Target{ID: "fen", FEN: pos.FEN(), Depth: p.Depth, Chess960: p.Chess960 || pos.IsChess960()})
	}
	if p.EPD != "" {
		file, err := os.Open(p.EPD)
		if err != nil {
			return nil, cliexit.Usage("--epd: %v", err)
		}
		defer file.Close()
		et, err := verify.LoadEPD(file, filepath.Base(p.EPD), p.Depth, p.Chess960)
		if err != nil {
			return nil, cliexit.Usage("--epd: %v", err)
		}
		ts = append(ts, et...)
	}
	if p.Random > 0 {
		opt := verify.RandomOptions{Depth: p.Depth, Chess960: p.Chess960}
		switch p.RandomVariant {
		case "", "mixed":
		case "standard":
			if p.Chess960 {
				return nil, cliexit.Usage("--random-variant standard and --chess960: --chess960 asks for Chess960 starts only")
			}
			opt.Standard = true
		case "960", "chess960":
			opt.Chess960 = true
		default:
			return nil, cliexit.Usage("--random-variant %q: want one of %s", p.RandomVariant, strings.Join(RandomVariants, ", "))
		}
		ts = append(ts, verify.RandomTargets(p.Random, p.Seed, opt)...)
	}
	if len(ts) == 0 {
		ts = append(ts, verify.Target{ID: "startpos", FEN: engine.StartFEN, Depth: p.Depth})
	}
	return ts, nil
}

// Config is one run.
type Config struct {
	Engine  verify.Engine
	Targets []verify.Target
	Depth   int
	Options verify.Options
	// Parallel is the number of positions verified at once (at least 1).
	// Reports print in the order positions finish.
	Parallel int
	// Out receives each position's report as text, unless JSON: then
	// Print writes them all at the end.
	Out  io.Writer
	JSON bool
	// Refused, when set, reports a refusal that holds for every query
	// (the coordinator refused the credential or the request): positions
	// still running stop at once and their reports are dropped.
	Refused func() error
}

// Summary counts a run's positions.
type Summary struct {
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
func (s *Summary) add(r verify.Report) {
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

// Result is a finished (or interrupted) run.
type Result struct {
	Summary Summary
	// Reports are the positions verified, in the order of the targets.
	Reports []verify.Report
}

// Run verifies the targets until done or ctx ends (an interrupted run
// keeps the reports of the positions that finished).
func Run(ctx context.Context, cfg Config) *Result {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	parallel := max(cfg.Parallel, 1)
	res := &Result{Summary: Summary{Engine: cfg.Engine.Name(), Depth: cfg.Depth}}
	start := time.Now()
	reps := make([]verify.Report, len(cfg.Targets))
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, parallel)
	)
	for i, t := range cfg.Targets {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rep := verify.Verify(ctx, cfg.Engine, t, cfg.Options)
			mu.Lock()
			defer mu.Unlock()
			if cfg.Refused != nil && cfg.Refused() != nil {
				stop()
				return // its report says only that the coordinator refused
			}
			reps[i] = rep
			if !cfg.JSON {
				PrintReport(cfg.Out, &rep)
			}
		}()
	}
	wg.Wait()
	for _, r := range reps {
		if r.Status == "" {
			continue // not started (interrupted)
		}
		res.Reports = append(res.Reports, r)
		res.Summary.add(r)
	}
	res.Summary.Positions = len(res.Reports)
	res.Summary.Seconds = time.Since(start).Seconds()
	return res
}

// Print writes the summary: one line of text, or with asJSON one JSON
// object with every report; cluster, when set, is added to the JSON under
// "cluster".
func (r *Result) Print(out io.Writer, asJSON bool, cluster any) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Summary   Summary         `json:"summary"`
			Cluster   any             `json:"cluster,omitempty"`
			Positions []verify.Report `json:"positions"`
		}{r.Summary, cluster, r.Reports})
	}
	s := r.Summary
	_, err := fmt.Fprintf(out, "\n%s: %d positions at depth %d: %d ok, %d with bugs (%d findings), %d engine errors, in %.1fs\n",
		s.Engine, s.Positions, s.Depth, s.OK, s.Bugs, s.Findings, s.Errors, s.Seconds)
	return err
}

// Err is the run's outcome for the exit status: interrupted (ctx ended)
// or a bug or an engine error found is a failure.
func (r *Result) Err(ctx context.Context) error {
	s := r.Summary
	if ctx.Err() != nil {
		return cliexit.Failure("interrupted")
	}
	if s.Bugs > 0 || s.Errors > 0 {
		return cliexit.Failure("%d of %d positions show a bug, %d engine errors", s.Bugs, s.Positions, s.Errors)
	}
	return nil
}

// PrintReport prints one position: a line when it is fine, the findings in
// full when not.
func PrintReport(w io.Writer, r *verify.Report) {
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
