package search

import (
	"context"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// BenchmarkSearch measures search speed (nodes/second) on the bench
// positions at a shallow depth, and proves the search allocates nothing
// per node: allocations per op stay a small constant (the per-search
// goroutine, result and PV copies) however many nodes are searched.
func BenchmarkSearch(b *testing.B) {
	e, err := NewEngine(map[string]string{OptHash: "16"})
	if err != nil {
		b.Fatal(err)
	}
	positions := make([]engine.Position, len(BenchPositions))
	for i, fen := range BenchPositions {
		positions[i], _ = engine.ParseFEN(fen)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var nodes int64
	for i := 0; i < b.N; i++ {
		p := positions[i%len(positions)]
		_, info := e.Go(context.Background(), p, nil, Limits{Depth: 9})
		nodes += info.Nodes
	}
	b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
}
