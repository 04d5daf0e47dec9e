package worker

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestMetricsExposition lints a worker's registry and checks it exports
// every worker metric of deploy/prometheus/METRICS.md.
func TestMetricsExposition(t *testing.T) {
	conn, err := grpc.NewClient("passthrough:///unused", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := prometheus.NewRegistry()
	w, err := New(Config{Conn: conn, Threads: 2, HashMB: 1, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	w.metrics.leaseCall(time.Now(), 0, &arbiterv1.LeaseResponse{}, nil)
	w.GamePlayed()
	w.EngineRestarted()
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	b, err := os.ReadFile("../deploy/prometheus/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	s = s[strings.Index(s, "## Worker"):]
	s = s[:strings.Index(s, "\n## ")]
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(s, -1)
	if len(rows) == 0 {
		t.Fatal("no worker rows in METRICS.md")
	}
	for _, m := range rows {
		if !have[m[1]] {
			t.Errorf("contract metric %s is not exported", m[1])
		}
	}
	if got := testutil.ToFloat64(w.metrics.games); got != 1 {
		t.Errorf("games = %v", got)
	}
	if err := w.Ready(); err == nil {
		t.Error("an unregistered worker is ready")
	}
}

// TestNodesPerSecond: the gauge sums the last unit of each thread and
// drops to 0 when the worker is idle.
func TestNodesPerSecond(t *testing.T) {
	m := newMetrics(nil, 2)
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	m.unitDone(1e6, time.Second)
	m.unitDone(3e6, time.Second)
	m.unitDone(2e6, time.Second) // the first falls out (2 threads)
	if got := m.nodesPerSecond(); got != 5e6 {
		t.Errorf("busy: %v nodes/s, want 5e6", got)
	}
	now = now.Add(6 * time.Second)
	if got := m.nodesPerSecond(); got != 0 {
		t.Errorf("idle: %v nodes/s, want 0", got)
	}
	// An empty long poll counts without its wait; a failed call not at all.
	m.leaseCall(time.Now().Add(-2*time.Second-time.Millisecond), 2*time.Second, &arbiterv1.LeaseResponse{}, nil)
	m.leaseCall(time.Now(), 2*time.Second, nil, errors.New("down"))
	if n := testutil.CollectAndCount(m.leaseRTT); n != 1 {
		t.Fatalf("histogram series %d", n)
	}
	var sum float64
	{
		reg := prometheus.NewRegistry()
		reg.MustRegister(m.leaseRTT)
		mfs, _ := reg.Gather()
		h := mfs[0].GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 1 {
			t.Fatalf("samples %d, want 1", h.GetSampleCount())
		}
		sum = h.GetSampleSum()
	}
	if sum > 0.5 {
		t.Errorf("long-poll wait not excluded: %v s", sum)
	}
	if m.connected {
		t.Error("connected after a failed call")
	}
}

// A runner's CountGames (Host) adds to the worker's games and restarts.
func TestCountGames(t *testing.T) {
	w := &Worker{metrics: newMetrics(nil, 1)}
	rh := &runnerHost{w: w}
	rh.CountGames(2, 1)
	rh.CountGames(3, 0)
	if g, r := testutil.ToFloat64(w.metrics.games), testutil.ToFloat64(w.metrics.restarts); g != 5 || r != 1 {
		t.Errorf("games %v (want 5), restarts %v (want 1)", g, r)
	}
}
