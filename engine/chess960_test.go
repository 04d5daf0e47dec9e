package engine

import (
	"strings"
	"testing"
)

// TestChess960BackRank checks Scharnagl's numbering against known
// positions and the rules every start position keeps.
func TestChess960BackRank(t *testing.T) {
	known := map[int]string{0: "BBQNNRKR", 518: "RNBQKBNR", 959: "RKRNNQBB", 1: "BQNBNRKR", 4: "QBBNNRKR"}
	for n, want := range known {
		if got, err := Chess960BackRank(n); err != nil || got != want {
			t.Errorf("SP %d = %q, %v; want %q", n, got, err, want)
		}
	}
	seen := map[string]int{}
	for n := 0; n < Chess960Positions; n++ {
		r, err := Chess960BackRank(n)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[r]; ok {
			t.Fatalf("SP %d and %d are both %s", prev, n, r)
		}
		seen[r] = n
		b1, b2 := strings.IndexByte(r, 'B'), strings.LastIndexByte(r, 'B')
		r1, k, r2 := strings.IndexByte(r, 'R'), strings.IndexByte(r, 'K'), strings.LastIndexByte(r, 'R')
		if (b1+b2)%2 == 0 || !(r1 < k && k < r2) || strings.Count(r, "N") != 2 || strings.Count(r, "Q") != 1 {
			t.Fatalf("SP %d = %s breaks the rules", n, r)
		}
		fen, err := Chess960StartFEN(n)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseFEN(fen)
		if err != nil {
			t.Fatalf("SP %d: %s: %v", n, fen, err)
		}
		p.SetChess960(true)
		if got := Perft(&p, 1); got < 18 || got > 21 {
			// Each start position has 16 pawn moves and 1 or 2 per knight
			// (1 on an edge file), and a castling when king and rook stand on f
			// and g (BQNNRKRB, SP 3): never fewer than 18 nor more than 21.
			t.Fatalf("SP %d: perft 1 = %d", n, got)
		}
	}
	for _, n := range []int{-1, 960} {
		if _, err := Chess960BackRank(n); err == nil || !strings.Contains(err.Error(), "between 0 and 959") {
			t.Errorf("SP %d: %v, want a range error", n, err)
		}
	}
	if fen, _ := Chess960StartFEN(518); fen != "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1" {
		t.Errorf("SP 518 FEN %s", fen)
	}
}
