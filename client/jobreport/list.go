package jobreport

import (
	"fmt"
	"io"
	"text/tabwriter"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// PrintJobs prints the jobs as `arbiter status` lists them: one table per
// kind with the columns that kind is read by (tests: engines, time
// control, games, Elo, LLR; perft jobs: depth, FEN, nodes, progress;
// tunes: engine, updates, games), in the order given, and after them the
// reason of each job that cannot progress.
func PrintJobs(out io.Writer, jobs []*arbiterv1.Job) error {
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(out, "No jobs.")
		return err
	}
	byFamily := jobkind.Split(jobs)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	first := true
	table := func(header string, rows []*arbiterv1.Job, row func(*arbiterv1.Job) string) {
		if len(rows) == 0 {
			return
		}
		if !first {
			fmt.Fprintln(tw)
		}
		first = false
		fmt.Fprintln(tw, header)
		for _, j := range rows {
			fmt.Fprintln(tw, row(j))
		}
	}
	for _, f := range Families() {
		r, _ := ReportOf(f)
		table(r.Header, byFamily[f], r.Row)
		delete(byFamily, f)
	}
	var other []*arbiterv1.Job
	for _, j := range jobs {
		if _, ok := byFamily[jobkind.Of(j).Family]; ok {
			other = append(other, j)
		}
	}
	table("JOB\tSTATE\tKIND", other, otherRow)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, j := range jobs {
		if b := j.GetProgress().GetBlocked(); b != "" {
			fmt.Fprintf(out, "\n%s cannot progress: %s\n", j.GetJobId(), b)
		}
	}
	return nil
}

// otherRow is the row of a job of a kind this build does not know.
func otherRow(j *arbiterv1.Job) string {
	return fmt.Sprintf("%s\t%s\t%s", j.GetJobId(), ListState(j), j.GetKind())
}

// printOther shows a job of a kind this build does not know.
func printOther(out io.Writer, j *arbiterv1.Job) error {
	_, err := fmt.Fprintf(out, "Job:   %s (kind %q, which this arbiter does not know: update it)\nState: %s\n", j.GetJobId(), j.GetKind(), ListState(j))
	return err
}

// ListState is a job's state, marked when it cannot progress.
func ListState(j *arbiterv1.Job) string {
	s := StateName(j.GetState())
	if j.GetProgress().GetBlocked() != "" {
		s += " (blocked)"
	}
	return s
}
