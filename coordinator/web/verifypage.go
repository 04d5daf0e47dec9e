package web

import (
	"context"
	"html/template"
	"net/http"
	"sort"
	"strconv"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// VerifySessions is what the pages read of verify sessions: the workload
// of the verify kind (kinds/verify), a floor above this package, answers
// it, so no page names the kind's package.
type VerifySessions interface {
	// Sessions returns live sessions, then reported ones, skipping offset
	// of them, at most limit, and the number in all.
	Sessions(ctx context.Context, offset, limit int) ([]verifyproto.SessionView, int, error)
	// Session returns one session, live or reported (UNKNOWN_JOB when
	// neither).
	Session(ctx context.Context, sid string) (verifyproto.SessionView, error)
	// Reports returns a session's stored position reports, skipping offset
	// of them, at most limit.
	Reports(ctx context.Context, sid string, offset, limit int) ([]*arbiterv1.VerifyPositionReport, error)
}

// verifySessionsOf is the workload of c that keeps verify sessions, nil
// when none does.
func verifySessionsOf(c *core.Core) VerifySessions {
	for _, wl := range c.Workloads() {
		if vs, ok := wl.(VerifySessions); ok {
			return vs
		}
	}
	return nil
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

type verifyData struct {
	S         verifyproto.SessionView
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
	if s.cfg.Verify == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown verify session %s", apierr.Q(id))
	}
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
