package engine

import (
	"context"
	"testing"
)

// TestPerftTableEntries: an entry answers only its own board (both hashes)
// at its own depth, a torn entry (words of two writers) answers nothing,
// and counts too large to pack are not stored.
func TestPerftTableEntries(t *testing.T) {
	tab := NewPerftTable(1)
	const h1, h2 = 0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321
	tab.store(h1, h2, 5, 4865609)
	if n, ok := tab.probe(h1, h2, 5); !ok || n != 4865609 {
		t.Fatalf("probe after store: %d, %v", n, ok)
	}
	if _, ok := tab.probe(h1, h2, 4); ok {
		t.Error("hit at another depth")
	}
	if _, ok := tab.probe(h1, h2^1, 5); ok {
		t.Error("hit with another check hash")
	}
	if _, ok := tab.probe(h1^1, h2, 5); ok {
		t.Error("hit in another bucket")
	}
	// A second board in the same bucket, then a torn entry: the data word
	// of one and the check word of the other, as two racing writers could
	// leave them.
	const g2 = 0x5555_aaaa_5555_aaaa
	tab.store(h1, g2, 5, 197281)
	b := tab.bucket(h1)
	b[0].check, b[1].check = b[1].check, b[0].check
	if _, ok := tab.probe(h1, h2, 5); ok {
		t.Error("torn entry answers the first board")
	}
	if _, ok := tab.probe(h1, g2, 5); ok {
		t.Error("torn entry answers the second board")
	}
	tab.store(h1+1, h2, 9, perftMaxCached+1)
	if _, ok := tab.probe(h1+1, h2, 9); ok {
		t.Error("a count above perftMaxCached was stored")
	}
	tab.store(h1+1, h2, 9, perftMaxCached)
	if n, ok := tab.probe(h1+1, h2, 9); !ok || n != perftMaxCached {
		t.Errorf("perftMaxCached: %d, %v", n, ok)
	}
}

// TestPerftTableReplacement: a full bucket gives up its shallowest entry,
// and entries of earlier generations lose their depth's claim with age.
func TestPerftTableReplacement(t *testing.T) {
	tab := NewPerftTable(1)
	const h1 = 42
	for d := 5; d <= 8; d++ {
		tab.store(h1, uint64(d), d, uint64(d))
	}
	tab.store(h1, 100, 3, 3)
	for d := 6; d <= 8; d++ {
		if _, ok := tab.probe(h1, uint64(d), d); !ok {
			t.Errorf("depth %d entry replaced by a depth 3 one", d)
		}
	}
	if _, ok := tab.probe(h1, 5, 5); ok {
		t.Error("the depth 5 entry should have made way")
	}
	if _, ok := tab.probe(h1, 100, 3); !ok {
		t.Error("the new entry is missing")
	}
	// Eight generations later every old entry has aged out its depth and is
	// worth less than a fresh depth 2 one: three fresh entries take three
	// old slots (without aging the second would replace the first), and
	// the fourth slot keeps its old entry.
	for i := 0; i < 8; i++ {
		tab.NewGeneration()
	}
	for i, d := range []int{2, 2, 2} {
		tab.store(h1, uint64(200+i), d, 1)
	}
	for i := range 3 {
		if _, ok := tab.probe(h1, uint64(200+i), 2); !ok {
			t.Errorf("fresh entry %d replaced by an old one", i)
		}
	}
	if _, ok := tab.probe(h1, 8, 8); !ok {
		t.Error("the deepest old entry should still be there (one slot left)")
	}
}

// TestPerftTableStats: RunPerft reports its own use of the table, the
// table sums all runs, and a second run of the same perft finds the
// first run's subtrees.
func TestPerftTableStats(t *testing.T) {
	tab := NewPerftTable(4)
	p := StartPosition()
	first, err := RunPerft(context.Background(), p, 5, PerftOptions{Threads: 2, Table: tab})
	if err != nil {
		t.Fatal(err)
	}
	h := first.Hash
	if h == nil || h.Probes == 0 || h.Stores == 0 || h.Hits > h.Probes {
		t.Fatalf("first run: %+v", h)
	}
	second, err := RunPerft(context.Background(), p, 5, PerftOptions{Threads: 2, Table: tab})
	if err != nil {
		t.Fatal(err)
	}
	if second.Nodes != CountOf(4865609) || second.Hash.HitRate() < 0.99 {
		t.Errorf("second run: %v nodes, %+v (hit rate %.3f)", second.Nodes, second.Hash, second.Hash.HitRate())
	}
	total := tab.Stats()
	if total.Probes != first.Hash.Probes+second.Hash.Probes || total.Hits != first.Hash.Hits+second.Hash.Hits {
		t.Errorf("table %+v, runs %+v and %+v", total, *first.Hash, *second.Hash)
	}
	if r, _ := RunPerft(context.Background(), p, 3, PerftOptions{Threads: 1}); r.Hash != nil {
		t.Errorf("no table, Hash = %+v", r.Hash)
	}
	if (PerftTableStats{}).HitRate() != 0 {
		t.Error("HitRate without probes")
	}
}

// TestPerftTableChess960Rooks: two Chess960 positions with the same pieces
// and the same right (White's h-side castling) but another castling rook
// (g1 or h1) have other subtrees; through one shared table each keeps its
// own count. The board hash covers the castling rooks' squares.
func TestPerftTableChess960Rooks(t *testing.T) {
	tab := NewPerftTable(1)
	for _, fen := range []string{
		"1r2k3/8/8/8/8/8/8/4K1RR w G - 0 1",
		"1r2k3/8/8/8/8/8/8/4K1RR w H - 0 1",
		"1r2k3/8/8/8/8/8/8/4K1RR w G - 0 1",
	} {
		p := mustFEN(t, fen)
		for depth := 1; depth <= 4; depth++ {
			want := Perft(&p, depth)
			if got := PerftWithTable(&p, depth, tab); got != want {
				t.Errorf("%s depth %d: %d through the table, %d without", fen, depth, got, want)
			}
		}
	}
	g, h := mustFEN(t, "1r2k3/8/8/8/8/8/8/4K1RR w G - 0 1"), mustFEN(t, "1r2k3/8/8/8/8/8/8/4K1RR w H - 0 1")
	if Perft(&g, 1) == Perft(&h, 1) {
		t.Fatal("the two positions should differ at depth 1 (one can castle)")
	}
}
