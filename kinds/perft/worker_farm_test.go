package perft_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestPerftUnitsOnAWorker: a real worker with two slots (a farm on
// loopback) offers the perft capabilities, read from the runner
// kinds/perft registers (and not the cross-check: its operator named no
// program), and counts the units, which travel as the typed WorkUnit.perft
// and back as SubmitRequest.perft, through that runner: perft(5) of the
// start position with statistics (CPW: 4865609 nodes, 82719 captures, 347
// checkmates) and perft(3) of Kiwipete (97862), the two jobs' units on the
// one table. The control for the capabilities: no perft-cross-check.
func TestPerftUnitsOnAWorker(t *testing.T) {
	farm := farmtest.Start(t, 1, func(c *localcluster.Config) { c.Threads = 2 })
	c := farm.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	caps := farmtest.WorkerCapabilities(ctx, t, c, capability.Perft, capability.Perft960, capability.PerftSlices, capability.PerftStats)
	if slices.Contains(caps, capability.PerftCrossCheck) {
		t.Errorf("the worker offers %q with no --verify-engine program", caps)
	}

	submit := func(spec *arbiterv1.PerftSpec) *arbiterv1.Job {
		t.Helper()
		resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		final, err := c.WatchJob(ctx, resp.GetJob().GetJobId(), clusterclient.Interactive, nil)
		if err != nil {
			t.Fatal(err)
		}
		return final
	}
	start := submit(&arbiterv1.PerftSpec{Depth: 5, Stats: true})
	if s := start.GetPerftStats(); start.GetState() != arbiterv1.JobState_JOB_STATE_DONE || start.GetNodes() != "4865609" ||
		s.GetCaptures() != "82719" || s.GetCheckmates() != "347" {
		t.Errorf("perft(5) of the start position with statistics: %v %s nodes, %v", start.GetState(), start.GetNodes(), s)
	}
	kiwi := submit(&arbiterv1.PerftSpec{Fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Depth: 3})
	if kiwi.GetState() != arbiterv1.JobState_JOB_STATE_DONE || kiwi.GetNodes() != "97862" {
		t.Errorf("perft(3) of Kiwipete: %v %s nodes", kiwi.GetState(), kiwi.GetNodes())
	}
	t.Logf("start position d5: %s nodes, %d units; Kiwipete d3: %s nodes, %d units", start.GetNodes(),
		start.GetProgress().GetUnitsTotal(), kiwi.GetNodes(), kiwi.GetProgress().GetUnitsTotal())
}
