package epd

// How `arbiter status` shows EPD jobs: a row in the list (suite, limit,
// batches, solved per engine) and, for one job, the per-position lines
// and the per-engine table of what is merged so far; `status JOB --wait`
// follows it to its end as submit epd --wait does (waitJob, submit.go).

import (
	"fmt"
	"io"
	"strings"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func init() {
	jobreport.RegisterReport(FamilyEPD, jobreport.Report{Order: 60, Header: "EPD\tSTATE\tSUITE\tLIMIT\tBATCHES\tSOLVED",
		Row: statusRow, Detail: printStatus, Wait: waitJob, DetailJSON: detailJSON, DetailSchema: detailSchema})
}

// detailOf is a snapshot's EPD detail (nil when it has none).
func detailOf(j *arbiterv1.Job) *arbiterv1.EpdJob {
	d := &arbiterv1.EpdJob{}
	if j.GetDetail() == nil || j.GetDetail().UnmarshalTo(d) != nil {
		return nil
	}
	return d
}

// engineCounts are engine i's positions searched and solved as the
// coordinator counted them (0 and 0 when the snapshot lacks them).
func engineCounts(d *arbiterv1.EpdJob, i int) (searched, solved uint32) {
	if i < len(d.GetSearched()) && i < len(d.GetSolved()) {
		return d.GetSearched()[i], d.GetSolved()[i]
	}
	return 0, 0
}

// solvedText is "name a/b" per engine.
func solvedText(d *arbiterv1.EpdJob) string {
	var parts []string
	for i, name := range EngineNames(d.GetSpec()) {
		searched, solved := engineCounts(d, i)
		parts = append(parts, fmt.Sprintf("%s %d/%d", name, solved, searched))
	}
	return strings.Join(parts, ", ")
}

func statusRow(j *arbiterv1.Job) string {
	d := detailOf(j)
	limit, _ := LimitOf(d.GetSpec().GetLimit())
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%d/%d\t%s", j.GetJobId(), jobreport.StateName(j.GetState()), d.GetSpec().GetName(), limit,
		d.GetBatchesDone(), d.GetBatches(), solvedText(d))
}

// printStatus prints one job (arbiter status JOB).
func printStatus(out io.Writer, j *arbiterv1.Job) {
	d := detailOf(j)
	fmt.Fprintf(out, "EPD job:  %s\nState:    %s\n", j.GetJobId(), jobreport.StateName(j.GetState()))
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:    %s\n", j.GetError())
	}
	if b := j.GetProgress().GetBlocked(); b != "" {
		fmt.Fprintf(out, "Blocked:  %s\n", b)
	}
	if d == nil {
		return
	}
	limit, _ := LimitOf(d.GetSpec().GetLimit())
	fmt.Fprintf(out, "Suite:    %s, %d positions, %s\nBatches:  %d of %d (%d leased)\nSolved:   %s\n", d.GetSpec().GetName(),
		len(d.GetSpec().GetPositions()), limit, d.GetBatchesDone(), d.GetBatches(), d.GetBatchesLeased(), solvedText(d))
	run, err := farmRunOf(j)
	if err != nil {
		fmt.Fprintf(out, "Results:  %v\n", err)
		return
	}
	fmt.Fprintln(out)
	for _, r := range run.results {
		fmt.Fprintln(out, Line(run.cfg.Suite, run.names, r))
	}
	fmt.Fprintln(out)
	WriteTable(out, Table(run.names, run.results))
}
