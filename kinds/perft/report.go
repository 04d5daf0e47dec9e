package perft

import (
	_ "embed"
	"fmt"
	"io"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// What `arbiter status` shows of perft jobs: a row of the list, the
// detail of one job, and the `detail` object of --json, with the typed
// `perft` object beside it for a release (jobreport.JobJSON.Perft, the
// same object: clients of the release before read it there), and how
// one job is waited for and printed when it ends (Wait: print.go, for
// status --wait and arbiter up, as submit perft --wait prints it).
func init() {
	jobreport.RegisterReport(jobkind.FamilyPerft, jobreport.Report{Order: 30, Header: "PERFT\tSTATE\tDEPTH\tNODES\tPROGRESS\tFEN", Row: listRow, Detail: printDetail,
		Wait:         waitJob,
		JSON:         func(o *jobreport.JobJSON, _ *arbiterv1.Job) { o.Perft, _ = o.Detail.(*jobreport.PerftJob) },
		DetailJSON:   func(j *arbiterv1.Job) any { return jobreport.NewPerftJob(j) },
		DetailSchema: detailSchema})
}

// detailSchema is the schema of the job's detail object: the typed
// perft object's, which the detail repeats.
//
//go:embed detail.schema.json
var detailSchema []byte

// printDetail prints one perft job as `arbiter status JOB` shows it.
func printDetail(out io.Writer, j *arbiterv1.Job) {
	p := j.GetProgress()
	fmt.Fprintf(out, "Job:        %s\nState:      %s\n", j.GetJobId(), jobreport.StateName(j.GetState()))
	extra := ""
	if n := j.GetPerft().GetSlices(); n > 1 {
		extra = fmt.Sprintf(", %d slices", n)
	}
	if j.GetPerft().GetStats() {
		extra += ", statistics"
	}
	whatText := what(j.GetPerft())
	if j.GetPerft().GetSuiteSize() > 0 {
		whatText += fmt.Sprintf(", numbered from %d", j.GetPerft().GetSuiteFirst())
	}
	fmt.Fprintf(out, "FEN:        %s\nDepth:      %d (split at ply %d%s, verify %.2f)\n", whatText,
		j.GetPerft().GetDepth(), j.GetPerft().GetSplitPly(), extra, j.GetPerft().GetVerifyFraction())
	fmt.Fprintf(out, "Units:      %d/%d done, %d verified; %d unique positions\n", p.GetUnitsDone(), p.GetUnitsTotal(),
		p.GetUnitsVerified(), p.GetPositions())
	if v := verificationLine(j); v != "" {
		fmt.Fprintf(out, "Verify:     %s\n", v)
	}
	printCrossCheck(out, j.GetCrossCheck(), "Cross:      ", "            ")
	fmt.Fprintf(out, "Mismatches: %d (%d settled)\nWorkers:    %d active\n", p.GetMismatches(), p.GetMismatchesSettled(), p.GetActiveWorkers())
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	if p.GetBlocked() != "" {
		fmt.Fprintf(out, "Blocked:    %s\n", p.GetBlocked())
	}
	if j.GetNodes() != "" {
		if !printSuite(out, j) {
			for _, d := range sortedDivide(j) {
				fmt.Fprintf(out, "  %s: %s\n", d.GetMove(), d.GetNodes())
			}
		}
		fmt.Fprintf(out, "Nodes:      %s\n", j.GetNodes())
		if s := j.GetPerftStats(); s != nil {
			fmt.Fprintf(out, "Statistics: %s captures, %s e.p., %s castles, %s promotions, %s checks, %s discovered, %s double checks, %s mates\n",
				s.GetCaptures(), s.GetEnPassant(), s.GetCastles(), s.GetPromotions(), s.GetChecks(), s.GetDiscoveryChecks(), s.GetDoubleChecks(), s.GetCheckmates())
		}
	} else {
		fmt.Fprintf(out, "Nodes done: %s\n", p.GetNodesDone())
	}
}

// listRow is a perft job's row of `arbiter status`'s list.
func listRow(j *arbiterv1.Job) string {
	p := j.GetProgress()
	nodes := j.GetNodes()
	if nodes == "" {
		nodes = p.GetNodesDone()
		if nodes == "" {
			nodes = "0"
		}
		nodes += "+"
	}
	if jobreport.PerftVerification(j) == jobreport.VerificationNone {
		nodes += " (unverified)"
	}
	progress := fmt.Sprintf("%d/%d units", p.GetUnitsDone(), p.GetUnitsTotal())
	if p.GetUnitsTotal() > 0 {
		progress = fmt.Sprintf("%.0f%% (%s)", 100*float64(p.GetUnitsDone())/float64(p.GetUnitsTotal()), progress)
	}
	return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s", j.GetJobId(), jobreport.ListState(j), j.GetPerft().GetDepth(), nodes, progress, what(j.GetPerft()))
}

// what is a perft job's FEN, or for a suite "suite of N positions".
func what(s *arbiterv1.PerftSpec) string {
	if n := s.GetSuiteSize(); n > 0 {
		return fmt.Sprintf("suite of %d positions", n)
	}
	return s.GetFen()
}
