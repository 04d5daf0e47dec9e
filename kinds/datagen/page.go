package datagen

import (
	"embed"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The page of a DATAGEN dataset (/datagen/{id}): its engine and settings,
// the counts arbiter status prints, the workers' shares, and histograms
// of the kept positions' scores, game lengths and piece counts, all from
// the snapshot the gRPC API returns.

//go:embed templates/datagen.html
var pageTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "datagen", Templates: pageTemplates, Pattern: "GET /datagen/{id}", Followable: true, Render: renderPage})
}

type pageData struct {
	Job    *arbiterv1.Job
	Spec   *arbiterv1.DatagenSpec
	P      *DatagenJSON
	State  string
	Score  template.HTML
	Length template.HTML
	Pieces template.HTML
}

func renderPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	j, err := pr.Job(id, "a dataset", func(j *arbiterv1.Job) bool { return jobkind.Is(j, Family) })
	if err != nil {
		return err
	}
	d := DatagenOf(j)
	p := d.GetProgress()
	data := &pageData{Job: j, Spec: d.GetSpec(), P: newDatagenJob(j), State: pr.State(j),
		Score: barChart("score-hist", "Scores of the kept positions (White's view, centipawns)", p.GetScoreHistogram(), func(i int) string {
			switch {
			case i == 0:
				return "≤ -1000"
			case i == len(p.GetScoreHistogram())-1:
				return "≥ 1000"
			}
			return strconv.Itoa(i*100 - 1100)
		}),
		Length: barChart("length-hist", "Game lengths (plies)", p.GetLengthHistogram(), func(i int) string {
			if i == len(p.GetLengthHistogram())-1 {
				return fmt.Sprintf("≥ %d", i*20)
			}
			return strconv.Itoa(i * 20)
		}),
		Pieces: barChart("pieces-hist", "Pieces on the board of the kept positions", p.GetPiecesHistogram(), func(i int) string {
			return strconv.Itoa(i + 2)
		}),
	}
	pr.Show(fmt.Sprintf("Dataset %s: %s", id, d.GetSpec().GetEngine().GetName()), data, j)
	return nil
}

// barChart draws a histogram as an SVG of bars, each with its count in a
// title (a tooltip) and the first, middle and last labels below. Colours
// are SVG attributes: the pages' CSP allows no inline styles.
func barChart(id, caption string, counts []uint64, label func(int) string) template.HTML {
	if len(counts) == 0 {
		return ""
	}
	const w, h, bottom = 600.0, 160.0, 20.0
	peak := uint64(1)
	for _, c := range counts {
		peak = max(peak, c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<figure id="%s"><svg viewBox="0 0 %g %g" role="img" aria-label="%s" class="chart">`, id, w, h+bottom, template.HTMLEscapeString(caption))
	bw := w / float64(len(counts))
	for i, c := range counts {
		bh := (h - 4) * float64(c) / float64(peak)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4a7ab5" data-count="%d"><title>%s: %d</title></rect>`,
			float64(i)*bw+1, h-bh, bw-2, bh, c, template.HTMLEscapeString(label(i)), c)
	}
	for _, i := range []int{0, len(counts) / 2, len(counts) - 1} {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="currentColor">%s</text>`,
			(float64(i)+0.5)*bw, h+bottom-5, template.HTMLEscapeString(label(i)))
	}
	fmt.Fprintf(&b, `</svg><figcaption>%s</figcaption></figure>`, template.HTMLEscapeString(caption))
	return template.HTML(b.String())
}
