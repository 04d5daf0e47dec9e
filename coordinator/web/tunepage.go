package web

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The page of an SPSA tune (/tunes/{id}): its spec, where each parameter
// stands (start, now, range, the next batch's c_k and a_k), a chart of
// each parameter's trajectory against updates, the counts and the workers,
// all from the snapshot the gRPC API returns (what arbiter status prints).

// maxTrajectoryCharts bounds the charts of a tune page: a tune may have a
// thousand parameters, and every one is in the table.
const maxTrajectoryCharts = 24

type tuneData struct {
	Job         *arbiterv1.Job
	State       string
	Running     bool
	Manage      bool
	Form        *manageForm
	Params      template.HTML // the parameters' table rows
	Charts      []tuneChart
	ChartsAll   int // parameters in all (charts are drawn for the first maxTrajectoryCharts)
	WorkerTable workerTable
	Block       resultBlock
	// Schedule is the schedule's alpha, gamma and A ratio, defaults filled
	// in.
	Alpha, Gamma, ARatio float64
}

type tuneChart struct {
	Name  string
	Chart template.HTML
}

// tuneJob returns tune id's snapshot, or a page saying it is not one.
func (s *Server) tuneJob(id string) (*arbiterv1.Job, error) {
	return s.jobOf(id, "an SPSA tune", func(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyTune) })
}

func (s *Server) tunePage(r *http.Request, v *view) error {
	id := r.PathValue("id")
	j, err := s.tuneJob(id)
	if err != nil {
		return err
	}
	// A tune's snapshot holds its verification tests only as the API adds
	// them: they are the game workload's.
	if sp := j.GetSpsaProgress(); sp != nil && s.cfg.Games != nil {
		sp.Verifications = s.cfg.Games.Verifications(id)
	}
	spec, sp := j.GetSpsa(), j.GetSpsaProgress()
	cfg := spsaspec.Config(spec)
	d := &tuneData{Job: j, State: jobState(j), Running: j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING,
		Alpha: cfg.Alpha, Gamma: cfg.Gamma, ARatio: cfg.ARatio, ChartsAll: len(sp.GetParams())}
	// A tune's priority is fixed at submission (its workload has no
	// SetPriority): the submitter may only cancel it.
	d.Manage = d.Running && v.Viewer.MayManage(j.GetSubmitter())
	d.Form = &manageForm{ID: id, CSRF: v.CSRF, MinPrio: core.MinPriority, MaxPrio: core.MaxPriority,
		Priority: spec.GetPriority(), Share: spec.GetThroughput(), CancelOnly: true}
	d.Params = paramRows(sp.GetParams())
	d.Block = blockOf(r, j)
	for i, p := range sp.GetParams() {
		if i == maxTrajectoryCharts {
			break
		}
		if c := trajectoryChart(i, p, sp.GetTrajectoryUpdates()); c != "" {
			d.Charts = append(d.Charts, tuneChart{Name: p.GetName(), Chart: c})
		}
	}
	d.WorkerTable, _ = s.gameWorkers("tune-workers", "tune", sp.GetWorkers())
	v.Title = fmt.Sprintf("Tune %s: %s", id, spec.GetEngine().GetName())
	v.Nav, v.Page, v.tmpl, v.watch = "list", d, "tune", []string{id}
	if d.Running {
		v.Live = r.URL.Path + "?live=1"
	}
	return nil
}

// paramValue writes a parameter's value: whole numbers as they are, others
// to two decimals (four significant digits below 1).
func paramValue(p *arbiterv1.SpsaParamState, x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) >= 1:
		return fixed(x, 2)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// exact is x as the snapshot holds it (the data-value the browser test
// compares).
func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// paramRows renders the parameters' table rows: name, start, now (and what
// the engine is given, for an integer parameter), range, and the next
// batch's c_k, a_k and a_k / c_k² (r_k), with the tune's last c and r.
func paramRows(ps []*arbiterv1.SpsaParamState) template.HTML {
	var b rowsHTML
	b.Grow(len(ps) * 900)
	num := func(field string, x float64, text string) {
		b.raw(`<td class="num" data-field="`, field, `" data-value="`, exact(x), `">`)
		b.esc(text)
		b.raw("</td>")
	}
	for _, p := range ps {
		b.raw(`<tr data-param="`)
		b.esc(p.GetName())
		b.raw(`"><th scope="row">`)
		b.esc(p.GetName())
		if p.GetIsFloat() {
			b.raw(` <span class="muted">real</span>`)
		}
		b.raw("</th>")
		num("start", p.GetStart(), paramValue(p, p.GetStart()))
		num("current", p.GetCurrent(), paramValue(p, p.GetCurrent()))
		delta := p.GetCurrent() - p.GetStart()
		b.cell("num", "", fmt.Sprintf("%+.2f", delta))
		engine := paramValue(p, p.GetCurrent())
		if !p.GetIsFloat() {
			engine = strconv.FormatFloat(math.Round(p.GetCurrent()), 'f', 0, 64)
		}
		b.cell("num", "engine", engine)
		num("min", p.GetMin(), paramValue(p, p.GetMin()))
		num("max", p.GetMax(), paramValue(p, p.GetMax()))
		c, r := p.GetC(), p.GetR()
		num("c", c, sig(c))
		num("a", r*c*c, sig(r*c*c))
		num("r", r, sig(r))
		num("c_end", p.GetCEnd(), sig(p.GetCEnd()))
		num("r_end", p.GetREnd(), sig(p.GetREnd()))
		b.raw("</tr>\n")
	}
	return b.html()
}

// sig is x to four significant digits.
func sig(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func init() {
	RegisterPage(Page{Name: "tune", Pattern: "GET /tunes/{id}", Followable: true,
		Render: func(p *PageRequest) error { return p.s.tunePage(p.R, p.v) }})
}
