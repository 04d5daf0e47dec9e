package perft

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func limitedCluster(t *testing.T, cfg Config, gate ...*quota.Gate) (*core.Core, *store.Store) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store, cfg.MinUnits = st, 8
	wl := New(cfg)
	cc := core.Config{Store: st, LeaseDuration: 10 * time.Second, LeaseKey: []byte("test key")}
	if len(gate) > 0 {
		cc.Quota = gate[0]
	}
	c := core.New(cc, wl)
	wl.SetHost(c.Host())
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, st
}

// TestWorkThatCannotFinishRefused: depth 20 is refused with the estimate
// and the limit; depth 6 passes the same limit.
func TestWorkThatCannotFinishRefused(t *testing.T) {
	c, st := limitedCluster(t, Config{})
	_, err := c.Create(context.Background(), client, Kind, &arbiterv1.PerftSpec{Depth: 20})
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.InvalidArgument || e.Reason != apierr.ReasonTooLarge {
		t.Fatalf("depth 20: %v, want TOO_LARGE", err)
	}
	for _, want := range []string{"depth 20 from this position is about ", "×10^2", "nodes, over the limit of 1.0×10^21", FlagMaxNodes} {
		if !strings.Contains(e.Msg, want) {
			t.Errorf("depth 20: %q lacks %q", e.Msg, want)
		}
	}
	t.Log(e.Msg)
	if _, err := c.Create(context.Background(), client, Kind, &arbiterv1.PerftSpec{Depth: 6}); err != nil {
		t.Fatalf("depth 6: %v", err)
	}
	// The published record passes the default limit, the next depth not.
	if est := perftsplit.EstimateNodes(engine.StartPosition(), 15); est > DefaultMaxNodes {
		t.Errorf("perft(15) of the start position estimated %s, over the default limit", sci(est))
	}
	if est := perftsplit.EstimateNodes(engine.StartPosition(), 16); est <= DefaultMaxNodes {
		t.Errorf("perft(16) of the start position estimated %s, within the default limit", sci(est))
	}
	if jobs, _ := st.Jobs(context.Background()); len(jobs) != 1 {
		t.Fatalf("%d jobs stored, want the depth-6 one", len(jobs))
	}
	// The limit is the operator's.
	c2, _ := limitedCluster(t, Config{MaxNodes: 1e6})
	if _, err := c2.Create(context.Background(), client, Kind, &arbiterv1.PerftSpec{Depth: 5}); err == nil || !strings.Contains(err.Error(), "over the limit of 1.0×10^6") {
		t.Fatalf("depth 5 (4.9 million) under a limit of 10^6: %v", err)
	}
}

// TestHeldPositionsBounded: deep-split jobs are admitted while the split
// positions all running jobs hold stay under MaxHeldPositions; the next
// is refused RESOURCE_EXHAUSTED naming the limit, and admitted again once
// a job ends.
func TestHeldPositionsBounded(t *testing.T) {
	c, st := limitedCluster(t, Config{MaxHeldPositions: 12_000})
	spec := &arbiterv1.PerftSpec{Depth: 7, SplitPly: 3} // 5,362 unique positions at ply 3
	var ids []string
	for range 2 {
		ref, err := c.Create(context.Background(), client, Kind, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ref.ID)
	}
	_, err := c.Create(context.Background(), client, Kind, spec)
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.ResourceExhausted || !strings.Contains(e.Msg, "hold 10724 split positions, the limit is 12000") ||
		!strings.Contains(e.Msg, FlagMaxHeldPositions) {
		t.Fatalf("third deep split: %v, want RESOURCE_EXHAUSTED naming the held positions and the limit", err)
	}
	if jobs, _ := st.Jobs(context.Background()); len(jobs) != 2 {
		t.Fatalf("%d jobs stored, want 2", len(jobs))
	}
	if err := c.Cancel(context.Background(), client, ids[0], "make room"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(context.Background(), client, Kind, spec); err != nil {
		t.Fatalf("after a cancel: %v", err)
	}
	// One split over the per-job limit names its flag.
	c3, _ := limitedCluster(t, Config{})
	_, err = c3.Create(context.Background(), client, Kind, &arbiterv1.PerftSpec{Fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Depth: 6, SplitPly: 4})
	if err == nil || !strings.Contains(err.Error(), FlagMaxSplitPositions) {
		t.Fatalf("Kiwipete split at ply 4: %v, want refused naming %s", err, FlagMaxSplitPositions)
	}
}

// TestRunningJobsPerIdentity: an identity at its limit of running jobs is
// refused naming the limit; a finished (cancelled) job frees its place;
// another identity and the admin are not counted against it.
func TestRunningJobsPerIdentity(t *testing.T) {
	c, _ := limitedCluster(t, Config{}, quota.NewGate(quota.Limits{RunningJobs: 2}, nil))
	ctx := context.Background()
	spec := &arbiterv1.PerftSpec{Depth: 4}
	var ids []string
	for range 2 {
		ref, err := c.Create(ctx, client, Kind, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ref.ID)
	}
	_, err := c.Create(ctx, client, Kind, spec)
	if e, ok := apierr.As(err); !ok || e.Code != apierr.ResourceExhausted || !strings.Contains(e.Msg, "limit of 2 running jobs") ||
		!strings.Contains(e.Msg, quota.FlagRunningJobs) {
		t.Fatalf("third running job: %v", err)
	}
	if _, err := c.Create(ctx, identity.Identity{Name: "erin", Role: identity.Client}, Kind, spec); err != nil {
		t.Fatalf("another identity: %v", err)
	}
	if _, err := c.Create(ctx, identity.Bootstrap, Kind, spec); err != nil {
		t.Fatalf("the admin: %v", err)
	}
	if err := c.Cancel(ctx, client, ids[0], "make room"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, client, Kind, spec); err != nil {
		t.Fatalf("after a cancel: %v", err)
	}
}
