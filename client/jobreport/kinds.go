package jobreport

import (
	"io"
	"sync"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Report is how `arbiter status` shows the jobs of one family: a table in
// the list, a detail view of one job, and its part of the JSON. A family
// registers its Report once (RegisterReport); the printers dispatch on the
// job's kind (jobkind.Of), never on which spec field is set.
type Report struct {
	// Header is the list table's header; Row one job's row in it (tab
	// separated, the job id first).
	Header string
	Row    func(j *arbiterv1.Job) string
	// Detail prints one job (arbiter status JOB).
	Detail func(out io.Writer, j *arbiterv1.Job)
	// JSON fills in the family's part of a job's JSON.
	JSON func(o *JobJSON, j *arbiterv1.Job)
}

var (
	reportsMu sync.RWMutex
	reports   = map[jobkind.Family]Report{}
	// families is the order of the list's tables.
	families []jobkind.Family
)

// RegisterReport sets how jobs of family f are shown; families list in the
// order they registered.
func RegisterReport(f jobkind.Family, r Report) {
	reportsMu.Lock()
	defer reportsMu.Unlock()
	if _, ok := reports[f]; !ok {
		families = append(families, f)
	}
	reports[f] = r
}

func reportOf(f jobkind.Family) (Report, bool) {
	reportsMu.RLock()
	defer reportsMu.RUnlock()
	r, ok := reports[f]
	return r, ok
}

func reportFamilies() []jobkind.Family {
	reportsMu.RLock()
	defer reportsMu.RUnlock()
	return append([]jobkind.Family(nil), families...)
}

func init() {
	RegisterReport(jobkind.FamilyTest, Report{Header: "TEST\tSTATE\tENGINES\tTC\tGAMES\tELO\tLLR", Row: testRow, Detail: PrintTest,
		JSON: func(o *JobJSON, j *arbiterv1.Job) {
			o.Test = newTestJob(j)
			o.Workers = newWorkers(j.GetMatchProgress().GetWorkers())
		}})
	RegisterReport(jobkind.FamilyPerft, Report{Header: "PERFT\tSTATE\tDEPTH\tNODES\tPROGRESS\tFEN", Row: perftRow, Detail: PrintPerftDetail,
		JSON: func(o *JobJSON, j *arbiterv1.Job) { o.Perft = newPerftJob(j) }})
	RegisterReport(jobkind.FamilyTune, Report{Header: "TUNE\tSTATE\tENGINE\tTC\tUPDATES\tPAIRS\tGAMES\tPARAMS", Row: tuneListRow, Detail: PrintTune,
		JSON: func(o *JobJSON, j *arbiterv1.Job) {
			o.Tune = newTuneJob(j)
			o.Workers = newWorkers(j.GetSpsaProgress().GetWorkers())
		}})
}

// PrintJob prints one job as `arbiter status JOB` does.
func PrintJob(out io.Writer, j *arbiterv1.Job) error {
	if r, ok := reportOf(jobkind.Of(j).Family); ok && r.Detail != nil {
		r.Detail(out, j)
		return nil
	}
	return printOther(out, j)
}
