package leader

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A lone coordinator's election series: it leads at term 1 from the
// start, database_up follows its ping (0 while the ping fails, the
// control), and each answered check is timed.
func TestSoleExportsTheElectionSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	var failing atomic.Bool
	s := NewSole(func(context.Context) error {
		if failing.Load() {
			return errors.New("database gone")
		}
		return nil
	}, 10*time.Millisecond, reg)
	defer s.Close()
	if v := testutil.ToFloat64(s.m.leader); v != 1 {
		t.Errorf("leader %v, want 1", v)
	}
	if v := testutil.ToFloat64(s.m.term); v != 1 {
		t.Errorf("term %v, want 1", v)
	}
	if v := testutil.ToFloat64(s.m.dbUp); v != 1 {
		t.Errorf("database_up after the first check %v, want 1", v)
	}
	if n := testutil.CollectAndCount(reg, "arbiter_coordinator_database_latency_seconds"); n != 1 {
		t.Errorf("latency series: %d", n)
	}
	failing.Store(true)
	waitFor(t, func() bool { return testutil.ToFloat64(s.m.dbUp) == 0 }, "database_up 0 while the ping fails")
	failing.Store(false)
	waitFor(t, func() bool { return testutil.ToFloat64(s.m.dbUp) == 1 }, "database_up 1 once the ping answers again")
	s.Close()
	if v := testutil.ToFloat64(s.m.leader); v != 0 {
		t.Errorf("leader after Close %v, want 0", v)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30 s", what)
		}
	}
}
