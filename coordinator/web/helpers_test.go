package web

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func TestFormatting(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "8902": "8902", "197281": "197\u202f281", "-1234567": "-1\u202f234\u202f567",
		"2015099950053364471960": "2\u202f015\u202f099\u202f950\u202f053\u202f364\u202f471\u202f960"} {
		if got := group(in); got != want {
			t.Errorf("group(%s) = %q, want %q", in, got, want)
		}
	}
	if got := ticks(-2.94, 2.94, 5); len(got) < 3 || got[0] < -2.94 || got[len(got)-1] > 2.94 {
		t.Errorf("ticks: %v", got)
	}
	if got := mnps("3195901860", 0); got != "-" {
		t.Errorf("mnps over no time: %s", got)
	}
	// The LLR mark stays on the bar whatever the LLR.
	for _, llr := range []float64{-10, 0, 10} {
		bar := string(llrBar(&arbiterv1.MatchProgress{Llr: llr, LowerBound: -2.94, UpperBound: 2.94}))
		if !strings.Contains(bar, `role="img"`) || strings.Contains(bar, `x="-`) || strings.Contains(bar, "NaN") {
			t.Errorf("LLR %v: %s", llr, bar)
		}
	}
	if llrChart([]testview.HistoryPoint{{}}, -2.94, 2.94) != "" || eloChart(nil) != "" {
		t.Error("charts of no games drawn")
	}
	pts := []testview.HistoryPoint{{}, {Games: 10, LLR: 0.5, Elo: 30, EloLow: -100, EloHigh: 160}, {Games: 20, LLR: -3.5, Elo: -5, EloLow: -60, EloHigh: 50}}
	for _, svg := range []string{string(llrChart(pts, -2.94, 2.94)), string(eloChart(pts))} {
		if !strings.Contains(svg, "<polyline") || strings.Contains(svg, "NaN") || !strings.Contains(svg, "<title") {
			t.Errorf("chart: %.300s", svg)
		}
	}
	p := &arbiterv1.SpsaParamState{Name: "Margin<1>", Start: 75, Min: 20, Max: 300, Trajectory: []float64{75, 77.5, 80.25, 79}}
	traj := string(trajectoryChart(3, p, []uint64{0, 2, 4, 5}))
	for _, want := range []string{`id="traj3-t"`, "Margin&lt;1&gt; against updates", "from 75 at the start to 79 after 5 updates (range 20 to 300)",
		">updates</text>", "start 75", "<polyline"} {
		if !strings.Contains(traj, want) {
			t.Errorf("trajectory chart: no %q in %.400s", want, traj)
		}
	}
	if strings.Contains(traj, "NaN") || strings.Contains(traj, "Margin<1>") {
		t.Errorf("trajectory chart: %.400s", traj)
	}
	if trajectoryChart(0, &arbiterv1.SpsaParamState{Trajectory: []float64{1}}, []uint64{0}) != "" {
		t.Error("trajectory of no update drawn")
	}
	if b := boardSVG("not a fen", "", 30); b != "" {
		t.Error("board of a bad FEN drawn")
	}
	if b := string(boardSVG(engine.StartFEN, "e2e4", 30)); strings.Count(b, "<text") != 32+16 || !strings.Contains(b, "White to move") {
		t.Errorf("start board: %d texts", strings.Count(b, "<text"))
	}
}

// A server-sent event keeps every line of its data; a carriage return in
// the data cannot end a line early.
func TestWriteEvent(t *testing.T) {
	w := httptest.NewRecorder()
	writeEvent(w, "update", "<p>a</p>\n<p>b\rc</p>")
	if got := w.Body.String(); got != "event: update\ndata: <p>a</p>\ndata: <p>bc</p>\n\n" {
		t.Fatalf("event: %q", got)
	}
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{"/tests/x": "/tests/x", "//evil.example": "/", "https://evil.example": "/", "/\\evil": "/", "": "/"} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
	for host, want := range map[string]bool{"127.0.0.1:80": true, "localhost:7701": true, "[::1]:7701": true, "coord.example:7701": false, "10.0.0.1": false} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v", host, got)
		}
	}
}

// The workers' "excluded from" cell: tests and tunes linked, a dash for
// none.
func TestWorkersRowsExcludedFrom(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	cell := func(tests, tunes []string) string {
		w := workerView{WorkerView: core.WorkerView{ID: "w1", Name: "box", LastSeen: now}, Live: true, BarredTunes: tunes}
		w.Activity.Excluded = tests
		row := string(workersRows([]workerView{w}, now))
		i := strings.LastIndex(row, "<td>")
		return row[i+len("<td>") : strings.LastIndex(row, "</td>")]
	}
	for _, c := range []struct {
		tests, tunes []string
		want         string
	}{
		{nil, nil, "-"},
		{[]string{"t1"}, nil, `<a href="/tests/t1">t1</a>`},
		{nil, []string{"s1", "s2"}, `tune <a href="/tunes/s1">s1</a>, tune <a href="/tunes/s2">s2</a>`},
		{[]string{"t1"}, []string{"s<1"}, `<a href="/tests/t1">t1</a>, tune <a href="/tunes/s%3C1">s&lt;1</a>`},
	} {
		if got := cell(c.tests, c.tunes); got != c.want {
			t.Errorf("excluded from tests %v, tunes %v: %q, want %q", c.tests, c.tunes, got, c.want)
		}
	}
}

// exact is x as a tune's snapshot holds it (the data-value the tune page
// writes, kinds/spsa).
func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
