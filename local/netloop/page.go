package netloop

// The loop's page: DIR/index.html, written again whenever a step starts or
// ends, so a browser pointed at the file (or at a web server serving DIR)
// follows the loop. It is made from Status alone: what the page shows is
// what --status shows.

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

//go:embed page/index.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"short": short,
	"took": func(r *Result) string {
		d := r.Finished.Sub(r.Started)
		if d < 10*time.Second {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(time.Second).String()
	},
	"lastEpoch": func(r *Result) Epoch { return r.Epochs[len(r.Epochs)-1] },
	"lossChart": lossChart,
	"llrBar":    llrBar,
	"signed":    func(x float64) string { return fmt.Sprintf("%+.1f", x) },
	"from": func(g GenerationStatus) string {
		switch {
		case g.From.SHA == "":
			return "the best net then"
		case g.From.Gen > 0:
			return fmt.Sprintf("generation %d's net %s", g.From.Gen, short(g.From.SHA))
		}
		return "the embedded net " + short(g.From.SHA)
	},
}).Parse(pageText))

// PageFile is the page's name in the loop's directory.
const PageFile = "index.html"

// WriteHTML writes the loop's page. While the loop is not done the page
// reloads itself every refresh (none when zero).
func (st Status) WriteHTML(w io.Writer, refresh time.Duration) error {
	var buf bytes.Buffer
	err := pageTemplate.Execute(&buf, struct {
		Status
		Refresh int
		Written string
	}{st, int(refresh.Seconds()), time.Now().UTC().Format("2006-01-02 15:04:05 UTC")})
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// writePage writes DIR/index.html from the plan p, with the step of key
// running shown as running (atomically: a reader never sees half a page). A page that cannot be written is said once on
// Out and does not stop the loop: the page follows the loop, it is not
// part of it.
func (r *Runner) writePage(p Plan, running string) {
	var buf bytes.Buffer
	st := StatusOf(r.Dir, r.Settings, r.Generations, p)
	st.markRunning(running)
	if err := st.WriteHTML(&buf, 30*time.Second); err == nil {
		err = writeAtomic(r.Dir.path(PageFile), buf.Bytes())
		if err == nil {
			return
		}
		if !r.pageFailed {
			fmt.Fprintf(r.Out, "net loop: the page %s: %v (the loop goes on)\n", r.Dir.path(PageFile), err)
		}
	}
	r.pageFailed = true
}

// markRunning shows the step of key as running (it has started and has
// no result: StatusOf, which reads the directory alone, says stopped).
func (st *Status) markRunning(key string) {
	if key == "" {
		return
	}
	for i := range st.Generations {
		g := &st.Generations[i]
		for _, s := range []*StepStatus{&g.Datagen, &g.Train, &g.SPRT} {
			if s.Key == key && s.State == "stopped" {
				s.State = "running"
			}
		}
	}
}

// lossChart draws a training's losses an epoch, train and validation, as
// an inline SVG (two polylines on a shared scale).
func lossChart(r *Result) template.HTML {
	const w, h, pad = 240.0, 80.0, 4.0
	if len(r.Epochs) < 2 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, e := range r.Epochs {
		lo = math.Min(lo, math.Min(e.TrainLoss, e.ValLoss))
		hi = math.Max(hi, math.Max(e.TrainLoss, e.ValLoss))
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	line := func(of func(Epoch) float64) string {
		pts := make([]string, len(r.Epochs))
		for i, e := range r.Epochs {
			x := pad + (w-2*pad)*float64(i)/float64(len(r.Epochs)-1)
			y := pad + (h-2*pad)*(hi-of(e))/(hi-lo)
			pts[i] = fmt.Sprintf("%.1f,%.1f", x, y)
		}
		return strings.Join(pts, " ")
	}
	return template.HTML(fmt.Sprintf(`<svg class="loss" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="loss an epoch: train (solid) from %.6f to %.6f, validation (dashed) from %.6f to %.6f">`+
		`<polyline class="train" fill="none" stroke="#1f6feb" stroke-width="1.5" points="%s"/>`+
		`<polyline class="val" fill="none" stroke="#d1242f" stroke-width="1.5" stroke-dasharray="4 2" points="%s"/></svg>`,
		w, h, w, h, r.Epochs[0].TrainLoss, r.Epochs[len(r.Epochs)-1].TrainLoss, r.Epochs[0].ValLoss, r.Epochs[len(r.Epochs)-1].ValLoss,
		line(func(e Epoch) float64 { return e.TrainLoss }), line(func(e Epoch) float64 { return e.ValLoss })))
}

// llrBar shows the LLR between its bounds as a meter.
func llrBar(s *SPRTResult) template.HTML {
	return template.HTML(fmt.Sprintf(`<meter min="%.2f" max="%.2f" value="%.2f" title="LLR %.2f in (%.2f, %.2f)"></meter>`,
		s.Lower, s.Upper, math.Max(s.Lower, math.Min(s.Upper, s.LLR)), s.LLR, s.Lower, s.Upper))
}
