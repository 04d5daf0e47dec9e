package spsa

import (
	"embed"
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The page of an SPSA tune (/tunes/{id}): its spec, where each parameter
// stands (start, now, range, the next batch's c_k and a_k), a chart of
// each parameter's trajectory against updates, the counts and the workers,
// all from the snapshot the gRPC API returns (what arbiter status prints),
// with the tests that verify it from the test kind's workload.

//go:embed templates/tune.html
var pageTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "tune", Templates: pageTemplates, Pattern: "GET /tunes/{id}", Followable: true, Render: renderPage})
}

// maxTrajectoryCharts bounds the charts of a tune page: a tune may have a
// thousand parameters, and every one is in the table.
const maxTrajectoryCharts = 24

// pageData is what templates/tune.html reads as .Page.
type pageData struct {
	Job         *arbiterv1.Job
	State       string
	Running     bool
	Manage      bool
	Form        any
	Params      template.HTML // the parameters' table rows
	Charts      []tuneChart
	ChartsAll   int // parameters in all (charts are drawn for the first maxTrajectoryCharts)
	WorkerTable any
	Block       any
	// Schedule is the schedule's alpha, gamma and A ratio, defaults filled
	// in.
	Alpha, Gamma, ARatio float64
}

type tuneChart struct {
	Name  string
	Chart template.HTML
}

func renderPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	j, err := pr.Job(id, "an SPSA tune", func(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyTune) })
	if err != nil {
		return err
	}
	// A tune's snapshot holds its verification tests only as the API adds
	// them: they are the game workload's.
	if sp := j.GetSpsaProgress(); sp != nil && pr.Tests() != nil {
		sp.Verifications = pr.Tests().Verifications(id)
	}
	spec, sp := j.GetSpsa(), j.GetSpsaProgress()
	cfg := spsaspec.Config(spec)
	d := &pageData{Job: j, State: pr.State(j), Running: j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING,
		Alpha: cfg.Alpha, Gamma: cfg.Gamma, ARatio: cfg.ARatio, ChartsAll: len(sp.GetParams())}
	// A tune's priority is fixed at submission (its workload has no
	// SetPriority): the submitter may only cancel it.
	d.Form = pr.CancelForm(j, spec.GetPriority(), spec.GetThroughput())
	d.Manage = d.Form != nil
	d.Params = paramRows(sp.GetParams())
	d.Block = pr.Block(j)
	for i, p := range sp.GetParams() {
		if i == maxTrajectoryCharts {
			break
		}
		if c := web.TrajectoryChart(i, p, sp.GetTrajectoryUpdates()); c != "" {
			d.Charts = append(d.Charts, tuneChart{Name: p.GetName(), Chart: c})
		}
	}
	d.WorkerTable, _ = pr.GameWorkers("tune-workers", "tune", sp.GetWorkers())
	pr.Show(fmt.Sprintf("Tune %s: %s", id, spec.GetEngine().GetName()), d, j)
	return nil
}

// exact is x as the snapshot holds it (the data-value the browser test
// compares).
func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// sig is x to four significant digits.
func sig(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// paramRows renders the parameters' table rows: name, start, now (and what
// the engine is given, for an integer parameter), range, and the next
// batch's c_k, a_k and a_k / c_k² (r_k), with the tune's last c and r.
// They are written here rather than by html/template, whose reflection
// is slow for a thousand parameters; every text is escaped.
func paramRows(ps []*arbiterv1.SpsaParamState) template.HTML {
	var b strings.Builder
	b.Grow(len(ps) * 900)
	cell := func(class, field, text string) {
		b.WriteString(`<td class="` + class + `"`)
		if field != "" {
			b.WriteString(` data-field="` + field + `"`)
		}
		b.WriteString(">" + html.EscapeString(text) + "</td>")
	}
	num := func(field string, x float64, text string) {
		b.WriteString(`<td class="num" data-field="` + field + `" data-value="` + exact(x) + `">` + html.EscapeString(text) + "</td>")
	}
	for _, p := range ps {
		name := html.EscapeString(p.GetName())
		b.WriteString(`<tr data-param="` + name + `"><th scope="row">` + name)
		if p.GetIsFloat() {
			b.WriteString(` <span class="muted">real</span>`)
		}
		b.WriteString("</th>")
		num("start", p.GetStart(), web.ParamValue(p, p.GetStart()))
		num("current", p.GetCurrent(), web.ParamValue(p, p.GetCurrent()))
		cell("num", "", fmt.Sprintf("%+.2f", p.GetCurrent()-p.GetStart()))
		engine := web.ParamValue(p, p.GetCurrent())
		if !p.GetIsFloat() {
			engine = strconv.FormatFloat(math.Round(p.GetCurrent()), 'f', 0, 64)
		}
		cell("num", "engine", engine)
		num("min", p.GetMin(), web.ParamValue(p, p.GetMin()))
		num("max", p.GetMax(), web.ParamValue(p, p.GetMax()))
		c, r := p.GetC(), p.GetR()
		num("c", c, sig(c))
		num("a", r*c*c, sig(r*c*c))
		num("r", r, sig(r))
		num("c_end", p.GetCEnd(), sig(p.GetCEnd()))
		num("r_end", p.GetREnd(), sig(p.GetREnd()))
		b.WriteString("</tr>\n")
	}
	return template.HTML(b.String())
}
