package perft

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
	"github.com/arbiter-chess/arbiter/worker"
)

// TestCrossCheckBatchStockfish: Debian's Stockfish counts a standard and a
// Chess960 batch (CPW's Chess960 position 1, with UCI_Chess960 set by the
// verify layer) exactly as the embedded generator does, and
// the result names the program. An engine the worker does not have, or a
// batch asking for statistics, is refused. The runner offers cross-checks
// only on a worker with a program (--verify-engine).
func TestCrossCheckBatchStockfish(t *testing.T) {
	const sf = "/usr/games/stockfish"
	if _, err := os.Stat(sf); err != nil {
		t.Skip("no " + sf)
	}
	local, err := verifyproto.ParseLocalEngine("name=stockfish,cmd=" + sf)
	if err != nil {
		t.Fatal(err)
	}
	w := newPerftRunner(worker.Settings{HashMB: 1, VerifyEngines: []verifyproto.LocalEngine{local}})
	defer w.Close()
	if caps := w.Capabilities(); !slices.Contains(caps, capability.PerftCrossCheck) {
		t.Errorf("a worker with a program offers %q, without %q", caps, capability.PerftCrossCheck)
	}
	if caps := newPerftRunner(worker.Settings{HashMB: 1}).Capabilities(); slices.Contains(caps, capability.PerftCrossCheck) {
		t.Errorf("a worker without programs offers %q", caps)
	}
	ctx := context.Background()
	kiwi := "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
	c960 := "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
	for _, b := range []*arbiterv1.PerftBatch{
		{Fens: []string{engine.StartFEN, kiwi}, Depth: 3},
		{Fens: []string{c960}, Depth: 3, Chess960: true},
	} {
		ours, err := ComputeBatch(ctx, b, engine.NewPerftCounter(nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		b.CrossCheckEngine = "stockfish"
		got, err := w.crossCheckBatch(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetProgram() != "stockfish" || !slices.Equal(got.GetCounts(), ours.GetCounts()) {
			t.Fatalf("%v: stockfish %v (%q), ours %v", b.GetFens(), got.GetCounts(), got.GetProgram(), ours.GetCounts())
		}
		t.Logf("%d positions at depth %d: %v", len(b.GetFens()), b.GetDepth(), got.GetCounts())
	}
	for _, c := range []struct {
		batch *arbiterv1.PerftBatch
		want  string
	}{
		{&arbiterv1.PerftBatch{Fens: []string{kiwi}, Depth: 2, CrossCheckEngine: "crafty"}, `"crafty" is not on this worker`},
		{&arbiterv1.PerftBatch{Fens: []string{kiwi}, Depth: 2, CrossCheckEngine: "stockfish", Stats: true}, "statistics or slices"},
		{&arbiterv1.PerftBatch{Fens: []string{kiwi}, Depth: 0, CrossCheckEngine: "stockfish"}, "depth 0"},
	} {
		if _, err := w.crossCheckBatch(ctx, c.batch); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want an error with %q", c.batch, err, c.want)
		}
	}
}
