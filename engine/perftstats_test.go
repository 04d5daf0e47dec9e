package engine

import (
	"context"
	"testing"
)

// perftStack is the reference statistics walk the perft core's statistics
// are tested against: it makes every leaf move on a Position (the engine's
// own board and generator, independent of the perft core) and classifies
// it from the new position's checkers, as the chessprogramming wiki
// defines the columns.
type perftStack struct {
	pos   [MaxPerftDepth + 1]Position
	moves [MaxPerftDepth + 1]MoveList
	stats *PerftStats
}

// perftStats walks the tree making every leaf move, to classify it.
func (s *perftStack) perftStats(ply, depth int) {
	p := &s.pos[ply]
	ml := &s.moves[ply]
	p.GenerateMoves(ml)
	child := &s.pos[ply+1]
	for _, m := range ml.Moves[:ml.N] {
		*child = *p
		child.MakeMove(m)
		if depth > 1 {
			s.perftStats(ply+1, depth-1)
			continue
		}
		st := s.stats
		st.Nodes++
		if p.board[m.To()] != NoPiece && !m.IsCastle() || m.IsEnPassant() {
			st.Captures++
		}
		if m.IsEnPassant() {
			st.EnPassant++
		}
		if m.IsCastle() {
			st.Castles++
		}
		if m.IsPromotion() {
			st.Promotions++
		}
		checkers := child.Checkers()
		if checkers == 0 {
			continue
		}
		st.Checks++
		// The piece that moved stands on its destination (the rook's, for
		// castling); any other checker was uncovered.
		landed := m.To()
		if m.IsCastle() {
			landed = castleRookTo[castleIndex(p.side, m.To() > m.From())]
		}
		// As the chessprogramming wiki counts them: a double check is only a
		// double check, a discovered check is a single check by a piece
		// that did not move.
		if checkers.More() {
			st.DoubleChecks++
		} else if checkers&^landed.Bit() != 0 {
			st.DiscoveryChecks++
		}
		if child.countLegal() == 0 {
			st.Checkmates++
		}
	}
}

// refStats returns the reference statistics of p at depth (>= 1).
func refStats(p *Position, depth int) PerftStats {
	s := &perftStack{stats: &PerftStats{}}
	s.pos[0] = *p
	s.perftStats(0, depth)
	return *s.stats
}

