package coordinator

import (
	"context"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/obs"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// contractNames returns the metric names of the METRICS.md table rows in
// the section that starts with heading and ends at the next "## ".
func contractNames(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("../deploy/prometheus/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("METRICS.md has no %q section", heading)
	}
	s = s[i+len(heading):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("no metric rows under %q", heading)
	}
	return names
}

func newTestCoordinator(t *testing.T, reg prometheus.Registerer) *Coordinator {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := New(context.Background(), Config{Store: st, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestMetricsExposition lints the coordinator's registry as served (with
// the gRPC server metrics and the Go/process collectors), and checks that
// every coordinator metric of the contract (deploy/prometheus/METRICS.md)
// is exported, with every closed label set initialised at zero.
func TestMetricsExposition(t *testing.T) {
	reg := obs.NewRegistry()
	c := newTestCoordinator(t, reg)
	srv, _, err := c.NewGRPCServer(ServerConfig{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	// One running SPRT test and one match, as SPRTStates reports them.
	running := []SPRTState{
		{TestID: "s1", Kind: KindSPRT, LLR: 0.5, Lower: -2.94, Upper: 2.94, Pentanomial: [5]int64{1, 2, 3, 4, 5}},
		{TestID: "m1", Kind: KindMatch, Pentanomial: [5]int64{0, 1, 2, 1, 0}},
	}
	c.metrics.state.tests = func() []SPRTState { return running }

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, mf := range mfs {
		series[mf.GetName()] += len(mf.GetMetric())
	}
	terms := map[string]bool{}
	for _, n := range contractNames(t, "## Coordinator") {
		if !strings.HasPrefix(n, "arbiter_") && !strings.HasPrefix(n, "grpc_") {
			terms[n] = true // a row of the termination table
			if gameSeries[n] == nil {
				t.Errorf("termination %s of the contract has no initialised arbiter_games_total series", n)
			}
			continue
		}
		if series[n] == 0 {
			t.Errorf("contract metric %s is not exported", n)
		}
	}
	for term := range gameSeries {
		if !terms[term] {
			t.Errorf("termination %s is not in the contract", term)
		}
	}
	want := map[string]int{
		"arbiter_jobs":                   len(jobKinds) * len(jobStates),
		"arbiter_units":                  3,
		"arbiter_results_rejected_total": 5,
		"arbiter_sprt_pairs":             5,
		"grpc_server_handled_total":      1, // at least
		"go_goroutines":                  1,
		"process_cpu_seconds_total":      1,
	}
	for n, min := range want {
		if series[n] < min {
			t.Errorf("%s: %d series, want at least %d", n, series[n], min)
		}
	}
	if series["arbiter_sprt_llr"] != 1 || series["arbiter_sprt_elo"] != 2 || series["arbiter_sprt_pairs"] != 10 {
		t.Errorf("SPRT series: llr %d (want 1: the match has none), elo %d, pairs %d",
			series["arbiter_sprt_llr"], series["arbiter_sprt_elo"], series["arbiter_sprt_pairs"])
	}
	// The SPRT series go away with the test.
	running = nil
	mfs, _ = reg.Gather()
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "arbiter_sprt_") {
			t.Errorf("%s still exported after the tests ended", mf.GetName())
		}
	}
}

func TestPentanomialElo(t *testing.T) {
	if e := PentanomialElo(sprt.Pentanomial{}); e != 0 {
		t.Errorf("no pairs: %v", e)
	}
	if e := PentanomialElo(sprt.Pentanomial{0, 0, 10, 0, 0}); math.Abs(e) > 1e-9 {
		t.Errorf("even score: %v", e)
	}
	// Score 0.75 → 400·log10(3) ≈ 190.85 Elo.
	if e := PentanomialElo(sprt.Pentanomial{0, 0, 0, 10, 0}); math.Abs(e-190.848) > 0.01 {
		t.Errorf("score 0.75: %v", e)
	}
}

// TestObservePGNs labels games from real PGN text as match.WritePGN writes it.
func TestObservePGNs(t *testing.T) {
	m := newMetrics(nil, nil)
	pgns := []string{
		"[Event \"t\"]\n[Result \"0-1\"]\n[Termination \"normal\"]\n\n1. f3 e5 2. g4 {book} Qh4#\n{Black\nmates} 0-1\n\n",
		"[Result \"1/2-1/2\"]\n[Termination \"time forfeit\"]\n\n1. e4 {White loses on time, Black cannot mate} 1/2-1/2\n",
		"[Result \"*\"]\n[Termination \"unterminated\"]\n\n*\n",
	}
	m.observePGNs(pgns)
	for _, c := range []struct {
		res, term string
		want      float64
	}{{GameBlack, TermCheckmate, 1}, {GameDraw, TermTimeForfeit, 1}, {GameNone, TermAbandoned, 1}} {
		if got := testutil.ToFloat64(m.games.WithLabelValues(c.res, c.term)); got != c.want {
			t.Errorf("games{%s,%s} = %v, want %v", c.res, c.term, got, c.want)
		}
	}
	if r := pgnReason("1. e4 {a comment} e5 *"); r != "" {
		t.Errorf("reason from a move comment: %q", r)
	}
}

// TestStateGauges checks the scrape-time gauges against a real job.
func TestStateGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newTestCoordinator(t, reg)
	if _, err := c.SubmitPerft(context.Background(), nil); err == nil {
		t.Fatal("nil spec accepted")
	}
	c.metrics.reject(RejectImplausible)
	if got := testutil.ToFloat64(c.metrics.resultsRefused.WithLabelValues(RejectImplausible)); got != 1 {
		t.Errorf("implausible = %v", got)
	}
	job, err := c.SubmitPerft(context.Background(), perftSpec(4))
	if err != nil {
		t.Fatal(err)
	}
	units := int(job.GetProgress().GetUnitsTotal())
	expected := `
# HELP arbiter_units Work units of running jobs: waiting for a worker (queued), leased to one, finished (done).
# TYPE arbiter_units gauge
arbiter_units{state="done"} 0
arbiter_units{state="leased"} 0
arbiter_units{state="queued"} ` + itoa(units) + `
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "arbiter_units"); err != nil {
		t.Error(err)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "arbiter_jobs" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			want := 0.0
			if l["kind"] == "perft" && l["state"] == "running" {
				want = 1
			}
			if m.GetGauge().GetValue() != want {
				t.Errorf("arbiter_jobs%v = %v, want %v", l, m.GetGauge().GetValue(), want)
			}
		}
	}
}

func perftSpec(depth uint32) *arbiterv1.PerftSpec {
	return &arbiterv1.PerftSpec{Depth: depth}
}
