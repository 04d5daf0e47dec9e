package grpcapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	_ "github.com/arbiter-chess/arbiter/kinds/install"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestStallWatchFailsRefusedDataset: a dataset whose engine every live
// worker able to play it refused (it reported no score) ends failed with
// the worker's reason once the start timeout has passed, through the one
// watch every kind shares (workload.Needer); before that it runs.
func TestStallWatchFailsRefusedDataset(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := gamepairtest.NewClock(time.Unix(1_000_000, 0))
	kind, ok := workload.Lookup("datagen")
	if !ok {
		t.Fatal("no datagen kind registered")
	}
	wl, err := kind.New(workload.Deps{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	c := core.New(core.Config{Store: st, LeaseDuration: time.Minute, LeaseKey: []byte("test key"), Now: clk.Now}, wl)
	defer c.Close()
	wl.(interface{ SetHost(core.Host) }).SetHost(c.Host())
	if err := c.Load(ctx); err != nil {
		t.Fatal(err)
	}
	const timeout = time.Minute
	watch := NewStallWatch(c, []core.Workload{wl}, timeout, zaptest.NewLogger(t))
	alice := identity.Identity{Name: "alice", Role: identity.Worker}
	carol := identity.Identity{Name: "carol", Role: identity.Client}
	ref, err := c.Create(ctx, carol, kind.Name, &arbiterv1.DatagenSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"},
		Positions: 100, Nodes: 300, RandomPliesMin: 8, RandomPliesMax: 9, Seed: 7, BatchGames: 2})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Register(ctx, alice, "w1", core.Caps{Cores: 1, Tags: []string{capability.Datagen, capability.Builtin}})
	if err != nil {
		t.Fatal(err)
	}
	g, ok, err := c.Lease(ctx, alice, w.ID, 0)
	if err != nil || !ok {
		t.Fatalf("no lease: %v", err)
	}
	if err := c.Release(ctx, alice, w.ID, g.Lease.ID, `engine "dev" reported no score at ply 9`, true); err != nil {
		t.Fatal(err)
	}
	state := func() *arbiterv1.Job {
		snap, err := c.Job(ref.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		return snap.(*arbiterv1.Job)
	}
	// The worker keeps polling, so it stays live.
	step := func(d time.Duration) {
		clk.Advance(d)
		if _, _, err := c.Lease(ctx, alice, w.ID, 0); err != nil {
			t.Fatal(err)
		}
		watch.Check(ctx)
	}
	step(workerGrace) // first seen unable to start
	step(timeout / 2)
	if s := state().GetState(); s != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("before the start timeout: %v (%s)", s, state().GetError())
	}
	step(timeout / 2)
	j := state()
	if j.GetState() != arbiterv1.JobState_JOB_STATE_FAILED || !strings.Contains(j.GetError(), `engine "dev" reported no score at ply 9`) ||
		!strings.Contains(j.GetError(), "no connected worker could start it within 1m0s") {
		t.Fatalf("after the start timeout: %v (%s); want failed with the worker's reason", j.GetState(), j.GetError())
	}
	t.Logf("failed: %s", j.GetError())
}
