package gamepair_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The embedded engine at fixed nodes plays a batch the same way twice, so
// two plays have the same BatchMoves; what the comparison leaves out
// (times, scores) does not matter, and one move does.
func TestBatchMovesOfReplays(t *testing.T) {
	b := honestBatch()
	first, second := play(t, b), play(t, proto.Clone(b).(*arbiterv1.GamePairBatch))
	m1, err := gamepair.BatchMoves(first)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := gamepair.BatchMoves(second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m1, m2) {
		t.Fatalf("two plays of a fixed-node batch differ:\n%q\n%q", m1, m2)
	}

	// Other times in the comments: the same moves.
	retimed := proto.Clone(first).(*arbiterv1.GamePairBatchResult)
	for k, pgn := range retimed.Pgns {
		retimed.Pgns[k] = strings.ReplaceAll(pgn, "s}", "9s}")
	}
	if slices.Equal(retimed.Pgns, first.Pgns) {
		t.Fatal("no time in the comments to change")
	}
	if m, err := gamepair.BatchMoves(retimed); err != nil || !slices.Equal(m, m1) {
		t.Fatalf("times changed the moves: %v\n%q", err, m)
	}

	// Another move in game 0 (its own first move, past the opening): not
	// the same games.
	moved := proto.Clone(first).(*arbiterv1.GamePairBatchResult)
	moved.Pgns[0] = strings.Replace(moved.Pgns[0], " Nc6 ", " Nf6 ", 1)
	if moved.Pgns[0] == first.Pgns[0] {
		t.Fatal("game 0 has no Nc6 to change")
	}
	if m, err := gamepair.BatchMoves(moved); err != nil || slices.Equal(m, m1) {
		t.Fatalf("a changed move went unseen: %v", err)
	}
}

// BenchmarkBatchMoves: what a result of a checkable test costs the
// coordinator on top of its replay (ReplayBatch): the moves it keeps and
// compares, for the batch of BenchmarkReplayBatch (16 full pairs).
func BenchmarkBatchMoves(b *testing.B) {
	batch := honestBatch()
	batch.Openings = nil
	for i := range 16 {
		batch.Openings = append(batch.Openings, &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{[]string{"e2e4", "d2d4", "c2c4", "g1f3"}[i%4]}})
	}
	batch.Adjudication = nil
	res := play(b, batch)
	bytes := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m, err := gamepair.BatchMoves(res)
		if err != nil {
			b.Fatal(err)
		}
		bytes = 0
		for _, g := range m {
			bytes += len(g)
		}
	}
	b.ReportMetric(float64(bytes), "held-bytes/batch")
}
