package coordinator

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/obs"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	_ "github.com/arbiter-chess/arbiter/kinds/install" // the kinds whose metrics are in the contract
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
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

// TestMetricsExposition lints the coordinator's registry as served (core,
// workloads, gRPC server, Go and process collectors) with a running SPRT
// test and a running match, and checks that every coordinator metric of
// the contract (deploy/prometheus/METRICS.md) is exported, with every
// closed label set initialised at zero.
func TestMetricsExposition(t *testing.T) {
	reg := obs.NewRegistry()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c, err := New(ctx, Config{Store: st, Token: "t", Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, _, err := c.NewGRPCServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	test := func(sprt bool) *arbiterv1.MatchSpec {
		s := &arbiterv1.MatchSpec{
			EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded"},
			EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
			TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{MoveTime: durationpb.New(1e7)}},
			Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}},
			Games:       10,
		}
		if sprt {
			s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 5}
		}
		return s
	}
	for _, sprt := range []bool{true, false} {
		if _, err := c.Core.Create(ctx, identity.Bootstrap, testview.Kind, test(sprt)); err != nil {
			t.Fatal(err)
		}
	}

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
	for _, n := range contractNames(t, "## Coordinator") {
		if !strings.HasPrefix(n, "arbiter_") && !strings.HasPrefix(n, "grpc_") {
			continue // a row of the termination table
		}
		if series[n] == 0 {
			t.Errorf("contract metric %s is not exported", n)
		}
	}
	want := map[string]int{
		"arbiter_jobs":                   3 * 4,
		"arbiter_units":                  3,
		"arbiter_results_rejected_total": 7,
		"arbiter_results_total":          4,
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
		t.Errorf("SPRT series: llr %d (want 1: the match has none), elo %d (want 2), pairs %d (want 10)",
			series["arbiter_sprt_llr"], series["arbiter_sprt_elo"], series["arbiter_sprt_pairs"])
	}
	// The SPRT series go away with the tests.
	snaps, _ := c.Core.Jobs(10, nil)
	for _, s := range snaps {
		if err := c.Core.Cancel(ctx, identity.Bootstrap, s.(*arbiterv1.Job).GetJobId(), "test over"); err != nil {
			t.Fatal(err)
		}
	}
	mfs, _ = reg.Gather()
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "arbiter_sprt_") {
			t.Errorf("%s still exported after the tests ended", mf.GetName())
		}
	}
}
