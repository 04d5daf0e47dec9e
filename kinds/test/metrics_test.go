package test

import (
	"context"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/wire/gamelabel"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// terminationContract returns the termination values of METRICS.md's
// table (the rows after "`termination` values").
func terminationContract(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../deploy/prometheus/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "`termination` values")
	if i < 0 {
		t.Fatal("METRICS.md has no termination table")
	}
	s = s[i:]
	if j := strings.Index(s, "\n#"); j >= 0 {
		s = s[:j]
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(s, -1) {
		out[m[1]] = true
	}
	if len(out) == 0 {
		t.Fatal("no termination rows in METRICS.md")
	}
	return out
}

// Every termination the wire can carry maps to a label of the contract,
// and every label of the contract is an initialised series.
func TestGameLabelsFollowTheContract(t *testing.T) {
	contract := terminationContract(t)
	for term := range gameSeries {
		if !contract[term] {
			t.Errorf("termination %s is not in METRICS.md", term)
		}
	}
	for term := range contract {
		if gameSeries[term] == nil {
			t.Errorf("termination %s of METRICS.md has no series", term)
		}
	}
	for v, name := range arbiterv1.GameTermination_name {
		term := arbiterv1.GameTermination(v)
		ok := false
		for r := range arbiterv1.GameResult_name {
			if _, got, valid := GameLabels(arbiterv1.GameResult(r), term); valid {
				ok = true
				if !contract[got] {
					t.Errorf("%s → %s, not in the contract", name, got)
				}
			}
		}
		if ok == (term == arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED) {
			t.Errorf("%s: labelled %v", name, ok)
		}
	}
	if r, term, ok := GameLabels(arbiterv1.GameResult_GAME_RESULT_DRAW, arbiterv1.GameTermination_GAME_TERMINATION_STALL); ok {
		t.Errorf("a draw by stall labelled %s/%s", r, term)
	}
}

// arbiter_games_total counts accepted games by their reported outcome, with
// every series at zero from the start; the SPRT gauges exist while a test
// runs. The registry passes the Prometheus linter.
func TestMetrics(t *testing.T) {
	e := newEnv(t, Config{})
	series := 0
	for _, rs := range gameSeries {
		series += len(rs)
	}
	if n := testutil.CollectAndCount(e.WL.metrics.games.Vec()); n != series {
		t.Fatalf("arbiter_games_total: %d series at start, want %d", n, series)
	}
	s := e.create(sprtSpec(2))
	m := e.create(matchSpec(100, 2, 4))
	a := e.Worker("a", 0)
	for _, id := range []string{s, m} {
		var g core.Grant
		for g.Lease.JobID != id {
			g = e.MustLease(a)
		}
		// A wins a game as White and loses one as Black (White mates
		// twice), then two draws by repetition.
		e.MustSubmit(a, g, pairsResult([2]sprt.Outcome{sprt.Win, sprt.Loss}, [2]sprt.Outcome{sprt.Draw, sprt.Draw}), core.Accepted)
	}
	games := e.WL.metrics.games.Vec()
	if w, d := testutil.ToFloat64(games.WithLabelValues(gamelabel.White, gamelabel.Checkmate)), testutil.ToFloat64(games.WithLabelValues(gamelabel.Draw, gamelabel.Repetition)); w != 4 || d != 4 {
		t.Fatalf("white/checkmate %v, draw/repetition %v; want 4 and 4", w, d)
	}
	problems, err := testutil.GatherAndLint(e.Reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	count := func(name string) int {
		mfs, err := e.Reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				return len(mf.GetMetric())
			}
		}
		return 0
	}
	if count("arbiter_sprt_llr") != 1 || count("arbiter_sprt_elo") != 2 || count("arbiter_sprt_pairs") != 10 || count("arbiter_sprt_games") != 2 {
		t.Fatalf("SPRT series: llr %d (the match has none), elo %d, pairs %d", count("arbiter_sprt_llr"), count("arbiter_sprt_elo"), count("arbiter_sprt_pairs"))
	}
	for _, id := range []string{s, m} {
		if err := e.C.Cancel(context.Background(), carol, id, "done"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"arbiter_sprt_llr", "arbiter_sprt_elo", "arbiter_sprt_pairs", "arbiter_sprt_games"} {
		if n := count(name); n != 0 {
			t.Errorf("%s: %d series after the tests ended", name, n)
		}
	}
	st := e.WL.Stats()
	if st.Jobs[core.JobKey{Kind: KindSPRT, State: "cancelled"}] != 1 || st.Jobs[core.JobKey{Kind: KindMatch, State: "cancelled"}] != 1 ||
		len(st.Jobs) != 2*len(core.JobStates) {
		t.Fatalf("stats: %+v", st)
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
