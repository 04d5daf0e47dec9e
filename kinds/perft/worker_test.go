package perft

import (
	"context"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/perftwire"
)

// TestComputeBatch: a batch's counts, its slices (which add up to them)
// and its statistics (CPW's start position d5 row), on one counter with
// tables; a cancelled unit returns no counts, a bad slice is refused.
func TestComputeBatch(t *testing.T) {
	ctx := context.Background()
	counter := engine.NewPerftCounter(engine.NewPerftTable(4), engine.NewPerftStatsTable(4))
	kiwi := "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
	batch := &arbiterv1.PerftBatch{Fens: []string{engine.StartFEN, kiwi}, Depth: 4}
	res, err := ComputeBatch(ctx, batch, counter)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.GetCounts(); len(got) != 2 || got[0] != 197281 || got[1] != 4085603 {
		t.Fatalf("perft 4: %v", got)
	}
	sums := make([]uint64, 2)
	for i := 0; i < 3; i++ {
		sliced := &arbiterv1.PerftBatch{Fens: batch.Fens, Depth: 4, Slices: 3, Slice: uint32(i), SlicePly: 2}
		r, err := ComputeBatch(ctx, sliced, counter)
		if err != nil {
			t.Fatal(err)
		}
		for j, n := range r.GetCounts() {
			sums[j] += n
		}
	}
	if sums[0] != 197281 || sums[1] != 4085603 {
		t.Fatalf("three slices of perft 4 add up to %v", sums)
	}
	res, err = ComputeBatch(ctx, &arbiterv1.PerftBatch{Fens: []string{engine.StartFEN}, Depth: 5, Stats: true}, counter)
	if err != nil {
		t.Fatal(err)
	}
	st, err := perftwire.DecodeStats(res)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.PerftStats{Nodes: 4865609, Captures: 82719, EnPassant: 258, Checks: 27351, DiscoveryChecks: 6, Checkmates: 347}
	if len(st) != 1 || st[0].Narrow() != want {
		t.Fatalf("statistics of perft 5: %+v", st)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ComputeBatch(cancelled, batch, counter); err == nil {
		t.Fatal("a cancelled unit returned counts")
	}
	for _, bad := range []*arbiterv1.PerftBatch{
		{Fens: batch.Fens, Depth: 4, Slices: 3, Slice: 3, SlicePly: 2},
		{Fens: batch.Fens, Depth: 4, Slices: 3, Slice: 0, SlicePly: 4},
		{Fens: batch.Fens, Depth: 4, Slices: 1 << 20, SlicePly: 2},
	} {
		if _, err := ComputeBatch(ctx, bad, counter); err == nil {
			t.Errorf("batch %v computed", bad)
		}
	}
}

func TestPerftWireRoundTrip(t *testing.T) {
	counts := []engine.Count{engine.CountOf(7), {Hi: 1, Lo: 3}, engine.CountOf(1 << 63)}
	r := perftwire.Encode(counts)
	if len(r.GetCountsHigh()) != 3 || r.GetCountsHigh()[1] != 1 {
		t.Fatalf("encoded %v", r)
	}
	back, err := perftwire.Decode(r)
	if err != nil || len(back) != 3 || back[1] != counts[1] || back[2] != counts[2] {
		t.Fatalf("decoded %v %v", back, err)
	}
	if n := perftwire.Encode(perftwire.Uint64s([]uint64{1, 2})); len(n.GetCountsHigh()) != 0 {
		t.Fatal("high words sent for narrow counts")
	}
	r.CountsHigh = r.CountsHigh[:2]
	if _, err := perftwire.Decode(r); err == nil {
		t.Fatal("mismatched high words accepted")
	}
}
