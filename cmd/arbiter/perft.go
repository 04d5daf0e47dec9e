package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine"
)

func init() { subcommands = append(subcommands, newPerftCommand) }

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
	client   clientFlags
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
	fl.IntVar(&f.hashMB, "hash", 0, "perft hash table size in MB (0: none)")
	fl.BoolVar(&f.chess960, "chess960", false, "Chess960 notation (detected from Shredder-FEN/X-FEN castling letters otherwise)")
	fl.BoolVar(&f.jsonOut, "json", false, "one JSON object per position and depth")
	fl.StringVar(&f.epd, "epd", "", "suite mode: EPD file of \"FEN ;D1 n ;D2 n ...\" lines")
	fl.IntVar(&f.maxDepth, "max-depth", 0, "suite mode: check depths up to this (0: all)")
	fl.StringVar(&f.maxNodes, "max-nodes", "", "suite mode: skip depths whose expected count exceeds this (e.g. 1e8)")
	f.client.addOptional(fl, "submit to this coordinator instead of running here (see arbiter submit perft)")
	return cmd
}

func (f *perftFlags) validateCommon() error {
	if f.threads < 0 || f.threads > 4096 {
		return usageError("--threads %d: must be between 0 (all cores) and 4096", f.threads)
	}
	if f.hashMB < 0 || f.hashMB > 1<<20 {
		return usageError("--hash %d: must be between 0 and 1048576 MB", f.hashMB)
	}
	return nil
}

func perftContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func runPerftOne(cmd *cobra.Command, f *perftFlags) error {
	if err := f.validateCommon(); err != nil {
		return err
	}
	if !cmd.Flags().Changed("depth") {
		return usageError("--depth is required (1 to %d)", engine.MaxPerftDepth)
	}
	if f.depth < 0 || f.depth > engine.MaxPerftDepth {
		return usageError("--depth %d: must be between 0 and %d", f.depth, engine.MaxPerftDepth)
	}
	pos, err := engine.ParseFEN(f.fen)
	if err != nil {
		return usageError("--fen: %v", err)
	}
	if f.chess960 {
		pos.SetChess960(true)
	}
	if f.client.given() {
		return runClusterPerft(cmd, f.client, pos.FEN(), f.depth, f.divide, f.jsonOut, f.stats)
	}
	ctx, cancel := perftContext()
	defer cancel()
	opt := engine.PerftOptions{Threads: f.threads, Stats: f.stats}
	tableBytes := 0
	if f.stats {
		opt.StatsTable = engine.NewPerftStatsTable(f.hashMB)
		if opt.StatsTable != nil {
			tableBytes = opt.StatsTable.SizeBytes()
		}
	} else if opt.Table = engine.NewPerftTable(f.hashMB); opt.Table != nil {
		tableBytes = opt.Table.SizeBytes()
	}
	out := cmd.OutOrStdout()
	res, elapsed, err := runWithProgress(ctx, cmd.ErrOrStderr(), pos, f.depth, opt)
	if err != nil {
		return fmt.Errorf("perft interrupted: %w", err)
	}
	if f.jsonOut {
		return writePerftJSON(out, pos.FEN(), f.depth, res, elapsed, f.divide)
	}
	if f.divide {
		for _, d := range res.Divide {
			fmt.Fprintf(out, "%s: %s\n", d.UCI, d.Nodes)
		}
		fmt.Fprintln(out)
	}
	if res.Stats != nil {
		s := res.Stats
		fmt.Fprintf(out, "Captures:         %d\nEn passant:       %d\nCastles:          %d\nPromotions:       %d\nChecks:           %d\nDiscovery checks: %d\nDouble checks:    %d\nCheckmates:       %d\n",
			s.Captures, s.EnPassant, s.Castles, s.Promotions, s.Checks, s.DiscoveryChecks, s.DoubleChecks, s.Checkmates)
	}
	fmt.Fprintf(out, "Nodes: %s\nTime:  %.3f s (%.1f Mnps)\n", res.Nodes, elapsed.Seconds(), res.Nodes.Float()/elapsed.Seconds()/1e6)
	if h := res.Hash; h != nil {
		fmt.Fprintf(out, "Hash:  %d MB, %d probes, %d hits (%.1f%%), %d stores\n", tableBytes>>20, h.Probes, h.Hits, 100*h.HitRate(), h.Stores)
	}
	return nil
}

