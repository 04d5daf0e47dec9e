package web

import (
	"html/template"
	"net/http"
	"sort"
	"strconv"

	"github.com/arbiter-chess/arbiter/coordinator/verifyjob"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

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

type verifyData struct {
	S         verifyjob.SessionView
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

func (s *Server) verifyPage(r *http.Request, v *view) error {
	id := r.PathValue("id")
	sv, err := s.cfg.Verify.Session(r.Context(), id)
	if err != nil {
		return err
	}
	page, err := pageNumber(r.URL.Query())
	if err != nil {
		return err
	}
	d := &verifyData{S: sv, First: (page - 1) * reportsPerPage}
	for w, n := range sv.Summary.GetUnitsByWorker() {
		d.Workers = append(d.Workers, workerCount{w, n})
	}
	sort.Slice(d.Workers, func(i, j int) bool { return d.Workers[i].ID < d.Workers[j].ID })
	reps, err := s.cfg.Verify.Reports(r.Context(), sv.ID, d.First, reportsPerPage)
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
			pv.Findings = append(pv.Findings, findingView{VerifyFinding: f, Board: boardSVG(f.GetFen(), last, 32)})
		}
		d.Positions = append(d.Positions, pv)
	}
	if page > 1 {
		d.Prev = "?page=" + strconv.Itoa(page-1)
	}
	if d.First+reportsPerPage < sv.StoredReports {
		d.Next = "?page=" + strconv.Itoa(page+1)
	}
	v.Title = "Verify session " + sv.ID
	v.Nav, v.Page, v.tmpl = "list", d, "verify"
	if sv.Live {
		v.Live = r.URL.Path + "?live=1"
		if page > 1 {
			v.Live = r.URL.Path + "?page=" + strconv.Itoa(page) + "&live=1"
		}
	}
	return nil
}
