package jobreport

import (
	"io"
	"sort"
	"sync"

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
	// Order places the family's table in `arbiter status`'s list:
	// ascending, then by family name, whatever order the kinds' inits
	// register in (which moves when a report moves into kinds/).
	// docs/kinds.md lists the kinds' orders.
	Order int
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
