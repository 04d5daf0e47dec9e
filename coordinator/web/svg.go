package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Pictures are inline SVG written here: a handful of lines each, no
// script, readable by screen readers through role="img" and a label that
// says what the picture shows in words.

func ff(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// llrBar is the LLR between its bounds as a small bar: the track spans
// [lower, upper], the mark sits at the LLR (clamped).
func llrBar(mp *arbiterv1.MatchProgress) template.HTML {
	lo, hi, llr := mp.GetLowerBound(), mp.GetUpperBound(), mp.GetLlr()
	if hi <= lo {
		return ""
	}
	const w, h = 120.0, 14.0
	x := (min(max(llr, lo), hi) - lo) / (hi - lo) * w
	zero := (0 - lo) / (hi - lo) * w
	color := "#1f5fa8"
	switch mp.GetSprtState() {
	case "accepted":
		color = "#17692e"
	case "rejected":
		color = "#a3211b"
	}
	label := fmt.Sprintf("LLR %.2f between %.2f and %.2f", llr, lo, hi)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="llrbar" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`, int(w), int(h), int(w), int(h), html.EscapeString(label))
	fmt.Fprintf(&b, `<rect x="0" y="4" width="%s" height="6" rx="3" fill="#d9dee5"/>`, ff(w))
	fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="2" y2="12" stroke="#59636e" stroke-width="1"/>`, ff(zero), ff(zero))
	fmt.Fprintf(&b, `<rect x="%s" y="1" width="4" height="12" rx="1" fill="%s"/>`, ff(max(0, min(x-2, w-4))), color)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// progressBar shows done of total.
func progressBar(done, total uint64) template.HTML {
	if total == 0 {
		return ""
	}
	const w, h = 120.0, 10.0
	frac := min(float64(done)/float64(total), 1)
	return template.HTML(fmt.Sprintf(`<svg class="progress" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%d of %d done">`+
		`<rect x="0" y="0" width="%s" height="%s" rx="3" fill="#d9dee5"/><rect x="0" y="0" width="%s" height="%s" rx="3" fill="#1f5fa8"/></svg>`,
		int(w), int(h), int(w), int(h), done, total, ff(w), ff(h), ff(w*frac), ff(h)))
}

// chart is a line chart against games (or against xLabel).
type chart struct {
	id            string
	title, desc   string
	xLabel        string // "" for games
	xWhole        bool   // x counts something whole (updates): no ticks between
	yLabel        string
	xMax          float64
	yMin, yMax    float64
	width, height float64
}

const (
	chartLeft, chartRight, chartTop, chartBottom = 52.0, 12.0, 12.0, 34.0
)

func (c *chart) x(games float64) float64 {
	return chartLeft + games/c.xMax*(c.width-chartLeft-chartRight)
}

func (c *chart) y(v float64) float64 {
	v = min(max(v, c.yMin), c.yMax)
	return c.height - chartBottom - (v-c.yMin)/(c.yMax-c.yMin)*(c.height-chartTop-chartBottom)
}

// ticks returns about n round values spanning [lo, hi].
func ticks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if span <= 0 {
		return []float64{lo}
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= float64(n) {
			step *= m
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

func tickLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	// Six digits: a tick reached by adding steps carries rounding error
	// (0.30000000000000004).
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// open starts the SVG with axes, grid and labels.
func (c *chart) open(b *strings.Builder) {
	fmt.Fprintf(b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-t %s-d">`,
		int(c.width), int(c.height), int(c.width), int(c.height), c.id, c.id)
	fmt.Fprintf(b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, c.id, html.EscapeString(c.title), c.id, html.EscapeString(c.desc))
	fmt.Fprintf(b, `<defs><clipPath id="%s-clip"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`, c.id,
		ff(chartLeft), ff(chartTop), ff(c.width-chartLeft-chartRight), ff(c.height-chartTop-chartBottom))
	bottom, right := c.height-chartBottom, c.width-chartRight
	for _, v := range ticks(c.yMin, c.yMax, 5) {
		y := c.y(v)
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#e3e7ec"/>`, ff(chartLeft), ff(right), ff(y), ff(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" font-size="11" fill="#3d4651">%s</text>`, ff(chartLeft-6), ff(y+4), tickLabel(v))
	}
	for _, v := range ticks(0, c.xMax, 6) {
		if c.xWhole && v != math.Trunc(v) {
			continue
		}
		x := c.x(v)
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#e3e7ec"/>`, ff(x), ff(x), ff(chartTop), ff(bottom))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" font-size="11" fill="#3d4651">%s</text>`, ff(x), ff(bottom+15), tickLabel(v))
	}
	fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#59636e"/>`, ff(chartLeft), ff(right), ff(bottom), ff(bottom))
	fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#59636e"/>`, ff(chartLeft), ff(chartLeft), ff(chartTop), ff(bottom))
	xLabel := c.xLabel
	if xLabel == "" {
		xLabel = "games"
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" font-size="11" fill="#3d4651">%s</text>`, ff((chartLeft+right)/2), ff(c.height-4),
		html.EscapeString(xLabel))
	fmt.Fprintf(b, `<text x="12" y="%s" text-anchor="middle" font-size="11" fill="#3d4651" transform="rotate(-90 12 %s)">%s</text>`,
		ff((chartTop+bottom)/2), ff((chartTop+bottom)/2), html.EscapeString(c.yLabel))
}

func (c *chart) hline(b *strings.Builder, v float64, color, label string) {
	y := c.y(v)
	fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-dasharray="5 4" stroke-width="1.5"/>`,
		ff(chartLeft), ff(c.width-chartRight), ff(y), ff(y), color)
	if label != "" {
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" font-size="11" fill="%s">%s</text>`, ff(c.width-chartRight-4), ff(y-4), color, html.EscapeString(label))
	}
}

func (c *chart) polyline(b *strings.Builder, pts []testview.HistoryPoint, val func(testview.HistoryPoint) float64, color string) {
	fmt.Fprintf(b, `<polyline clip-path="url(#%s-clip)" fill="none" stroke="%s" stroke-width="2" points="`, c.id, color)
	for _, p := range pts {
		fmt.Fprintf(b, "%s,%s ", ff(c.x(float64(p.Games))), ff(c.y(val(p))))
	}
	b.WriteString(`"/>`)
}

// line draws the points (xs[i], ys[i]).
func (c *chart) line(b *strings.Builder, xs, ys []float64, color string) {
	fmt.Fprintf(b, `<polyline clip-path="url(#%s-clip)" fill="none" stroke="%s" stroke-width="2" points="`, c.id, color)
	for i := range xs {
		b.WriteString(ff(c.x(xs[i])))
		b.WriteByte(',')
		b.WriteString(ff(c.y(ys[i])))
		b.WriteByte(' ')
	}
	b.WriteString(`"/>`)
}

// llrChart is the LLR against games with its bounds.
func llrChart(pts []testview.HistoryPoint, lower, upper float64) template.HTML {
	if len(pts) < 2 {
		return ""
	}
	last := pts[len(pts)-1]
	c := &chart{id: "llr", width: 640, height: 240, yLabel: "LLR", xMax: float64(max(last.Games, 1)),
		title: "LLR against games",
		desc: fmt.Sprintf("The log-likelihood ratio after %d games is %.2f; the test stops at %.2f (H0) or %.2f (H1).",
			last.Games, last.LLR, lower, upper)}
	c.yMin, c.yMax = lower, upper
	for _, p := range pts {
		c.yMin, c.yMax = min(c.yMin, p.LLR), max(c.yMax, p.LLR)
	}
	pad := (c.yMax - c.yMin) * 0.08
	c.yMin, c.yMax = c.yMin-pad, c.yMax+pad
	var b strings.Builder
	c.open(&b)
	c.hline(&b, upper, "#17692e", fmt.Sprintf("H1 %.2f", upper))
	c.hline(&b, lower, "#a3211b", fmt.Sprintf("H0 %.2f", lower))
	c.polyline(&b, pts, func(p testview.HistoryPoint) float64 { return p.LLR }, "#1f5fa8")
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// eloChart is Elo with its 95% interval against games. The vertical range
// follows the later points, whose intervals are narrow; the early wide
// ones are clipped.
func eloChart(pts []testview.HistoryPoint) template.HTML {
	var with []testview.HistoryPoint
	for _, p := range pts {
		if p.Games > 0 {
			with = append(with, p)
		}
	}
	if len(with) < 2 {
		return ""
	}
	last := with[len(with)-1]
	c := &chart{id: "elo", width: 640, height: 240, yLabel: "Elo", xMax: float64(last.Games),
		title: "Elo and its 95% interval against games",
		desc: fmt.Sprintf("After %d games the Elo difference is %.1f, 95%% interval [%.1f, %.1f].",
			last.Games, last.Elo, last.EloLow, last.EloHigh)}
	c.yMin, c.yMax = math.Min(0, last.EloLow), math.Max(0, last.EloHigh)
	for _, p := range with {
		if p.Games*4 >= last.Games {
			c.yMin, c.yMax = min(c.yMin, p.EloLow), max(c.yMax, p.EloHigh)
		}
	}
	pad := max((c.yMax-c.yMin)*0.1, 1)
	c.yMin, c.yMax = c.yMin-pad, c.yMax+pad
	var b strings.Builder
	c.open(&b)
	fmt.Fprintf(&b, `<polygon clip-path="url(#%s-clip)" fill="#c9dbf0" stroke="none" points="`, c.id)
	for _, p := range with {
		fmt.Fprintf(&b, "%s,%s ", ff(c.x(float64(p.Games))), ff(c.y(p.EloHigh)))
	}
	for i := len(with) - 1; i >= 0; i-- {
		p := with[i]
		fmt.Fprintf(&b, "%s,%s ", ff(c.x(float64(p.Games))), ff(c.y(p.EloLow)))
	}
	b.WriteString(`"/>`)
	c.hline(&b, 0, "#59636e", "")
	c.polyline(&b, with, func(p testview.HistoryPoint) float64 { return p.Elo }, "#1f5fa8")
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// trajectoryChart is one parameter of a tune against updates: its value
// at each trajectory point, with its start as a dashed line. The vertical
// range follows the trajectory (the parameter's [min, max] is usually far
// wider than where it moves) and is shown in the description. n numbers
// the chart's ids on the page.
func trajectoryChart(n int, p *arbiterv1.SpsaParamState, updates []uint64) template.HTML {
	traj := p.GetTrajectory()
	if len(traj) < 2 || len(traj) != len(updates) {
		return ""
	}
	last := updates[len(updates)-1]
	c := &chart{id: "traj" + strconv.Itoa(n), width: 460, height: 200, xLabel: "updates", xWhole: true, yLabel: p.GetName(),
		xMax: float64(max(last, 1)), title: p.GetName() + " against updates",
		desc: fmt.Sprintf("%s went from %s at the start to %s after %d updates (range %s to %s).", p.GetName(),
			ParamValue(p, p.GetStart()), ParamValue(p, traj[len(traj)-1]), last, ParamValue(p, p.GetMin()), ParamValue(p, p.GetMax()))}
	c.yMin, c.yMax = p.GetStart(), p.GetStart()
	for _, v := range traj {
		c.yMin, c.yMax = min(c.yMin, v), max(c.yMax, v)
	}
	pad := max((c.yMax-c.yMin)*0.1, math.Abs(p.GetStart())*0.01, 1e-6)
	c.yMin, c.yMax = max(c.yMin-pad, p.GetMin()), min(c.yMax+pad, p.GetMax())
	if c.yMax <= c.yMin {
		c.yMin, c.yMax = p.GetMin(), p.GetMax()
	}
	xs := make([]float64, len(updates))
	for i, u := range updates {
		xs[i] = float64(u)
	}
	var b strings.Builder
	b.Grow(2000 + 16*len(xs))
	c.open(&b)
	c.hline(&b, p.GetStart(), "#59636e", "start "+ParamValue(p, p.GetStart()))
	c.line(&b, xs, traj, "#1f5fa8")
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// pieceGlyphs are the solid chess symbols, drawn white or black.
var pieceGlyphs = map[engine.PieceType]string{engine.King: "♚", engine.Queen: "♛", engine.Rook: "♜",
	engine.Bishop: "♝", engine.Knight: "♞", engine.Pawn: "♟\ufe0e"}

// boardSVG draws the position of fen, White at the bottom, with the
// squares of the move last (UCI, "" for none) marked. A FEN that does not
// parse draws nothing.
func boardSVG(fen, last string, sq int) template.HTML {
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return ""
	}
	var from, to engine.Square = engine.NoSquare, engine.NoSquare
	if len(last) >= 4 {
		if f, ok := engine.ParseSquare(last[0:2]); ok {
			from = f
		}
		if t, ok := engine.ParseSquare(last[2:4]); ok {
			to = t
		}
	}
	margin := 16
	size := 8*sq + margin
	side := "White"
	if pos.SideToMove() == engine.Black {
		side = "Black"
	}
	// Written with strconv rather than fmt: a verify page draws dozens.
	var b strings.Builder
	b.Grow(6000)
	n := strconv.Itoa
	fmt.Fprintf(&b, `<svg class="board" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`, size, size, size, size,
		html.EscapeString("Chess position: "+pos.FEN()+" ("+side+" to move)"))
	sqs := n(sq)
	for rank := 7; rank >= 0; rank-- {
		for file := 0; file < 8; file++ {
			s := engine.MakeSquare(file, rank)
			x, y := n(margin+file*sq), n((7-rank)*sq)
			color := "#f0d9b5"
			if (file+rank)%2 == 0 {
				color = "#b58863"
			}
			b.WriteString(`<rect x="` + x + `" y="` + y + `" width="` + sqs + `" height="` + sqs + `" fill="` + color + `"/>`)
			if s == from || s == to {
				b.WriteString(`<rect x="` + x + `" y="` + y + `" width="` + sqs + `" height="` + sqs + `" fill="#f6e05e" fill-opacity="0.55"/>`)
			}
			pc := pos.PieceAt(s)
			if pc == engine.NoPiece {
				continue
			}
			fill, stroke := "#111", "none"
			if pc.Color() == engine.White {
				fill, stroke = "#fff", "#111"
			}
			b.WriteString(`<text x="` + n(margin+file*sq+sq/2) + `" y="` + n((7-rank)*sq+sq*82/100) + `" font-size="` + n(sq*86/100) +
				`" text-anchor="middle" fill="` + fill + `" stroke="` + stroke + `" stroke-width="1.2">` + pieceGlyphs[pc.Type()] + `</text>`)
		}
	}
	for i := 0; i < 8; i++ {
		b.WriteString(`<text x="` + n(margin+i*sq+sq/2) + `" y="` + n(8*sq+12) + `" font-size="11" text-anchor="middle" fill="#3d4651">` +
			string(rune('a'+i)) + `</text>`)
		b.WriteString(`<text x="7" y="` + n((7-i)*sq+sq/2+4) + `" font-size="11" text-anchor="middle" fill="#3d4651">` + n(i+1) + `</text>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
