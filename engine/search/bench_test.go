package search

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/benchparse"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// BenchmarkSearch measures search speed (nodes/second) on the bench
// positions at a shallow depth, and proves the search allocates nothing
// per node: allocations per op stay a small constant (the per-search
// goroutine, result and PV copies) however many nodes are searched.
func BenchmarkSearch(b *testing.B) { benchmarkSearch(b, nil) }

// BenchmarkSearchNNUE is BenchmarkSearch with UseNNUE, on the same
// positions: the net of $ARBITER_NNUE_NET, else the embedded one, else a
// random net (its trees differ from a trained net's, its cost per node
// does not). Run both in one go to compare: go test -bench 'Search' .
func BenchmarkSearchNNUE(b *testing.B) {
	opts := map[string]string{OptUseNNUE: "true"}
	if path := os.Getenv("ARBITER_NNUE_NET"); path != "" {
		opts[OptEvalFile] = path
	} else if def, _ := nnue.DefaultNet(); def == nil {
		opts[OptEvalFile] = writeNet(b, nnue.NewRandom(1))
	}
	benchmarkSearch(b, opts)
}

func benchmarkSearch(b *testing.B, opts map[string]string) {
	all := map[string]string{OptHash: "16"}
	for k, v := range opts {
		all[k] = v
	}
	e, err := NewEngine(all)
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

// benchSignature is the node total of `arbiter bench` (BenchPositions at
// BenchDepth). It changes exactly when the search's behaviour changes: after
// a deliberate change to search, evaluation or move ordering, run
// `go run ./cmd/arbiter bench` and paste the new "Nodes searched" here (and
// in docs/engine.md), mentioning it in the commit message. An unexpected
// change means a change meant to be neutral (a refactoring, a speed-up) was
// not.
const benchSignature = 914883

// classicSignature is the bench with the hand-written evaluation
// (UseNNUE=false), the default before the first net shipped.
const classicSignature = 780586

func TestClassicBenchSignature(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	res, err := BenchWith(BenchDepth, map[string]string{OptUseNNUE: "false"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes != classicSignature {
		t.Errorf("bench signature with UseNNUE=false %d, want %d", res.Nodes, classicSignature)
	}
}

func TestBenchSignature(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	res, err := Bench(BenchDepth, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes != benchSignature {
		t.Errorf("bench signature %d, want %d (update benchSignature if the search changed on purpose)", res.Nodes, benchSignature)
	}
}

// TestBenchReportParsers: the bench summary is read by the current and the
// older OpenBench client and by Fishtest, with their own expressions.
func TestBenchReportParsers(t *testing.T) {
	r := BenchResult{Nodes: 780586, Elapsed: 1234 * time.Millisecond}
	out := strings.Join(r.Report(), "\n") + "\n"
	for name, parse := range map[string]func(string) (int64, int64, bool){
		"OpenBench": benchparse.OpenBench, "OpenBench (older)": benchparse.OpenBenchOld,
	} {
		if n, nps, ok := parse(out); !ok || n != 780586 || nps != r.NPS() {
			t.Errorf("%s read %d nodes, %d nps, %v from\n%s", name, n, nps, ok, out)
		}
	}
	if n, ms, ok := benchparse.Fishtest(out); !ok || n != 780586 || ms != 1234 {
		t.Errorf("Fishtest read %d nodes, %v ms, %v from\n%s", n, ms, ok, out)
	}
}
