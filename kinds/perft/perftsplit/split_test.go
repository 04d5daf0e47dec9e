package perftsplit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// TestSplitIsExact: Σ multiplicity × perft(position) reproduces perft and
// divide of the root for several split plies, standard and Chess960.
func TestSplitIsExact(t *testing.T) {
	cases := []struct {
		fen    string
		depth  int
		split  int
		unique int // unique positions at the split ply, when known
	}{
		{engine.StartFEN, 5, 1, 20},
		{engine.StartFEN, 5, 2, 400},
		{engine.StartFEN, 5, 3, 5362},
		{"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 4, 2, 0},
		{"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", 4, 2, 0},
		{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 3, 0},
	}
	for _, c := range cases {
		root, err := engine.ParseFEN(c.fen)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Split(root, c.depth, c.split)
		if err != nil {
			t.Fatal(err)
		}
		if c.unique > 0 && len(plan.Positions) != c.unique {
			t.Errorf("%s ply %d: %d unique positions, want %d", c.fen, c.split, len(plan.Positions), c.unique)
		}
		divide := make([]uint64, len(plan.RootMoves))
		var leaves uint64
		for _, p := range plan.Positions {
			pos, err := engine.ParseFEN(p.FEN)
			if err != nil {
				t.Fatalf("split produced bad FEN %q: %v", p.FEN, err)
			}
			if root.IsChess960() {
				pos.SetChess960(true)
			}
			n := engine.Perft(&pos, plan.Remaining)
			for _, m := range p.Mult {
				divide[m.Root] += m.N * n
				leaves += m.N
			}
		}
		if leaves != plan.Leaves {
			t.Errorf("multiplicities add to %d, leaves %d", leaves, plan.Leaves)
		}
		var total uint64
		var ml engine.MoveList
		root.GenerateMoves(&ml)
		for i, m := range ml.Slice() {
			child := root
			child.MakeMove(m)
			want := engine.Perft(&child, c.depth-1)
			if divide[i] != want {
				t.Errorf("%s: divide %s = %d, want %d", c.fen, plan.RootMoves[i], divide[i], want)
			}
			total += divide[i]
		}
		if want := engine.Perft(&root, c.depth); total != want {
			t.Errorf("%s depth %d split %d: total %d, want %d", c.fen, c.depth, c.split, total, want)
		}
	}
}

func TestBatch(t *testing.T) {
	root := engine.StartPosition()
	plan, _ := Split(root, 6, 2)
	units := plan.Batch(1e18, 64, 4096)
	if len(units) < 50 || len(units) > 64 {
		t.Errorf("%d units for 400 positions and min 64", len(units))
	}
	next := 0
	for _, u := range units {
		if u.First != next || u.End <= u.First {
			t.Fatalf("units not contiguous: %v", units)
		}
		next = u.End
	}
	if next != len(plan.Positions) {
		t.Fatalf("units cover %d of %d positions", next, len(plan.Positions))
	}
	if got := plan.Batch(1, 1, 3); len(got) != 400 {
		t.Errorf("tiny target: %d units, want one per position", len(got))
	}
}

func TestCheck(t *testing.T) {
	start := engine.StartPosition()
	ok := []struct {
		depth int
		n     uint64
	}{{0, 1}, {1, 20}, {2, 400}, {3, 8902}, {3, 9000}}
	for _, c := range ok {
		if err := Check(&start, c.depth, c.n); err != nil {
			t.Errorf("depth %d count %d refused: %v", c.depth, c.n, err)
		}
	}
	bad := []struct {
		depth int
		n     uint64
	}{{0, 2}, {1, 21}, {2, 401}, {3, 0}, {4, 1 << 40}}
	for _, c := range bad {
		if err := Check(&start, c.depth, c.n); !errors.Is(err, ErrImpossible) {
			t.Errorf("depth %d count %d accepted (%v)", c.depth, c.n, err)
		}
	}
	// Stalemate: no moves, so every depth ≥ 1 counts 0.
	stale, _ := engine.ParseFEN("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
	if err := Check(&stale, 3, 0); err != nil {
		t.Errorf("stalemate count 0 refused: %v", err)
	}
	if err := Check(&stale, 3, 1); err == nil {
		t.Error("stalemate count 1 accepted")
	}
}

func TestPositionKeyIgnoresCounters(t *testing.T) {
	a, _ := engine.ParseFEN("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1")
	b, _ := engine.ParseFEN("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 5 9")
	if PositionKey(&a) != PositionKey(&b) {
		t.Fatal("keys differ by move counters")
	}
}

func TestSplitLimits(t *testing.T) {
	kiwi, err := engine.ParseFEN("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = SplitLimited(context.Background(), kiwi, 6, 6, Limits{MaxLeaves: 100_000, MaxPositions: 1 << 30})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "100000") {
		t.Fatalf("leaf limit: %v", err)
	}
	_, err = SplitLimited(context.Background(), kiwi, 6, 4, Limits{MaxLeaves: 1 << 40, MaxPositions: 1000})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "unique positions") {
		t.Fatalf("position limit: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = SplitLimited(ctx, kiwi, 6, 4, DefaultLimits); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled split: %v", err)
	}
}

func TestChooseSplitPlyFor(t *testing.T) {
	start := engine.StartPosition()
	kiwi, _ := engine.ParseFEN("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	for _, c := range []struct {
		name  string
		pos   engine.Position
		depth int
		want  int
	}{
		{"start 7", start, 7, 2},
		{"start 10", start, 10, 5},
		{"start 12", start, 12, 5}, // ply 6 is 119M leaves: over the limit
		{"kiwipete 10", kiwi, 10, 4},
	} {
		if got := ChooseSplitPlyFor(c.pos, c.depth, DefaultLimits); got != c.want {
			t.Errorf("%s: split ply %d, want %d", c.name, got, c.want)
		}
	}
}
