package jobreport

import (
	"context"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Report is how `arbiter status` shows the jobs of one family: a table in
// the list, a detail view of one job, and its part of the JSON. A kind's
// folder registers its family's Report once (RegisterReport) from its
// init, with its jobkind.Kind; the printers dispatch on the job's kind
// (jobkind.Of), never on which spec field is set.
//
// The JSON of a kind is its DetailJSON, printed as the job's "detail"
// object, whose JSON schema is DetailSchema: docs/json/job.schema.json
// says only that detail is an object, and the test that validates --json
// output checks each detail against the schema its kind registered. The
// families of the release before (test, perft, tune) still fill in typed
// fields of JobJSON (JSON) for one release: the test, perft and SPSA
// kinds from their folders, with the builders this package exports
// (NewPerftJob, NewEngineJSON, NewWorkers, Finite, Penta).
type Report struct {
	// Header is the list table's header; Row one job's row in it (tab
	// separated, the job id first).
	Header string
	Row    func(j *arbiterv1.Job) string
	// Detail prints one job (arbiter status JOB).
	Detail func(out io.Writer, j *arbiterv1.Job)
	// JSON fills in a built-in family's typed part of a job's JSON. It
	// runs after DetailJSON, so a typed field that repeats the detail
	// takes o.Detail rather than building it again.
	JSON func(o *JobJSON, j *arbiterv1.Job)
	// DetailJSON is the job's kind-specific data, JobJSON.Detail (nil:
	// none, the job's detail could not be read).
	DetailJSON func(j *arbiterv1.Job) any
	// DetailSchema is the JSON schema (draft 2020-12, one object) of
	// DetailJSON's value; required with DetailJSON.
	DetailSchema []byte
	// Wait follows one job of the family to its end (through coordinator
	// restarts) and prints it as the kind's submit --wait does: `status
	// JOB --wait`, and `arbiter up`'s perft job. j is the job as GetJob
	// answered; Wait returns the finished job, and a job that did not end
	// done is an error with exit status 1 (cliexit). nil: the family's
	// jobs cannot be waited for, and status --wait says which kinds can
	// (WaitKinds).
	Wait Waiter
	// Order places the family's table in `arbiter status`'s list:
	// ascending, then by family name, whatever order the kinds' inits
	// register in (which moves when a report moves into kinds/).
	// docs/kinds.md lists the kinds' orders.
	Order int
}

// Waiter follows a job to its end and prints it (Report.Wait).
type Waiter func(ctx context.Context, c *clusterclient.Client, j *arbiterv1.Job, o WaitOptions) (*arbiterv1.Job, error)

// WaitOptions say where a Report's Wait prints, and how.
type WaitOptions struct {
	// Out gets the finished job; Progress what is said while it runs (a
	// job that cannot progress, a coordinator away, a progress bar).
	Out, Progress io.Writer
	// Bar draws a progress bar on Progress when it is a terminal.
	Bar bool
	// JSON prints the finished job as JSON, as the kind's submit --wait
	// --json does.
	JSON bool
	// Divide prints the job's breakdown too where its kind has one (a
	// perft job's divide).
	Divide bool
}

// AtMostEvery returns a watch callback that calls progress with a
// snapshot at most once every interval (the first at once): progress
// lines of a job whose snapshots come faster than anyone reads.
func AtMostEvery(interval time.Duration, progress func(*arbiterv1.Job)) func(*arbiterv1.Job) {
	var last time.Time
	return func(j *arbiterv1.Job) {
		if time.Since(last) < interval {
			return
		}
		last = time.Now()
		progress(j)
	}
}

// Print writes a finished job to Out: as `status --json` writes it with
// JSON, else with the kind's printer.
func (o WaitOptions) Print(j *arbiterv1.Job, print func(io.Writer, *arbiterv1.Job)) error {
	if o.JSON {
		return WriteJob(o.Out, j)
	}
	print(o.Out, j)
	return nil
}

var (
	reportsMu sync.RWMutex
	reports   = map[jobkind.Family]Report{}
)

// RegisterReport sets how jobs of family f are shown; families list by
// their Report.Order. A report with DetailJSON and no DetailSchema
// panics: a kind's JSON is documented where it is produced.
func RegisterReport(f jobkind.Family, r Report) {
	if r.DetailJSON != nil && len(r.DetailSchema) == 0 {
		panic("jobreport: family " + string(f) + " registers DetailJSON without its DetailSchema")
	}
	reportsMu.Lock()
	defer reportsMu.Unlock()
	reports[f] = r
}

// ReportOf returns the report registered for family f.
func ReportOf(f jobkind.Family) (Report, bool) {
	reportsMu.RLock()
	defer reportsMu.RUnlock()
	r, ok := reports[f]
	return r, ok
}

// Families lists the families with a report in the order of the list's
// tables: by Report.Order, then by name.
func Families() []jobkind.Family {
	reportsMu.RLock()
	defer reportsMu.RUnlock()
	out := make([]jobkind.Family, 0, len(reports))
	for f := range reports {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if oi, oj := reports[out[i]].Order, reports[out[j]].Order; oi != oj {
			return oi < oj
		}
		return out[i] < out[j]
	})
	return out
}

// PrintJob prints one job as `arbiter status JOB` does.
func PrintJob(out io.Writer, j *arbiterv1.Job) error {
	if r, ok := ReportOf(jobkind.Of(j).Family); ok && r.Detail != nil {
		r.Detail(out, j)
		return nil
	}
	return printOther(out, j)
}

// WaitKinds lists the kinds (by name, as jobkind.Names) whose family's
// report has a Wait: the jobs `arbiter status JOB --wait` follows.
func WaitKinds() []string {
	var out []string
	for _, n := range jobkind.Names() {
		if r, ok := ReportOf(jobkind.Lookup(n).Family); ok && r.Wait != nil {
			out = append(out, n)
		}
	}
	return out
}

// WaiterOf returns the Wait of j's family; a job whose family has none is
// refused (a usage error, exit status 2) naming the job, its kind and the
// kinds that can be waited for.
func WaiterOf(j *arbiterv1.Job) (Waiter, error) {
	k := jobkind.Of(j)
	if r, ok := ReportOf(k.Family); ok && r.Wait != nil {
		return r.Wait, nil
	}
	can := "none"
	if w := WaitKinds(); len(w) > 0 {
		can = strings.Join(w, ", ")
	}
	return nil, cliexit.Usage("job %s (kind %s) cannot be waited for; the kinds that can: %s", j.GetJobId(), k.Name, can)
}
