package web

// What a kind's page (registered with RegisterPage) may use of the pages
// beyond the job: the board of a position, the form that changes or
// cancels a running job, the dashboard link, the page's clock, the page
// of a paged list, and what a page that shows no job shows.

import (
	"html/template"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Board draws fen as an SVG board of squares sq pixels wide ("" for a FEN
// that does not parse).
func (p *PageRequest) Board(fen string, sq int) template.HTML { return boardSVG(fen, "", sq) }

// BoardAfter is Board with the squares of the move last (UCI) marked.
func (p *PageRequest) BoardAfter(fen, last string, sq int) template.HTML {
	return boardSVG(fen, last, sq)
}

// PageNumber is the request's page of a paged list (?page=, 1 when
// absent), or an error naming a bad one.
func (p *PageRequest) PageNumber() (int, error) { return pageNumber(p.R.URL.Query()) }

// ShowUpdating sets what a page that shows no job shows (Show is for a
// job's page): its title and the data its template reads as .Page, and,
// while live, its live stream, refreshed every Config.LiveInterval: the
// page's own URL, with its page of a paged list past the first.
func (p *PageRequest) ShowUpdating(title string, data any, live bool, page int) {
	p.v.Title, p.v.Nav, p.v.Page = title, "list", data
	if !live {
		return
	}
	p.v.Live = p.R.URL.Path + "?live=1"
	if page > 1 {
		p.v.Live = p.R.URL.Path + "?page=" + strconv.Itoa(page) + "&live=1"
	}
}

// ManageForm is the data of the layout's "manage" template (priority,
// share, cancel) for running job j with its spec's priority and share, or
// nil when j is not running or the viewer may not manage it.
func (p *PageRequest) ManageForm(j *arbiterv1.Job, priority int32, share float64) any {
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || !p.v.Viewer.MayManage(j.GetSubmitter()) {
		return nil
	}
	return &manageForm{ID: j.GetJobId(), CSRF: p.v.CSRF, MinPrio: core.MinPriority, MaxPrio: core.MaxPriority,
		Priority: priority, Share: share}
}

// Now is the time the page is rendered at.
func (p *PageRequest) Now() time.Time { return p.v.Now }

// Dashboard links the page to the Grafana dashboard of uid (nothing
// without Grafana); call it after Show.
func (p *PageRequest) Dashboard(uid string) { p.v.Grafana = p.s.grafana(uid, nil) }

// Workload is the coordinator's workload of kind (false: none runs), for
// a kind's page that reads more of its jobs than their snapshots.
func (p *PageRequest) Workload(kind string) (core.Workload, bool) {
	for _, wl := range p.s.cfg.Core.Workloads() {
		if wl.Kind() == kind {
			return wl, true
		}
	}
	return nil, false
}
