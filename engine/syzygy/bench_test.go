package syzygy

import (
	"math/rand/v2"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// BenchmarkProbeWDL probes random positions spread over every table of the
// shared directory (files already mapped and in the page cache), and
// reports probes per second.
//
//	go test -run '^$' -bench ProbeWDL ./engine/syzygy/
func BenchmarkProbeWDL(b *testing.B) {
	benchmarkProbe(b, func(tb *Tablebase, pos *engine.Position) error {
		_, err := tb.ProbeWDL(pos)
		return err
	})
}

// BenchmarkProbeDTZ is the same for DTZ (a WDL probe, then the DTZ table or
// a one-ply search).
func BenchmarkProbeDTZ(b *testing.B) {
	benchmarkProbe(b, func(tb *Tablebase, pos *engine.Position) error {
		_, err := tb.ProbeDTZ(pos)
		return err
	})
}

func benchmarkProbe(b *testing.B, probe func(*Tablebase, *engine.Position) error) {
	tb, err := Open(sharedTablesDir(b))
	if err != nil {
		b.Fatal(err)
	}
	defer tb.Close()
	entries := tableMaterials(b, tb)
	rng := rand.New(rand.NewPCG(1, 2))
	positions := make([]engine.Position, 4096)
	for i := range positions {
		positions[i] = randomPosition(rng, entries[i%len(entries)].mat, rng.IntN(2) == 0, rng.IntN(4) == 0)
		if err := probe(tb, &positions[i]); err != nil { // open and warm every table
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := probe(tb, &positions[i%len(positions)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "probes/s")
}
