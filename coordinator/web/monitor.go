package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/monitoring"
)

// The monitor page (/monitor): the overview dashboard's key figures
// without Grafana. With Config.PrometheusURL (arbiter up --prometheus,
// arbiter coordinator --prometheus-url) it asks that Prometheus for each
// key panel of package monitoring over the last hour and shows the latest
// value and a sparkline (inline SVG); without one it says how to get one.

func init() {
	RegisterPage(Page{Name: "monitor", Pattern: "GET /monitor", Render: func(p *PageRequest) error { return p.s.monitorPage(p) }})
}

// monitorWindow and monitorStep are the sparklines' span and resolution.
const (
	monitorWindow = time.Hour
	monitorStep   = 30 * time.Second
)

type monitorData struct {
	Prometheus string
	Figures    []monitorFigure
}

// monitorFigure is one key panel: its figures (one, or one per series)
// or why there is none.
type monitorFigure struct {
	Title, Description, Expr string
	Rows                     []monitorRow
	Err                      string
}

type monitorRow struct {
	Name, Value string
	Spark       template.HTML
}

func (s *Server) monitorPage(p *PageRequest) error {
	p.Show("Monitor", nil, nil)
	p.v.Nav = "monitor"
	d := &monitorData{Prometheus: s.cfg.PrometheusURL}
	p.v.Page = d
	if d.Prometheus == "" {
		return nil
	}
	c := &monitoring.Client{URL: d.Prometheus}
	end := s.cfg.Now()
	for _, k := range monitoring.Key() {
		f := monitorFigure{Title: k.Title, Description: k.Description, Expr: k.Query(s.cfg.PrometheusScrape)}
		series, err := c.QueryRange(p.R.Context(), f.Expr, end.Add(-monitorWindow), end, monitorStep)
		switch {
		case err != nil:
			f.Err = err.Error()
		case len(series) == 0 && k.PerSeries:
			f.Err = "none running"
		case len(series) == 0:
			f.Err = "no data yet (a rate needs two scrapes)"
		}
		for _, sr := range series {
			name := ""
			if k.PerSeries {
				name = sr.Labels[k.Label]
			}
			f.Rows = append(f.Rows, monitorRow{Name: name, Value: figure(sr.Last()), Spark: sparkline(sr, end)})
		}
		d.Figures = append(d.Figures, f)
	}
	return nil
}

// figure shows a value: from 1000 up (and whole numbers) as whole
// numbers with grouped digits, others to three significant digits.
func figure(v float64) string {
	if (v == math.Trunc(v) || math.Abs(v) >= 1000) && math.Abs(v) < 1e18 {
		return group(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// sparkline draws a series over the monitor window ending at end.
func sparkline(s monitoring.Series, end time.Time) template.HTML {
	const w, h = 160.0, 28.0
	lo, hi := s.Values[0], s.Values[0]
	for _, v := range s.Values {
		lo, hi = min(lo, v), max(hi, v)
	}
	label := fmt.Sprintf("last hour: from %s to %s", figure(lo), figure(hi))
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	var pts []string
	for i, v := range s.Values {
		x := w * (1 - end.Sub(s.Times[i]).Seconds()/monitorWindow.Seconds())
		y := h - 2 - (h-4)*(v-lo)/(hi-lo)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	return template.HTML(fmt.Sprintf(`<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="%s"><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="%s"/></svg>`,
		w, h, w, h, label, strings.Join(pts, " ")))
}
