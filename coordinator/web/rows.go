package web

import (
	"html"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The long tables (every worker of a farm, every worker of a test) are
// written here rather than by html/template: its reflection costs about a
// microsecond a field, which for 500 workers alone takes a page past its
// 50 ms budget (BenchmarkPages). Everything written is escaped by esc.

type rowsHTML struct{ strings.Builder }

// raw writes markup.
func (b *rowsHTML) raw(parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// esc writes text, escaped for element content and quoted attributes.
func (b *rowsHTML) esc(s string) { b.WriteString(html.EscapeString(s)) }

func (b *rowsHTML) html() template.HTML { return template.HTML(b.String()) }

// cell writes a <td> with a class and a data-field ("" for none) holding
// escaped text.
func (b *rowsHTML) cell(class, field, text string) {
	b.raw("<td")
	if class != "" {
		b.raw(` class="`, class, `"`)
	}
	if field != "" {
		b.raw(` data-field="`, field, `"`)
	}
	b.raw(">")
	b.esc(text)
	b.raw("</td>")
}

func itoa(n int64) string     { return strconv.FormatInt(n, 10) }
func utoa(n uint64) string    { return strconv.FormatUint(n, 10) }
func ugroupS(n uint64) string { return group(utoa(n)) }

// workersRows renders the workers page's rows.
func workersRows(ws []workerView, now time.Time) template.HTML {
	var b rowsHTML
	b.Grow(len(ws) * 700)
	for i := range ws {
		w := &ws[i]
		b.raw(`<tr data-worker="`)
		b.esc(w.ID)
		b.raw(`"`)
		if !w.Live {
			b.raw(` class="idle"`)
		}
		b.raw("><td>")
		b.esc(w.ID)
		b.raw(` <span class="muted">`)
		b.esc(w.Name)
		b.raw("</span>")
		if w.Blocked != "" {
			b.raw(` <strong class="warn" data-field="blocked" title="`)
			b.esc(w.Blocked)
			b.raw(`">blocked</strong>`)
		}
		b.raw("</td>")
		b.cell("", "owner", w.Owner)
		b.cell("num", "cores", utoa(uint64(w.Caps.Cores)))
		b.cell("", "", orDash(w.Caps.Platform))
		b.cell("num", "bench_nps", ugroupS(w.Caps.BenchNPS))
		b.raw(`<td data-field="running">`)
		for k, j := range w.Jobs {
			if k > 0 {
				b.raw(", ")
			}
			b.raw(`<a href="/jobs/`, url.PathEscape(j), `">`)
			b.esc(j)
			b.raw("</a>")
		}
		if w.Verifying > 0 {
			if len(w.Jobs) > 0 {
				b.raw(", ")
			}
			b.raw(itoa(int64(w.Verifying)), " verify units")
		}
		if len(w.Jobs) == 0 && w.Verifying == 0 {
			b.raw("idle")
		}
		b.raw("</td>")
		b.cell("", "", ago(now, w.LastSeen))
		b.cell("num", "games", itoa(w.Activity.Games))
		b.cell("num", "incidents", itoa(w.Activity.Incidents))
		b.raw("<td>")
		if len(w.Activity.Excluded) > 0 || len(w.BarredTunes) == 0 {
			testLinks(&b, w.Activity.Excluded)
		}
		if len(w.Activity.FarOff) > 0 {
			b.raw(` <strong class="warn" data-field="far-off">results far off in `)
			testLinks(&b, w.Activity.FarOff)
			b.raw("</strong>")
		}
		for k, id := range w.BarredTunes {
			if k > 0 || len(w.Activity.Excluded) > 0 {
				b.raw(", ")
			}
			b.raw(`tune <a href="/tunes/`, url.PathEscape(id), `">`)
			b.esc(id)
			b.raw("</a>")
		}
		b.raw("</td></tr>\n")
	}
	return b.html()
}

func testLinks(b *rowsHTML, ids []string) {
	if len(ids) == 0 {
		b.raw("-")
		return
	}
	for k, t := range ids {
		if k > 0 {
			b.raw(", ")
		}
		b.raw(`<a href="/tests/`, url.PathEscape(t), `">`)
		b.esc(t)
		b.raw("</a>")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// gameWorkerRows renders the per-worker table rows of a test's or a tune's page.
func gameWorkerRows(rows []workerRow) template.HTML {
	var b rowsHTML
	b.Grow(len(rows) * 600)
	for _, w := range rows {
		b.raw(`<tr data-worker="`)
		b.esc(w.GetWorkerId())
		b.raw(`"><td>`)
		b.esc(w.GetWorkerId())
		if w.GetName() != "" {
			b.raw(` <span class="muted">`)
			b.esc(w.GetName())
			b.raw("</span>")
		}
		b.raw("</td>")
		b.cell("", "", orDash(w.Owner))
		b.cell("num", "bench_nps", ugroupS(w.GetBenchNps()))
		sig := "-"
		if w.BenchSig != 0 {
			sig = utoa(w.BenchSig)
		}
		b.cell("num", "", sig)
		b.cell("num", "time_scale", strconv.FormatFloat(w.GetTimeScale(), 'f', 2, 64))
		b.cell("num", "games", utoa(w.GetGames()))
		b.cell("num", "", utoa(w.GetTimeLosses()))
		b.cell("num", "", utoa(w.GetCrashes()))
		b.cell("num", "", utoa(w.GetIllegalMoves()))
		b.cell("num", "", utoa(w.GetDisconnects()))
		b.cell("num", "", utoa(w.GetOther()))
		if w.GetHasResidual() {
			b.cell("num", "residual", strconv.FormatFloat(w.GetResidual(), 'f', 2, 64))
		} else {
			b.cell("num", "residual", "-")
		}
		if w.GetExcluded() {
			b.raw(`<td><span class="state st-failed">excluded</span> `)
			b.esc(w.GetReason())
			b.raw("</td>")
		} else {
			b.raw("<td>ok</td>")
		}
		b.raw("</tr>\n")
	}
	return b.html()
}
