//go:build unix

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// cpwStats returns the chessprogramming wiki's statistics row of position
// name at depth from the shared table (engine/testdata/perft, a copy of
// /work/shared/data/perft): nodes, then the eight statistics in the
// order of PerftStatistics.
func cpwStats(t *testing.T, name string, depth string) (fen string, want []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "engine", "testdata", "perft", "cpw_perft_results_stats.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) == 12 && f[0] == name && f[2] == depth {
			return f[1], f[3:]
		}
	}
	t.Fatalf("no CPW row for %s at depth %s", name, depth)
	return "", nil
}

// TestPerftStatsThroughCluster: the statistics of a job split over two
// workers with their own tables, each position's tree cut in two slices
// and a quarter of the units computed again by the other worker, equal
// the chessprogramming wiki's table: the start position at depth 6 and
// Kiwipete at depth 5 (depth 6 too with ARBITER_PERFT_FULL=1, about two
// CPU-minutes). Disputed cells (engine/perft_suite_test.go's cpwDisputed,
// shared/data/perft/README.md) are replaced by the value independent
// generators agree on.
func TestPerftStatsThroughCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("perft 6 with statistics")
	}
	cl := localCluster(t, "", 2)
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// Slices are cut for the workers seen: let both register first.
	for len(cl.Coordinator().Core.Workers()) < 2 {
		if ctx.Err() != nil {
			t.Fatal("workers did not register")
		}
		time.Sleep(10 * time.Millisecond)
	}
	type row struct {
		name, depth string
		splitPly    uint32         // 0: chosen; Kiwipete at depth 5 is split at ply 1, deep enough to slice
		disputed    map[int]string // index in want → agreed value
	}
	rows := []row{
		{"startpos", "6", 0, nil},
		{"kiwipete", "5", 1, map[int]string{7: "2645"}},
	}
	if os.Getenv("ARBITER_PERFT_FULL") == "1" {
		// CPW: 54948 double checks; the 2645 of depth 5 carries on.
		rows = append(rows, row{"kiwipete", "6", 0, map[int]string{7: "55014"}})
	}
	names := []string{"nodes", "captures", "ep", "castles", "promotions", "checks", "discovery_checks", "double_checks", "checkmates"}
	for _, r := range rows {
		fen, want := cpwStats(t, r.name, r.depth)
		for i, v := range r.disputed {
			want[i] = v
		}
		var depth uint32
		for _, ch := range r.depth {
			depth = depth*10 + uint32(ch-'0')
		}
		resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{
			Fen: fen, Depth: depth, SplitPly: r.splitPly, Stats: true, VerifyFraction: 0.25}})
		if err != nil {
			t.Fatal(err)
		}
		if s := resp.GetJob().GetPerft(); s.GetSlices() != 2 || !s.GetStats() {
			t.Fatalf("%s %s: the job has %d slices, statistics %v; want 2 and true", r.name, r.depth, s.GetSlices(), s.GetStats())
		}
		final, err := c.WatchJob(ctx, resp.GetJob().GetJobId(), clusterclient.Interactive, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := final.GetPerftStats()
		got := []string{final.GetNodes(), s.GetCaptures(), s.GetEnPassant(), s.GetCastles(), s.GetPromotions(), s.GetChecks(),
			s.GetDiscoveryChecks(), s.GetDoubleChecks(), s.GetCheckmates()}
		for i := range names {
			if got[i] != want[i] {
				t.Errorf("%s depth %s %s: %s through the cluster, want %s", r.name, r.depth, names[i], got[i], want[i])
			}
		}
		if p := final.GetProgress(); p.GetUnitsVerified() == 0 || p.GetMismatches() != 0 {
			t.Errorf("%s depth %s: %d units verified, %d mismatches", r.name, r.depth, p.GetUnitsVerified(), p.GetMismatches())
		}
	}
}