// TestPerftStatsAgree: the perft core's statistics (classification from
// bitboards at the leaves, with and without the statistics table) equal
// the reference walk's on every position of corePositions at depth 1 and 2,
// and on the suites' positions at depth 3.
func TestPerftStatsAgree(t *testing.T) {
	positions := corePositions(t)
	tab := NewPerftStatsTable(4)
	plain := NewPerftCounter(nil, nil)
	cached := NewPerftCounter(nil, tab)
	ctx := context.Background()
	for i := range positions {
		p := &positions[i]
		depths := []int{1, 2}
		if i%40 == 0 {
			depths = append(depths, 3)
		}
		for _, d := range depths {
			want := refStats(p, d)
			for _, c := range []*PerftCounter{plain, cached} {
				got, err := c.Stats(ctx, p, d, PerftSlice{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Narrow() != want {
					t.Fatalf("%s depth %d (table %v):\n got %+v\nwant %+v", p.FEN(), d, c.core.stab != nil, got.Narrow(), want)
				}
			}
		}
	}
	if st := tab.Stats(); st.Hits == 0 || st.Stores == 0 {
		t.Errorf("the statistics table was not used: %+v", st)
	}
	t.Logf("%d positions", len(positions))
}

// TestPerftStatsTableEntries: an entry answers only its own board at its
// own depth, a torn entry answers nothing, and counts of 2^32 or more are
// not stored.
func TestPerftStatsTableEntries(t *testing.T) {
	tab := NewPerftStatsTable(1)
	const h1, h2 = 0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321
	s := perftStatsRaw{197281, 1576, 0, 0, 0, 469, 0, 0, 8}
	tab.store(h1, h2, 4, &s)
	if got, ok := tab.probe(h1, h2, 4); !ok || got != s {
		t.Fatalf("probe after store: %v, %v", got, ok)
	}
	if _, ok := tab.probe(h1, h2, 3); ok {
		t.Error("hit at another depth")
	}
	if _, ok := tab.probe(h1, h2^1, 4); ok {
		t.Error("hit with another check hash")
	}
	const g2 = 0x5555_aaaa_5555_aaaa
	o := perftStatsRaw{8902, 34, 0, 0, 0, 12, 0, 0, 0}
	tab.store(h1, g2, 4, &o)
	if got, ok := tab.probe(h1, g2, 4); !ok || got != o {
		t.Fatalf("second board of the pair: %v, %v", got, ok)
	}
	if got, ok := tab.probe(h1, h2, 4); !ok || got != s {
		t.Fatalf("first board lost to the second: %v, %v", got, ok)
	}
	// Tear: one word of the other entry.
	p := tab.pair(h1)
	p[0][3], p[1][3] = p[1][3], p[0][3]
	if _, ok := tab.probe(h1, h2, 4); ok {
		t.Error("torn entry answers the first board")
	}
	if _, ok := tab.probe(h1, g2, 4); ok {
		t.Error("torn entry answers the second board")
	}
	big := perftStatsRaw{1 << 32}
	tab.store(h1+1, h2, 4, &big)
	if _, ok := tab.probe(h1+1, h2, 4); ok {
		t.Error("a count of 2^32 was stored")
	}
}

// TestPerftSlicesAddUp: the slices of a position add up to its perft, for
// node counts and statistics, with and without tables (shared by all
// slices, so salted entries must keep them apart), at every key ply; and a
// slice is not the whole count.
func TestPerftSlicesAddUp(t *testing.T) {
	ctx := context.Background()
	fens := []string{StartFEN, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"}
	tab, stab := NewPerftTable(8), NewPerftStatsTable(8)
	for _, fen := range fens {
		p := mustFEN(t, fen)
		const depth = 4
		want := Perft(&p, depth)
		wantStats := refStats(&p, depth)
		for _, c := range []*PerftCounter{NewPerftCounter(nil, nil), NewPerftCounter(tab, stab)} {
			for ply := 1; ply < depth; ply++ {
				for _, of := range []int{2, 3, 7} {
					var sum Count
					var sumStats PerftStatsCount
					for i := 0; i < of; i++ {
						s := PerftSlice{Of: of, Index: i, Ply: ply}
						n, err := c.Count(ctx, &p, depth, s)
						if err != nil {
							t.Fatal(err)
						}
						if n.Lo == want {
							t.Errorf("%s: slice %+v holds the whole count %d", fen, s, want)
						}
						sum = sum.AddCount(n)
						st, err := c.Stats(ctx, &p, depth, s)
						if err != nil {
							t.Fatal(err)
						}
						if st[PerftStatNodes] != n {
							t.Errorf("%s slice %+v: statistics count %v nodes, the count %v", fen, s, st[PerftStatNodes], n)
						}
						sumStats.add(&st)
					}
					if sum != CountOf(want) {
						t.Errorf("%s ply %d, %d slices: sum %v, want %d", fen, ply, of, sum, want)
					}
					if sumStats.Narrow() != wantStats {
						t.Errorf("%s ply %d, %d slices: statistics\n got %+v\nwant %+v", fen, ply, of, sumStats.Narrow(), wantStats)
					}
				}
			}
		}
	}
}

// TestPerftCounterWide runs the 128-bit sums (made shallow) with and
// without slices and checks that a cancelled context stops a count.
func TestPerftCounterWide(t *testing.T) {
	p := mustFEN(t, StartFEN)
	c := NewPerftCounter(NewPerftTable(4), NewPerftStatsTable(4))
	c.narrow = 1
	ctx := context.Background()
	if n, err := c.Count(ctx, &p, 5, PerftSlice{}); err != nil || n != CountOf(4865609) {
		t.Fatalf("perft 5 through the wide sums: %v, %v", n, err)
	}
	var sum Count
	for i := 0; i < 2; i++ {
		n, err := c.Count(ctx, &p, 5, PerftSlice{Of: 2, Index: i, Ply: 2})
		if err != nil {
			t.Fatal(err)
		}
		sum = sum.AddCount(n)
	}
	if sum != CountOf(4865609) {
		t.Fatalf("two slices of perft 5 through the wide sums: %v", sum)
	}
	st, err := c.Stats(ctx, &p, 5, PerftSlice{})
	if err != nil || st.Narrow() != refStats(&p, 5) {
		t.Fatalf("statistics of perft 5 through the wide sums: %+v, %v", st.Narrow(), err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Count(cancelled, &p, 5, PerftSlice{}); err == nil {
		t.Error("a cancelled count returned")
	}
	if _, err := c.Stats(cancelled, &p, 5, PerftSlice{}); err == nil {
		t.Error("cancelled statistics returned")
	}
	for _, s := range []PerftSlice{{Of: 2, Index: 2, Ply: 1}, {Of: 2, Index: 0, Ply: 5}, {Of: 2, Index: 0, Ply: 0}, {Of: 1, Index: 1}, {Of: MaxPerftSlices + 1, Ply: 1}} {
		if _, err := c.Count(ctx, &p, 5, s); err == nil {
			t.Errorf("slice %+v of depth 5 accepted", s)
		}
	}
}

// TestPerftSliceBalance: two slices of the start position's key positions
// split its perft 6 roughly in half (the deal is a hash, so no slice is
// starved).
func TestPerftSliceBalance(t *testing.T) {
	p := mustFEN(t, StartFEN)
	c := NewPerftCounter(NewPerftTable(16), nil)
	a, err := c.Count(context.Background(), &p, 6, PerftSlice{Of: 2, Index: 0, Ply: 3})
	if err != nil {
		t.Fatal(err)
	}
	share := a.Float() / 119060324
	if share < 0.35 || share > 0.65 {
		t.Errorf("slice 0 of 2 holds %.2f of perft 6", share)
	}
}
