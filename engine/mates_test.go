package engine

import (
	"sync"
	"sync/atomic"
	"testing"
)

// matesBelow counts the positions depth plies below p that are
// checkmate, with the search's move generator (LegalMoves, InCheck,
// HasLegalMove), not perft's counter: a second implementation for the
// statistics' checkmates column. It also returns the leaves.
func matesBelow(p Position, depth int) (mates, leaves uint64) {
	var m, n atomic.Uint64
	var wg sync.WaitGroup
	for _, mv := range p.LegalMoves() {
		q := p
		q.MakeMove(mv)
		wg.Go(func() {
			mm, nn := walkMates(&q, depth-1)
			m.Add(mm)
			n.Add(nn)
		})
	}
	wg.Wait()
	return m.Load(), n.Load()
}

// walkMates counts the mates and leaves depth plies below p (depth ≥ 1).
func walkMates(p *Position, depth int) (mates, leaves uint64) {
	for _, mv := range p.LegalMoves() {
		q := *p
		q.MakeMove(mv)
		if depth > 1 {
			m, n := walkMates(&q, depth-1)
			mates, leaves = mates+m, leaves+n
			continue
		}
		leaves++
		if q.InCheck() && !q.HasLegalMove() {
			mates++
		}
	}
	return mates, leaves
}

// TestStartposD7MatesBySearchMovegen counts the start position's
// checkmates at depths 5 and 6 (CPW: 347, 10828) always, and at depth 7
// with ARBITER_PERFT_FULL=1 (about a CPU-minute): 435767, CPW's figure,
// where the Grand Chess Tree reported 435765 (see cpwDisputed).
func TestStartposD7MatesBySearchMovegen(t *testing.T) {
	p, err := ParseFEN("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		depth         int
		mates, leaves uint64
	}{{5, 347, 4865609}, {6, 10828, 119060324}}
	if perftFull() {
		want = append(want, struct {
			depth         int
			mates, leaves uint64
		}{7, 435767, 3195901860})
	}
	for _, w := range want {
		if testing.Short() && w.depth > 5 {
			break
		}
		m, n := matesBelow(p, w.depth)
		if m != w.mates || n != w.leaves {
			t.Errorf("depth %d: %d mates in %d leaves, want %d in %d", w.depth, m, n, w.mates, w.leaves)
		}
	}
}