// runWithProgress runs a perft and, when it lasts over two seconds and
// stderr is a terminal, shows nodes so far, rate and ETA on stderr.
func runWithProgress(ctx context.Context, stderr io.Writer, pos engine.Position, depth int, opt engine.PerftOptions) (engine.PerftResult, time.Duration, error) {
	start := time.Now()
	var mu sync.Mutex
	var progress engine.PerftProgress
	tty := isTerminal(stderr)
	if tty {
		opt.Progress = func(p engine.PerftProgress) {
			mu.Lock()
			progress = p
			mu.Unlock()
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if tty {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			shown := false
			for {
				select {
				case <-stop:
					if shown {
						fmt.Fprint(stderr, "\r\033[K")
					}
					return
				case <-t.C:
					el := time.Since(start)
					if el < 2*time.Second {
						continue
					}
					mu.Lock()
					p := progress
					mu.Unlock()
					eta := "ETA --"
					if p.Done > 0 && p.Total > 0 {
						// Work pieces differ in size; the share done is a fair guess.
						left := time.Duration(float64(el) * float64(p.Total-p.Done) / float64(p.Done))
						eta = "ETA " + left.Round(time.Second).String()
					}
					fmt.Fprintf(stderr, "\r\033[K%s nodes  %.1f Mnps  %s elapsed  %s", p.Nodes, p.Nodes.Float()/el.Seconds()/1e6, el.Round(time.Second), eta)
					shown = true
				}
			}
		}()
	}
	res, err := engine.RunPerft(ctx, pos, depth, opt)
	close(stop)
	wg.Wait()
	return res, time.Since(start), err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// perftJSON is the machine-readable result; counts are json.Number so they
// print as exact integers of any size.
type perftJSON struct {
	FEN      string                 `json:"fen"`
	Depth    int                    `json:"depth"`
	Nodes    json.Number            `json:"nodes"`
	Seconds  float64                `json:"seconds"`
	NPS      float64                `json:"nps"`
	Divide   map[string]json.Number `json:"divide,omitempty"`
	Stats    *engine.PerftStats     `json:"stats,omitempty"`
	Hash     *perftHashJSON         `json:"hash,omitempty"`
	Expected *json.Number           `json:"expected,omitempty"`
	Pass     *bool                  `json:"pass,omitempty"`
}

// perftHashJSON is the run's use of the --hash table.
type perftHashJSON struct {
	engine.PerftTableStats
	HitRate float64 `json:"hit_rate"`
}

func newPerftJSON(fen string, depth int, res engine.PerftResult, elapsed time.Duration, divide bool) perftJSON {
	j := perftJSON{FEN: fen, Depth: depth, Nodes: json.Number(res.Nodes.String()), Seconds: elapsed.Seconds(), Stats: res.Stats}
	if res.Hash != nil {
		j.Hash = &perftHashJSON{PerftTableStats: *res.Hash, HitRate: res.Hash.HitRate()}
	}
	if s := elapsed.Seconds(); s > 0 {
		j.NPS = res.Nodes.Float() / s
	}
	if divide {
		j.Divide = make(map[string]json.Number, len(res.Divide))
		for _, d := range res.Divide {
			j.Divide[d.UCI] = json.Number(d.Nodes.String())
		}
	}
	return j
}

func writePerftJSON(w io.Writer, fen string, depth int, res engine.PerftResult, elapsed time.Duration, divide bool) error {
	return json.NewEncoder(w).Encode(newPerftJSON(fen, depth, res, elapsed, divide))
}

func runPerftSuite(cmd *cobra.Command, f *perftFlags) error {
	if err := f.validateCommon(); err != nil {
		return err
	}
	if f.maxDepth < 0 || f.maxDepth > engine.MaxPerftDepth {
		return usageError("--max-depth %d: must be between 0 (no limit) and %d", f.maxDepth, engine.MaxPerftDepth)
	}
	var maxNodes engine.Count
	limitNodes := false
	if f.maxNodes != "" {
		n, err := parseNodeLimit(f.maxNodes)
		if err != nil {
			return usageError("--max-nodes %q: %v", f.maxNodes, err)
		}
		maxNodes, limitNodes = n, true
	}
	file, err := os.Open(f.epd)
	if err != nil {
		return usageError("--epd: %v", err)
	}
	defer file.Close()
	// Parse the whole suite first so a bad line is reported before any work.
	type suiteLine struct {
		num int
		e   engine.PerftEPD
	}
	var lines []suiteLine
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for num := 1; sc.Scan(); num++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e, err := engine.ParsePerftEPD(text)
		if err != nil {
			return usageError("%s:%d: %v", f.epd, num, err)
		}
		if f.chess960 {
			e.Position.SetChess960(true)
		}
		lines = append(lines, suiteLine{num, e})
	}
	if err := sc.Err(); err != nil {
		return usageError("--epd %s: %v", f.epd, err)
	}
	if len(lines) == 0 {
		return usageError("--epd %s: no positions in the file", f.epd)
	}
	ctx, cancel := perftContext()
	defer cancel()
	table := engine.NewPerftTable(f.hashMB)
	out := cmd.OutOrStdout()
	var checked, failed, skipped int
	var totalNodes engine.Count
	start := time.Now()
	for _, l := range lines {
		for _, exp := range l.e.Expected {
			if f.maxDepth > 0 && exp.Depth > f.maxDepth || limitNodes && countGreater(exp.Nodes, maxNodes) {
				skipped++
				continue
			}
			res, elapsed, err := runWithProgress(ctx, cmd.ErrOrStderr(), l.e.Position, exp.Depth, engine.PerftOptions{Threads: f.threads, Table: table})
			if err != nil {
				return fmt.Errorf("suite interrupted: %w", err)
			}
			checked++
			totalNodes = totalNodes.AddCount(res.Nodes)
			pass := res.Nodes == exp.Nodes
			if !pass {
				failed++
			}
			if f.jsonOut {
				j := newPerftJSON(l.e.FEN, exp.Depth, res, elapsed, false)
				en := json.Number(exp.Nodes.String())
				j.Expected, j.Pass = &en, &pass
				if err := json.NewEncoder(out).Encode(j); err != nil {
					return err
				}
				continue
			}
			verdict := "pass"
			if !pass {
				verdict = "FAIL"
			}
			fmt.Fprintf(out, "%-4s line %-5d D%-2d expected %-13s got %-13s %7.3fs  %s\n", verdict, l.num, exp.Depth, exp.Nodes, res.Nodes, elapsed.Seconds(), l.e.FEN)
		}
	}
	el := time.Since(start)
	summary := fmt.Sprintf("%d positions, %d counts checked, %d failed, %d skipped by limits; %s nodes in %.1f s (%.1f Mnps)",
		len(lines), checked, failed, skipped, totalNodes, el.Seconds(), totalNodes.Float()/el.Seconds()/1e6)
	if f.jsonOut {
		fmt.Fprintln(cmd.ErrOrStderr(), summary)
	} else {
		fmt.Fprintln(out, summary)
	}
	if failed > 0 {
		return failure("%d of %d perft counts do not match", failed, checked)
	}
	return nil
}

func countGreater(a, b engine.Count) bool {
	return a.Hi > b.Hi || a.Hi == b.Hi && a.Lo > b.Lo
}

// parseNodeLimit accepts an integer or a float in e-notation such as 1e8.
func parseNodeLimit(s string) (engine.Count, error) {
	if n, ok := engine.ParseCount(s); ok {
		return n, nil
	}
	var v float64
	if _, err := fmt.Sscanf(s, "%g", &v); err != nil || v < 0 || v > 1.8e19 {
		return engine.Count{}, fmt.Errorf("not a node count (an integer or a number like 1e8)")
	}
	return engine.CountOf(uint64(v)), nil
}
