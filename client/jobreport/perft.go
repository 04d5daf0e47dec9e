package jobreport

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
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// WaitPerft watches a perft job until it ends (through coordinator
// restarts), with a progress bar on progressOut when showBar and it is a
// terminal.
func WaitPerft(ctx context.Context, c *clusterclient.Client, id string, progressOut io.Writer, showBar bool) (*arbiterv1.Job, error) {
	var bar *progressbar.ProgressBar
	if showBar {
		if fd, ok := progressOut.(*os.File); !ok || !isatty.IsTerminal(fd.Fd()) {
			showBar = false
		}
	}
	start := time.Now()
	var startNodes float64
	first := true
	blocked := blockedNotice{w: progressOut}
	defer func() {
		if bar != nil {
			bar.Finish()
			fmt.Fprintln(progressOut)
		}
	}()
	final, err := c.WatchJob(ctx, id, WatchPolicy(c, progressOut), func(j *arbiterv1.Job) {
		p := j.GetProgress()
		blocked.update(j)
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

// perftJSON matches `arbiter perft --json`: exact integers as JSON numbers.
type perftJSON struct {
	FEN     string                 `json:"fen"`
	Depth   int                    `json:"depth"`
	Nodes   json.Number            `json:"nodes"`
	Seconds float64                `json:"seconds"`
	NPS     float64                `json:"nps"`
	Divide  map[string]json.Number `json:"divide,omitempty"`
	JobID   string                 `json:"job_id"`
	Units   uint64                 `json:"units"`
	Checked uint64                 `json:"units_verified"`
	// Verification is PerftVerification: "none" says no one checked the
	// total.
	Verification string          `json:"verification,omitempty"`
	Stats        *perftStatsJSON `json:"stats,omitempty"`
	// Suite is a suite job's per-position table.
	Suite *SuiteJSON `json:"suite,omitempty"`
}

// perftStatsJSON is a statistics job's totals, named as `arbiter perft
// --json` names them (exact integers).
type perftStatsJSON struct {
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

// newPerftStats returns a done statistics job's totals, or nil.
func newPerftStats(j *arbiterv1.Job) *perftStatsJSON {
	s := j.GetPerftStats()
	if s == nil {
		return nil
	}
	return &perftStatsJSON{Nodes: json.Number(j.GetNodes()), Captures: json.Number(s.GetCaptures()),
		EnPassant: json.Number(s.GetEnPassant()), Castles: json.Number(s.GetCastles()), Promotions: json.Number(s.GetPromotions()),
		Checks: json.Number(s.GetChecks()), DiscoveryChecks: json.Number(s.GetDiscoveryChecks()),
		DoubleChecks: json.Number(s.GetDoubleChecks()), Checkmates: json.Number(s.GetCheckmates())}
}

// PrintPerft prints a finished perft job; a failed or cancelled job is an
// error (exit status 1).
func PrintPerft(out io.Writer, j *arbiterv1.Job, divide, jsonOut bool) error {
	switch j.GetState() {
	case arbiterv1.JobState_JOB_STATE_DONE:
	case arbiterv1.JobState_JOB_STATE_CANCELLED:
		return cliexit.Failure("job %s was cancelled", j.GetJobId())
	default:
		return cliexit.Failure("job %s %s: %s", j.GetJobId(), StateName(j.GetState()), j.GetError())
	}
	secs := 0.0
	if j.GetFinishedAt() != nil && j.GetCreatedAt() != nil {
		secs = j.GetFinishedAt().AsTime().Sub(j.GetCreatedAt().AsTime()).Seconds()
	}
	if jsonOut {
		o := perftJSON{FEN: j.GetPerft().GetFen(), Depth: int(j.GetPerft().GetDepth()), Nodes: json.Number(j.GetNodes()),
			Seconds: secs, JobID: j.GetJobId(), Units: j.GetProgress().GetUnitsTotal(), Checked: j.GetProgress().GetUnitsVerified(),
			Verification: PerftVerification(j)}
		if secs > 0 {
			o.NPS = parseFloat(j.GetNodes()) / secs
		}
		if o.Suite = newSuiteJSON(j); divide && o.Suite == nil {
			o.Divide = make(map[string]json.Number)
			for _, d := range j.GetDivide() {
				o.Divide[d.GetMove()] = json.Number(d.GetNodes())
			}
		}
		o.Stats = newPerftStats(j)
		return json.NewEncoder(out).Encode(o)
	}
	if !PrintSuite(out, j) && divide {
		for _, d := range SortedDivide(j) {
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
	if v := VerificationLine(j); v != "" {
		fmt.Fprintf(out, "Verification: %s\n", v)
	}
	PrintCrossCheck(out, j.GetCrossCheck(), "Cross-check: ", "  ")
	return nil
}

// NewPerftJob is a perft job's typed `perft` object of --json (JobJSON.Perft,
// kept one release): the perft kind's report (kinds/perft) fills it in.
func NewPerftJob(j *arbiterv1.Job) *PerftJob { return newPerftJob(j) }

// PrintCrossCheck prints a perft job's cross-check by another program: a
// line of counts (label first), then each mismatch (indented).
func PrintCrossCheck(out io.Writer, c *arbiterv1.PerftCrossCheck, label, indent string) {
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
