package worker

import (
	"context"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/perftwire"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestPerftCountWidePath runs the 128-bit summing levels (made shallow for
// the test) and the 64-bit subtrees together: the total is exact.
func TestPerftCountWidePath(t *testing.T) {
	defer func(d int) { narrowDepth = d }(narrowDepth)
	narrowDepth = 1
	counts, err := ComputePerft(context.Background(), &arbiterv1.PerftBatch{Fens: []string{engine.StartFEN}, Depth: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0] != engine.CountOf(4865609) {
		t.Fatalf("perft 5 through the wide path: %v", counts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ComputePerft(ctx, &arbiterv1.PerftBatch{Fens: []string{engine.StartFEN}, Depth: 5}, nil); err == nil {
		t.Fatal("a cancelled unit returned counts")
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
