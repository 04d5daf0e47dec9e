package perft

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func chess960Suite(t *testing.T, n int) []string {
	t.Helper()
	fens := make([]string, n)
	for i := range fens {
		fen, err := engine.Chess960StartFEN(i % engine.Chess960Positions)
		if err != nil {
			t.Fatal(err)
		}
		fens[i] = fen
	}
	return fens
}

// TestSuiteLimits: a suite is refused past MaxSuitePositions, past the
// node limit summed over its positions (while each position alone is
// under it), past the split positions limit, and with a bad FEN named by
// its number; each message names the limit or the input. The control:
// the same suite under the limits is one job with a divide entry per
// position.
func TestSuiteLimits(t *testing.T) {
	ctx := context.Background()
	one := perftsplit.EstimateNodes(engine.StartPosition(), 4)
	c, _ := limitedCluster(t, Config{MaxNodes: 5 * one, SplitLimits: perftsplit.Limits{MaxPositions: 100, MaxLeaves: 1e6}})
	for _, tc := range []struct {
		spec *arbiterv1.PerftSpec
		want []string
	}{
		{&arbiterv1.PerftSpec{Depth: 1, Suite: chess960Suite(t, MaxSuitePositions+1)}, []string{"suite of 10001 positions: at most 10000"}},
		{&arbiterv1.PerftSpec{Depth: 4, Suite: chess960Suite(t, 10), Chess960: true}, []string{"depth 4 over these 10 positions is about", FlagMaxNodes}},
		{&arbiterv1.PerftSpec{Depth: 2, Suite: chess960Suite(t, 10), Chess960: true}, []string{"more than 100 positions at ply 1 over the suite's first", FlagMaxSplitPositions}},
		{&arbiterv1.PerftSpec{Depth: 2, Suite: []string{engine.StartFEN, "8/8/8/8/8/8/8/K7 w - - 0 1"}, SuiteFirst: 1}, []string{"suite position 2: invalid FEN"}},
		{&arbiterv1.PerftSpec{Depth: 0, Suite: []string{engine.StartFEN}}, []string{"depth 0: a suite needs depth 1 or more"}},
	} {
		_, err := c.Create(ctx, client, Kind, tc.spec)
		e, ok := apierr.As(err)
		if !ok || e.Code != apierr.InvalidArgument {
			t.Fatalf("%d positions at depth %d: %v, want InvalidArgument", len(tc.spec.Suite), tc.spec.Depth, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(e.Msg, w) {
				t.Errorf("%q lacks %q", e.Msg, w)
			}
		}
	}
	ref, err := c.Create(ctx, client, Kind, &arbiterv1.PerftSpec{Depth: 2, Suite: chess960Suite(t, 4), Chess960: true})
	if err != nil {
		t.Fatalf("4 positions at depth 2: %v", err)
	}
	snap, err := c.Job(ref.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	j := snap.(*arbiterv1.Job)
	var moves uint64
	for _, fen := range chess960Suite(t, 4) {
		p, _ := engine.ParseFEN(fen)
		moves += engine.Perft(&p, 1)
	}
	if j.GetPerft().GetSuiteSize() != 4 || j.GetPerft().GetFen() != "" || j.GetProgress().GetPositions() != moves {
		t.Errorf("suite job: %d positions, FEN %q, %d split positions", j.GetPerft().GetSuiteSize(), j.GetPerft().GetFen(), j.GetProgress().GetPositions())
	}
}
