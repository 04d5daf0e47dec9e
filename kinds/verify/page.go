package verify

import (
	"embed"
	"html/template"
	"sort"
	"strconv"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The page of a verify session (/verify/{id}): the session as the
// workload holds it (live, or reported), the engine queries each worker
// answered, and a page of the positions with problems, each finding on
// its board with the moves from the root and the command that reproduces
// it. A session is not a job: nothing to follow, and a live session's
// page refreshes every web.Config.LiveInterval.

//go:embed templates/verify.html
var pageTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "verify", Templates: pageTemplates, Pattern: "GET /verify/{id}", Render: renderPage})
}

// reportsPerPage bounds the positions a verify page shows.
const reportsPerPage = 25

type findingView struct {
	*arbiterv1.VerifyFinding
	Board template.HTML
}

type positionView struct {
	*arbiterv1.VerifyPositionReport
	Findings []findingView
}

// pageData is what templates/verify.html reads as .Page.
type pageData struct {
	S         SessionView
	Workers   []workerCount
	Positions []positionView
	First     int
	Prev      string
	Next      string
}

type workerCount struct {
	ID    string
	Units uint32
}

func renderPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	wl, _ := pr.Workload(Kind)
	w, ok := wl.(*Workload)
	if !ok {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown verify session %s", apierr.Q(id))
	}
	sv, err := w.Session(pr.R.Context(), id)
	if err != nil {
		return err
	}
	page, err := pr.PageNumber()
	if err != nil {
		return err
	}
	d := &pageData{S: sv, First: (page - 1) * reportsPerPage}
	for w, n := range sv.Summary.GetUnitsByWorker() {
		d.Workers = append(d.Workers, workerCount{w, n})
	}
	sort.Slice(d.Workers, func(i, j int) bool { return d.Workers[i].ID < d.Workers[j].ID })
	reps, err := w.Reports(pr.R.Context(), sv.ID, d.First, reportsPerPage)
	if err != nil {
		return err
	}
	for _, rep := range reps {
		pv := positionView{VerifyPositionReport: rep}
		for _, f := range rep.GetFindings() {
			last := ""
			if ms := f.GetMoves(); len(ms) > 0 {
				last = ms[len(ms)-1]
			}
			pv.Findings = append(pv.Findings, findingView{VerifyFinding: f, Board: pr.BoardAfter(f.GetFen(), last, 32)})
		}
		d.Positions = append(d.Positions, pv)
	}
	if page > 1 {
		d.Prev = "?page=" + strconv.Itoa(page-1)
	}
	if d.First+reportsPerPage < sv.StoredReports {
		d.Next = "?page=" + strconv.Itoa(page+1)
	}
	pr.ShowUpdating("Verify session "+sv.ID, d, sv.Live, page)
	return nil
}
