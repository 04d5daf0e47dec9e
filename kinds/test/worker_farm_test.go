package test_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestGamePairsOnAWorker: game pairs run through the runner that
// worker/gamepairs registers (this kind imports it). A farm's worker,
// with two slots and no tables, says it plays game pairs with each
// engine's own limits and the movegen gate (not engine-syzygy), and
// plays a match of 12 games (the embedded engine against itself with
// another RFPMargin and no net, 2 pairs a batch) whose batches travel as
// the typed WorkUnit.game_pairs and come back as SubmitRequest.game_pairs:
// every game counted with its PGN, and the worker's games counter
// (Host.CountGames) at 12. Take the runner's registration out and the
// worker offers no game-pair: the test fails at once.
func TestGamePairsOnAWorker(t *testing.T) {
	farm := farmtest.Start(t, 1, func(c *localcluster.Config) { c.Threads = 2 })
	c := farm.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	caps := farmtest.WorkerCapabilities(ctx, t, c, capability.GamePair, capability.EngineLimits, capability.MovegenGate, capability.Builtin)
	if slices.Contains(caps, capability.EngineSyzygy) {
		t.Errorf("the worker offers %q without tables", caps)
	}

	spec := &arbiterv1.MatchSpec{
		EngineA: &arbiterv1.EngineSpec{Name: "default", Command: matchspec.Embedded, Protocol: "builtin", Options: map[string]string{"Hash": "1"}},
		EngineB: &arbiterv1.EngineSpec{Name: "weak", Command: matchspec.Embedded, Protocol: "builtin", Options: map[string]string{
			"Hash": "1", "RFPMargin": "40", "UseNNUE": "false"}},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 400}},
		Openings: []*arbiterv1.Opening{{Index: 0, MovesUci: []string{"e2e4", "e7e5"}}, {Index: 1, MovesUci: []string{"d2d4", "d7d5"}},
			{Index: 2, MovesUci: []string{"c2c4", "e7e5"}}},
		BookOrder: "sequential", Games: 12, BatchPairs: 2,
	}
	resp, err := c.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchJob(ctx, resp.GetJob().GetJobId(), clusterclient.Interactive, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := final.GetMatchProgress()
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE || p.GetGames() != 12 || p.GetPgns() != 12 ||
		p.GetWins()+p.GetDraws()+p.GetLosses() != 12 || p.GetBatchesDone() != 3 {
		t.Fatalf("match: %v, %v", final.GetState(), p)
	}
	t.Logf("match %s: +%d =%d -%d in %d batches, pentanomial %v", final.GetJobId(), p.GetWins(), p.GetDraws(), p.GetLosses(),
		p.GetBatchesDone(), p.GetPentanomial())
	code, metrics := farm.Do(t, "GET", "/metrics", nil)
	m := regexp.MustCompile(`(?m)^arbiter_worker_games_total\{[^}]*\} (\d+)$`).FindStringSubmatch(metrics)
	if code != 200 || m == nil {
		t.Fatalf("metrics: %d, no arbiter_worker_games_total", code)
	}
	if n, _ := strconv.Atoi(m[1]); n != 12 {
		t.Errorf("arbiter_worker_games_total %s, want 12", m[1])
	}
}
