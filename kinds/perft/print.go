package perft

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftrun"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// How a perft job is waited for and printed when it ends: `submit perft
// --wait`, `arbiter perft --coordinator`, and through the report's Wait
// (report.go) `status JOB --wait` and `arbiter up --depth`. The text is
// `arbiter perft`'s, the JSON `arbiter perft --json`'s keys.

// waitJob is the perft family's jobreport.Report.Wait: it watches j to its
// end and prints it.
func waitJob(ctx context.Context, c *clusterclient.Client, j *arbiterv1.Job, o jobreport.WaitOptions) (*arbiterv1.Job, error) {
	final, err := watch(ctx, c, j.GetJobId(), o.Progress, o.Bar)
	if err != nil {
		return nil, err
	}
	return final, printFinished(o.Out, final, o.Divide, o.JSON)
}

// watch follows a perft job until it ends (through coordinator
// restarts), with a progress bar on progressOut when showBar and it is a
// terminal.
func watch(ctx context.Context, c *clusterclient.Client, id string, progressOut io.Writer, showBar bool) (*arbiterv1.Job, error) {
	var bar *progressbar.ProgressBar
	if showBar {
		if fd, ok := progressOut.(*os.File); !ok || !isatty.IsTerminal(fd.Fd()) {
			showBar = false
		}
	}
	start := time.Now()
	var startNodes float64
	first := true
	blocked := jobreport.NewBlockedNotice(progressOut)
	defer func() {
		if bar != nil {
			bar.Finish()
			fmt.Fprintln(progressOut)
		}
	}()
	final, err := c.WatchJob(ctx, id, jobreport.WatchPolicy(c, progressOut), func(j *arbiterv1.Job) {
		p := j.GetProgress()
		blocked.Update(j)
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
		return nil, cliexit.Failure("interrupted while waiting for job %s (it keeps running)", id)
	}
	if err != nil {
		return nil, cliexit.Call(c, "watch "+id, err)
	}
	return final, nil
}

// finishedJSON matches `arbiter perft --json`: exact integers as JSON
// numbers.
type finishedJSON struct {
	perftrun.CountJSON
	JobID   string `json:"job_id"`
	Units   uint64 `json:"units"`
	Checked uint64 `json:"units_verified"`
	// Verification is jobreport.PerftVerification: "none" says no one
	// checked the total.
	Verification string                    `json:"verification,omitempty"`
	Stats        *jobreport.PerftStatsJSON `json:"stats,omitempty"`
	// Suite is a suite job's per-position table.
	Suite *jobreport.SuiteJSON `json:"suite,omitempty"`
}

// printFinished prints a finished perft job; a failed or cancelled job is
// an error (exit status 1).
func printFinished(out io.Writer, j *arbiterv1.Job, divide, jsonOut bool) error {
	switch j.GetState() {
	case arbiterv1.JobState_JOB_STATE_DONE:
	case arbiterv1.JobState_JOB_STATE_CANCELLED:
		return cliexit.Failure("job %s was cancelled", j.GetJobId())
	default:
		return cliexit.Failure("job %s %s: %s", j.GetJobId(), jobreport.StateName(j.GetState()), j.GetError())
	}
	secs := 0.0
	if j.GetFinishedAt() != nil && j.GetCreatedAt() != nil {
		secs = j.GetFinishedAt().AsTime().Sub(j.GetCreatedAt().AsTime()).Seconds()
	}
	if jsonOut {
		o := finishedJSON{CountJSON: perftrun.CountJSON{FEN: j.GetPerft().GetFen(), Depth: int(j.GetPerft().GetDepth()), Nodes: json.Number(j.GetNodes()),
			Seconds: secs}, JobID: j.GetJobId(), Units: j.GetProgress().GetUnitsTotal(), Checked: j.GetProgress().GetUnitsVerified(),
			Verification: jobreport.PerftVerification(j)}
		if secs > 0 {
			o.NPS = parseFloat(j.GetNodes()) / secs
		}
		if o.Suite = jobreport.NewSuiteJSON(j); divide && o.Suite == nil {
			o.Divide = make(map[string]json.Number)
			for _, d := range j.GetDivide() {
				o.Divide[d.GetMove()] = json.Number(d.GetNodes())
			}
		}
		o.Stats = jobreport.NewPerftStats(j)
		return json.NewEncoder(out).Encode(o)
	}
	if !printSuite(out, j) && divide {
		for _, d := range sortedDivide(j) {
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
	if v := verificationLine(j); v != "" {
		fmt.Fprintf(out, "Verification: %s\n", v)
	}
	printCrossCheck(out, j.GetCrossCheck(), "Cross-check: ", "  ")
	return nil
}

// printSuite prints a done suite job's table, its total and checksum;
// false for a job over one position.
func printSuite(out io.Writer, j *arbiterv1.Job) bool {
	s := jobreport.NewSuiteJSON(j)
	if s == nil || s.Positions == nil {
		return false
	}
	lines, sum := jobreport.SuiteTable(s.Positions)
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	fmt.Fprintf(out, "\nPositions: %d\nTotal:     %s\nsha256:    %s (of the table's lines)\n\n", len(s.Positions), j.GetNodes(), sum)
	return true
}

// sortedDivide is a job's divide in the order `arbiter perft --divide`
// prints it (by UCI move), whatever order the coordinator sent it in.
func sortedDivide(j *arbiterv1.Job) []*arbiterv1.DivideEntry {
	d := append([]*arbiterv1.DivideEntry(nil), j.GetDivide()...)
	sort.Slice(d, func(a, b int) bool { return d[a].GetMove() < d[b].GetMove() })
	return d
}

// verificationLine says in words how far j's total is verified, for the
// text outputs; "" when there is nothing to say.
func verificationLine(j *arbiterv1.Job) string {
	p := j.GetProgress()
	switch jobreport.PerftVerification(j) {
	case jobreport.VerificationNone:
		if c := j.GetCrossCheck(); c.GetUnitsChecked() > 0 {
			return fmt.Sprintf("no unit computed twice by our generator; %d of %d units cross-checked by %s on another identity (node counts only)",
				c.GetUnitsChecked(), p.GetUnitsTotal(), c.GetEngine())
		}
		return "none, the counts are UNVERIFIED: no unit was computed by a second identity (verify fraction 0, or one identity on the farm)"
	case jobreport.VerificationSampled:
		return fmt.Sprintf("sampled, %d of %d units computed by a second identity and agreeing", p.GetUnitsVerified(), p.GetUnitsTotal())
	case jobreport.VerificationFull:
		return "full, every unit computed by two identities and agreeing"
	}
	return ""
}

// printCrossCheck prints a perft job's cross-check by another program: a
// line of counts (label first), then each mismatch (indented).
func printCrossCheck(out io.Writer, c *arbiterv1.PerftCrossCheck, label, indent string) {
	if c == nil {
		return
	}
	byWorker := make([]string, 0, len(c.GetRunsByWorker()))
	for w, n := range c.GetRunsByWorker() {
		byWorker = append(byWorker, fmt.Sprintf("%s %d", w, n))
	}
	sort.Strings(byWorker)
	who := ""
	if len(byWorker) > 0 {
		who = " (by worker: " + strings.Join(byWorker, ", ") + ")"
	}
	fmt.Fprintf(out, "%s%s on %.0f%% of units: %d sampled, %d checked, %d agreed, %d mismatches%s\n", label, c.GetEngine(),
		100*c.GetFraction(), c.GetUnitsSampled(), c.GetUnitsChecked(), c.GetUnitsAgreed(), len(c.GetMismatches()), who)
	for _, m := range c.GetMismatches() {
		state := "open"
		if m.GetSettled() {
			state = "settled, outvoted " + strings.Join(m.GetOutvoted(), ", ")
		}
		fmt.Fprintf(out, "%smismatch on unit %s (%s): %s, depth %d: ours %s (worker %s, %s), %s %s (worker %s, %s)\n",
			indent, m.GetUnitId(), state, m.GetFen(), m.GetDepth(), m.GetOurs(), m.GetOurWorker(), m.GetOurIdentity(),
			c.GetEngine(), m.GetTheirs(), m.GetTheirWorker(), m.GetTheirIdentity())
	}
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
