package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func init() { subcommands = append(subcommands, newSubmitCommand) }

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

type submitPerftFlags struct {
	client   clientFlags
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
}

func newSubmitCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "submit",
		Short: "Submit a job to a coordinator",
	}
	cmd.AddCommand(newSubmitPerftCommand())
	cmd.AddCommand(newSubmitTestCommands()...)
	return cmd
}

func newSubmitPerftCommand() *cobra.Command {
	var f submitPerftFlags
	cmd := &cobra.Command{
		Use:   "perft",
		Short: "Submit a distributed perft job",
		Example: `  arbiter submit perft --coordinator host:7700 --depth 8 --wait --divide
  arbiter submit perft --fen "FEN" --depth 7 --verify 0.1 --wait --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSubmitPerft(cmd, &f)
		},
	}
	fl := cmd.Flags()
	f.client.add(fl)
	fl.StringVar(&f.fen, "fen", engine.StartFEN, "position (FEN, Shredder-FEN or X-FEN)")
	fl.IntVar(&f.depth, "depth", -1, "perft depth (required)")
	fl.Float64Var(&f.verify, "verify", 0, "share of units (0..1) computed again on a different worker")
	fl.IntVar(&f.splitPly, "split-ply", 0, "ply at which the root is split into units (0: chosen from depth)")
	fl.BoolVar(&f.divide, "divide", false, "print the count below each root move")
	fl.BoolVar(&f.wait, "wait", false, "wait for the result (survives coordinator restarts)")
	fl.BoolVar(&f.jsonOut, "json", false, "with --wait: print the result as one JSON object")
	fl.BoolVar(&f.chess960, "chess960", false, "treat the position as Chess960")
	fl.BoolVar(&f.progress, "progress", true, "with --wait: show a progress bar on a terminal")
	fl.BoolVar(&f.stats, "stats", false, "count the statistics too (captures, e.p., castles, promotions, checks, discovered and double checks, mates)")
	fl.IntVar(&f.slices, "slices", 0, "cut each position's tree into this many slices, one per worker table (0: from the workers, 1: none)")
	return cmd
}

func runSubmitPerft(cmd *cobra.Command, f *submitPerftFlags) error {
	if f.depth < 0 {
		return usageError("--depth: required (0 or more)")
	}
	if f.verify < 0 || f.verify > 1 {
		return usageError("--verify %v: must be between 0 and 1", f.verify)
	}
	if f.splitPly < 0 {
		return usageError("--split-ply %d: must be 0 (automatic) or more", f.splitPly)
	}
	if f.slices < 0 || f.slices > 256 {
		return usageError("--slices %d: must be between 0 (automatic) and 256", f.slices)
	}
	if _, err := engine.ParseFEN(f.fen); err != nil {
		return usageError("--fen: %v", err)
	}
	if f.jsonOut && !f.wait {
		return usageError("--json needs --wait")
	}
	ctx, c, done, err := f.client.session()
	if err != nil {
		return err
	}
	defer done()
	resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{
		Fen: f.fen, Depth: uint32(f.depth), SplitPly: uint32(f.splitPly), VerifyFraction: f.verify, Chess960: f.chess960,
		Stats: f.stats, Slices: uint32(f.slices),
	}})
	if err != nil {
		return callError(c, "submit", err)
	}
	job := resp.GetJob()
	if !f.wait {
		fmt.Fprintln(cmd.OutOrStdout(), job.GetJobId())
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "job %s: perft %d, %d units, %d unique positions at ply %d\n",
		job.GetJobId(), f.depth, job.GetProgress().GetUnitsTotal(), job.GetProgress().GetPositions(), job.GetPerft().GetSplitPly())
	final, err := waitJob(ctx, c, job.GetJobId(), cmd.ErrOrStderr(), f.progress && !f.jsonOut)
	if err != nil {
		return err
	}
	return printJobResult(cmd.OutOrStdout(), final, f.divide, f.jsonOut)
}

// runClusterPerft serves `arbiter perft --coordinator ADDR`: submit
// --wait with the same output.
func runClusterPerft(cmd *cobra.Command, client clientFlags, fen string, depth int, divide, jsonOut, stats bool) error {
	f := submitPerftFlags{client: client, fen: fen, depth: depth, divide: divide, wait: true, jsonOut: jsonOut, progress: true, stats: stats}
	return runSubmitPerft(cmd, &f)
}

// watchPolicy follows a job until it ends however long the coordinator is
// away (it keeps the job; Ctrl-C stops waiting), and says so on out once
// per outage.
func watchPolicy(c *clusterclient.Client, out io.Writer) clusterclient.Policy {
	return clusterclient.Persistent.WithOnRetry(func(attempt int, err error, _ time.Duration) {
		if attempt == 0 {
			fmt.Fprintf(out, "\n%s; reconnecting...\n", c.Away(err))
		}
	})
}

// waitJob watches a perft job until it ends (through coordinator restarts)
// with a progress bar on a terminal.
func waitJob(ctx context.Context, c *clusterclient.Client, id string, progressOut io.Writer, showBar bool) (*arbiterv1.Job, error) {
	var bar *progressbar.ProgressBar
	if showBar {
		if fd, ok := progressOut.(*os.File); !ok || !isatty.IsTerminal(fd.Fd()) {
			showBar = false
		}
	}
	start := time.Now()
	var startNodes float64
	first := true
	defer func() {
		if bar != nil {
			bar.Finish()
			fmt.Fprintln(progressOut)
		}
	}()
	final, err := c.WatchJob(ctx, id, watchPolicy(c, progressOut), func(j *arbiterv1.Job) {
		p := j.GetProgress()
		if first {
			startNodes = parseFloat(p.GetNodesDone())
			first = false
		}
		if showBar && bar == nil {
			bar = progressbar.NewOptions64(int64(p.GetUnitsTotal()),
				progressbar.OptionSetWriter(progressOut),
				progressbar.OptionSetDescription("units"),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionShowElapsedTimeOnFinish(),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(100*time.Millisecond),
			)
		}
		if bar != nil {
			nodes := parseFloat(p.GetNodesDone())
			rate := (nodes - startNodes) / max(time.Since(start).Seconds(), 1e-3)
			bar.Describe(fmt.Sprintf("%s nodes, %s nodes/s, %d workers", humanCount(nodes), humanCount(rate), p.GetActiveWorkers()))
			bar.Set64(int64(p.GetUnitsDone()))
		}
	})
	if ctx.Err() != nil {
		return nil, failure("interrupted while waiting for job %s (it keeps running)", id)
	}
	if err != nil {
		return nil, callError(c, "watch "+id, err)
	}
	return final, nil
}

func parseFloat(s string) float64 {
	var v float64
	fmt.Sscanf(s, "%g", &v)
	return v
}

func humanCount(v float64) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.2fT", v/1e12)
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// clusterJSON matches `arbiter perft --json`: exact integers as JSON numbers.
type clusterJSON struct {
	FEN     string                 `json:"fen"`
	Depth   int                    `json:"depth"`
	Nodes   json.Number            `json:"nodes"`
	Seconds float64                `json:"seconds"`
	NPS     float64                `json:"nps"`
	Divide  map[string]json.Number `json:"divide,omitempty"`
	JobID   string                 `json:"job_id"`
	Units   uint64                 `json:"units"`
	Checked uint64                 `json:"units_verified"`
	Stats   *clusterStatsJSON      `json:"stats,omitempty"`
}

// clusterStatsJSON is a statistics job's totals, as arbiter perft --json
// names them (exact integers).
type clusterStatsJSON struct {
	Nodes           json.Number `json:"nodes"`
	Captures        json.Number `json:"captures"`
	EnPassant       json.Number `json:"ep"`
	Castles         json.Number `json:"castles"`
	Promotions      json.Number `json:"promotions"`
	Checks          json.Number `json:"checks"`
	DiscoveryChecks json.Number `json:"discovery_checks"`
	DoubleChecks    json.Number `json:"double_checks"`
	Checkmates      json.Number `json:"checkmates"`
}

// printJobResult prints a finished job; a failed or cancelled job is an
// error.
func printJobResult(out io.Writer, j *arbiterv1.Job, divide, jsonOut bool) error {
	switch j.GetState() {
	case arbiterv1.JobState_JOB_STATE_DONE:
	case arbiterv1.JobState_JOB_STATE_CANCELLED:
		return failure("job %s was cancelled", j.GetJobId())
	default:
		return failure("job %s %s: %s", j.GetJobId(), stateName(j.GetState()), j.GetError())
	}
	secs := 0.0
	if j.GetFinishedAt() != nil && j.GetCreatedAt() != nil {
		secs = j.GetFinishedAt().AsTime().Sub(j.GetCreatedAt().AsTime()).Seconds()
	}
	if jsonOut {
		o := clusterJSON{FEN: j.GetPerft().GetFen(), Depth: int(j.GetPerft().GetDepth()), Nodes: json.Number(j.GetNodes()),
			Seconds: secs, JobID: j.GetJobId(), Units: j.GetProgress().GetUnitsTotal(), Checked: j.GetProgress().GetUnitsVerified()}
		if secs > 0 {
			o.NPS = parseFloat(j.GetNodes()) / secs
		}
		if divide {
			o.Divide = make(map[string]json.Number)
			for _, d := range j.GetDivide() {
				o.Divide[d.GetMove()] = json.Number(d.GetNodes())
			}
		}
		if s := j.GetPerftStats(); s != nil {
			o.Stats = &clusterStatsJSON{Nodes: json.Number(j.GetNodes()), Captures: json.Number(s.GetCaptures()),
				EnPassant: json.Number(s.GetEnPassant()), Castles: json.Number(s.GetCastles()), Promotions: json.Number(s.GetPromotions()),
				Checks: json.Number(s.GetChecks()), DiscoveryChecks: json.Number(s.GetDiscoveryChecks()),
				DoubleChecks: json.Number(s.GetDoubleChecks()), Checkmates: json.Number(s.GetCheckmates())}
		}
		return json.NewEncoder(out).Encode(o)
	}
	if divide {
		for _, d := range j.GetDivide() {
			fmt.Fprintf(out, "%s: %s\n", d.GetMove(), d.GetNodes())
		}
		fmt.Fprintln(out)
	}
	if s := j.GetPerftStats(); s != nil {
		fmt.Fprintf(out, "Captures:         %s\nEn passant:       %s\nCastles:          %s\nPromotions:       %s\nChecks:           %s\nDiscovery checks: %s\nDouble checks:    %s\nCheckmates:       %s\n",
			s.GetCaptures(), s.GetEnPassant(), s.GetCastles(), s.GetPromotions(), s.GetChecks(), s.GetDiscoveryChecks(), s.GetDoubleChecks(), s.GetCheckmates())
	}
	p := j.GetProgress()
	fmt.Fprintf(out, "Nodes: %s\n", j.GetNodes())
	if secs > 0 {
		fmt.Fprintf(out, "Time:  %.3f s (%.1f Mnps)\n", secs, parseFloat(j.GetNodes())/secs/1e6)
	}
	fmt.Fprintf(out, "Units: %d (%d verified on a second worker, %d mismatches, %d settled)\n",
		p.GetUnitsTotal(), p.GetUnitsVerified(), p.GetMismatches(), p.GetMismatchesSettled())
	return nil
}

func stateName(s arbiterv1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATE_"))
}
