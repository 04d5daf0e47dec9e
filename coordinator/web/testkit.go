package web

// What the test kind's page (kinds/test, /tests/{id}) uses of the pages
// beyond the page kit (pagekit.go): the test as the viewer may see it,
// the layout's parts it fills (the test's forms, the result block, the
// engines' diff, the workers' table), its charts and its dashboard. The
// games of a test (/tests/{id}/games, a game, the PGN downloads) register
// from the kind too (RegisterPage, RegisterDownload: downloads.go).

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// TestJob returns test id as the viewer may see it (a reader who is not
// signed in gets its public counts, shownTest), or a page saying it is
// not a match or SPRT test.
func (p *PageRequest) TestJob(id string) (*arbiterv1.Job, error) { return p.s.shownTest(id, p.v) }

// TestActions is the data of the layout's "testManage" template (change,
// stop, resume, copy, withdraw) for test j, or nil when the viewer may do
// none of it.
func (p *PageRequest) TestActions(j *arbiterv1.Job) any {
	vw := p.v.Viewer
	running := j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING
	stopped := j.GetState() == arbiterv1.JobState_JOB_STATE_CANCELLED
	pending := j.GetState() == arbiterv1.JobState_JOB_STATE_PENDING
	mayManage := vw.MayManage(j.GetSubmitter())
	if !((running || stopped || pending) && mayManage || vw.CanSubmit()) {
		return nil
	}
	form := manageForm{ID: j.GetJobId(), CSRF: p.v.CSRF, MinPrio: core.MinPriority, MaxPrio: core.MaxPriority,
		Priority: j.GetMatch().GetPriority(), Share: j.GetMatch().GetThroughput()}
	return &testManage{manageForm: form, Running: running, Stopped: stopped, Manage: mayManage, Pending: pending,
		CanSubmit: vw.CanSubmit(), SPRT: j.GetKind() == jobkind.SPRT, Games: j.GetMatch().GetGames(),
		Tags: strings.Join(j.GetMatch().GetTags(), " "), Notes: j.GetMatch().GetNotes()}
}

// Block is the data of the layout's "resultBlock" template for job j.
func (p *PageRequest) Block(j *arbiterv1.Job) any { return blockOf(p.R, j) }

// EngineDiff is the data of the layout's "diff" template for a test of
// spec: the commits its engines were built from, or nil (two engines
// that are not commits of one repository, or a live refresh, which does
// not fetch it again).
func (p *PageRequest) EngineDiff(spec *arbiterv1.MatchSpec) any {
	if p.R.URL.Query().Get("live") != "" {
		return nil
	}
	if d := p.s.testDiff(p.R.Context(), spec); d != nil {
		return d
	}
	return nil
}

// GameWorkers is the data of the layout's "gameWorkers" template (element
// id, "test" or "tune") for the workers of a test or tune, and the
// distinct bench signatures of the known workers that played games.
func (p *PageRequest) GameWorkers(id, of string, ws []*arbiterv1.WorkerIncidents) (table any, sigs []string) {
	t, sigs := p.s.gameWorkers(id, of, ws)
	return t, sigs
}

// gameWorkers is the workers' table of a test's or tune's page, and the
// distinct bench signatures of the known workers that played games.
func (s *Server) gameWorkers(id, of string, ws []*arbiterv1.WorkerIncidents) (workerTable, []string) {
	var rows []workerRow
	seen := map[uint64]bool{}
	var sigs []string
	for _, w := range ws {
		row := workerRow{WorkerIncidents: w}
		if wk, ok := s.cfg.Core.Worker(w.GetWorkerId()); ok {
			row.Known, row.Owner, row.BenchSig, row.Version = true, wk.Owner, wk.Caps.BenchSig, wk.Caps.EngineVersion
			if sig := wk.Caps.BenchSig; sig != 0 && w.GetGames() > 0 && !seen[sig] {
				seen[sig] = true
				sigs = append(sigs, strconv.FormatUint(sig, 10))
			}
		}
		rows = append(rows, row)
	}
	return workerTable{ID: id, Of: of, Rows: gameWorkerRows(rows)}, sigs
}

// DashboardVars links the page to the Grafana dashboard of uid with its
// variables set (nothing without Grafana); call it after Show.
func (p *PageRequest) DashboardVars(uid string, vars url.Values) {
	p.v.Grafana = p.s.grafana(uid, vars)
}

// LLRChart draws a test's LLR against its games with the bounds where it
// stops ("" before two points).
func LLRChart(pts []testview.HistoryPoint, lower, upper float64) template.HTML {
	return llrChart(pts, lower, upper)
}

// EloChart draws a test's Elo and its 95% interval against its games.
func EloChart(pts []testview.HistoryPoint) template.HTML { return eloChart(pts) }

// Render writes registered page name's template, filled with data as
// .Page and title, as a request without a viewer would see it: for a
// kind's tests of its template.
func Render(w io.Writer, name, title string, data any) error {
	pages, err := parsePages()
	if err != nil {
		return err
	}
	t, ok := pages[name]
	if !ok {
		return fmt.Errorf("web: no page %q registered", name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", &view{Title: title, Now: time.Now(), Page: data}); err != nil {
		return err
	}
	_, err = buf.WriteTo(w)
	return err
}
