// Package perftrun is `arbiter perft` on this machine: one position with
// a progress line on a terminal (Run), its result as text or JSON, and an
// EPD suite checked line by line against its counts (Suite).
package perftrun

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
)

// Run runs a perft and, when it lasts over two seconds and
// stderr is a terminal, shows nodes so far, rate and ETA on stderr.
func Run(ctx context.Context, stderr io.Writer, pos engine.Position, depth int, opt engine.PerftOptions) (engine.PerftResult, time.Duration, error) {
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

// PrintText prints a result for people: the divide when asked, the
// statistics when counted, then nodes and speed.
// PrintHash prints the hash table's line: size, probes, hits, stores.
func PrintHash(out io.Writer, sizeBytes int, h engine.PerftTableStats) {
	fmt.Fprintf(out, "Hash:  %d MB, %d probes, %d hits (%.1f%%), %d stores\n", sizeBytes>>20, h.Probes, h.Hits, 100*h.HitRate(), h.Stores)
}

func PrintText(out io.Writer, res engine.PerftResult, elapsed time.Duration, divide bool) {
	if divide {
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
}

// CountJSON is what every `arbiter perft --json` object starts with, a
// local run's and a cluster job's (kinds/perft's finished job); counts
// are json.Number so they print as exact integers of any size.
type CountJSON struct {
	FEN     string                 `json:"fen"`
	Depth   int                    `json:"depth"`
	Nodes   json.Number            `json:"nodes"`
	Seconds float64                `json:"seconds"`
	NPS     float64                `json:"nps"`
	Divide  map[string]json.Number `json:"divide,omitempty"`
}

// perftJSON is a local run's machine-readable result.
type perftJSON struct {
	CountJSON
	Stats    *engine.PerftStats `json:"stats,omitempty"`
	Hash     *hashJSON          `json:"hash,omitempty"`
	Expected *json.Number       `json:"expected,omitempty"`
	Pass     *bool              `json:"pass,omitempty"`
}

// hashJSON is the run's use of the --hash table.
type hashJSON struct {
	engine.PerftTableStats
	HitRate float64 `json:"hit_rate"`
}

func newPerftJSON(fen string, depth int, res engine.PerftResult, elapsed time.Duration, divide bool) perftJSON {
	j := perftJSON{CountJSON: CountJSON{FEN: fen, Depth: depth, Nodes: json.Number(res.Nodes.String()), Seconds: elapsed.Seconds()}, Stats: res.Stats}
	if res.Hash != nil {
		j.Hash = &hashJSON{PerftTableStats: *res.Hash, HitRate: res.Hash.HitRate()}
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

// WriteJSON writes one result as a JSON line.
func WriteJSON(w io.Writer, fen string, depth int, res engine.PerftResult, elapsed time.Duration, divide bool) error {
	return json.NewEncoder(w).Encode(newPerftJSON(fen, depth, res, elapsed, divide))
}

// SuiteLine is one position of a suite with its expected counts.
type SuiteLine struct {
	Num int // line number in the file
	EPD engine.PerftEPD
}

// LoadSuite reads an EPD suite of "FEN ;D1 n ;D2 n ..." lines (blank lines
// and # comments skipped); a bad line is bad input naming file and line,
// so that nothing runs before the whole file is known to be good.
func LoadSuite(path string, chess960 bool) ([]SuiteLine, error) {
	return loadSuite(path, chess960, true)
}

// LoadPositions reads a suite as LoadSuite does, but a line may also be a
// bare FEN or EPD position, without counts (a cluster suite's input).
func LoadPositions(path string, chess960 bool) ([]SuiteLine, error) {
	return loadSuite(path, chess960, false)
}

func loadSuite(path string, chess960, needCounts bool) ([]SuiteLine, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, cliexit.Usage("--epd: %v", err)
	}
	defer file.Close()
	var lines []SuiteLine
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for num := 1; sc.Scan(); num++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var e engine.PerftEPD
		var err error
		if !needCounts && !strings.Contains(text, ";") {
			e.FEN = text
			e.Position, err = engine.ParseFEN(text)
		} else {
			e, err = engine.ParsePerftEPD(text)
		}
		if err != nil {
			return nil, cliexit.Usage("%s:%d: %v", path, num, err)
		}
		if chess960 {
			e.Position.SetChess960(true)
		}
		lines = append(lines, SuiteLine{num, e})
	}
	if err := sc.Err(); err != nil {
		return nil, cliexit.Usage("--epd %s: %v", path, err)
	}
	if len(lines) == 0 {
		return nil, cliexit.Usage("--epd %s: no positions in the file", path)
	}
	return lines, nil
}

// SuiteOptions bound and report a suite run.
type SuiteOptions struct {
	// MaxDepth skips deeper counts (0: none skipped); MaxNodes, when
	// set, skips counts expected to exceed it.
	MaxDepth int
	MaxNodes *engine.Count
	Threads  int
	Table    *engine.PerftTable
	// JSON prints one object per count on Out and the summary on
	// Stderr; otherwise a line per count and the summary on Out.
	JSON        bool
	Out, Stderr io.Writer
}

// RunSuite checks every count of the suite; a count that differs is a
// failure (exit status 1) once all have run.
func RunSuite(ctx context.Context, lines []SuiteLine, o SuiteOptions) error {
	var checked, failed, skipped int
	var totalNodes engine.Count
	start := time.Now()
	for _, l := range lines {
		for _, exp := range l.EPD.Expected {
			if o.MaxDepth > 0 && exp.Depth > o.MaxDepth || o.MaxNodes != nil && countGreater(exp.Nodes, *o.MaxNodes) {
				skipped++
				continue
			}
			res, elapsed, err := Run(ctx, o.Stderr, l.EPD.Position, exp.Depth, engine.PerftOptions{Threads: o.Threads, Table: o.Table})
			if err != nil {
				return fmt.Errorf("suite interrupted: %w", err)
			}
			checked++
			totalNodes = totalNodes.AddCount(res.Nodes)
			pass := res.Nodes == exp.Nodes
			if !pass {
				failed++
			}
			if o.JSON {
				j := newPerftJSON(l.EPD.FEN, exp.Depth, res, elapsed, false)
				en := json.Number(exp.Nodes.String())
				j.Expected, j.Pass = &en, &pass
				if err := json.NewEncoder(o.Out).Encode(j); err != nil {
					return err
				}
				continue
			}
			verdict := "pass"
			if !pass {
				verdict = "FAIL"
			}
			fmt.Fprintf(o.Out, "%-4s line %-5d D%-2d expected %-13s got %-13s %7.3fs  %s\n", verdict, l.Num, exp.Depth, exp.Nodes, res.Nodes, elapsed.Seconds(), l.EPD.FEN)
		}
	}
	el := time.Since(start)
	summary := fmt.Sprintf("%d positions, %d counts checked, %d failed, %d skipped by limits; %s nodes in %.1f s (%.1f Mnps)",
		len(lines), checked, failed, skipped, totalNodes, el.Seconds(), totalNodes.Float()/el.Seconds()/1e6)
	if o.JSON {
		fmt.Fprintln(o.Stderr, summary)
	} else {
		fmt.Fprintln(o.Out, summary)
	}
	if failed > 0 {
		return cliexit.Failure("%d of %d perft counts do not match", failed, checked)
	}
	return nil
}

func countGreater(a, b engine.Count) bool {
	return a.Hi > b.Hi || a.Hi == b.Hi && a.Lo > b.Lo
}

// ParseNodeLimit accepts an integer or a float in e-notation such as 1e8.
func ParseNodeLimit(s string) (engine.Count, error) {
	if n, ok := engine.ParseCount(s); ok {
		return n, nil
	}
	var v float64
	if _, err := fmt.Sscanf(s, "%g", &v); err != nil || v < 0 || v > 1.8e19 {
		return engine.Count{}, fmt.Errorf("not a node count (an integer or a number like 1e8)")
	}
	return engine.CountOf(uint64(v)), nil
}
