package gamepair

import (
	"slices"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// results makes one held result per value, each of its own identity
// ("id0", "id1", ...): equal values are equal games.
func results(values ...string) []*heldResult {
	out := make([]*heldResult, len(values))
	for i, v := range values {
		out[i] = &heldResult{owner: "id" + string(rune('0'+i)), games: []string{v}}
	}
	return out
}

// Two identities that agree settle a batch; a mismatch waits for a third,
// whose majority settles it against the other; no majority after four
// results drops them.
func TestSettleHeld(t *testing.T) {
	for _, tc := range []struct {
		values   []string
		decided  bool
		winner   int
		losers   []string
		disputed bool
		failed   bool
	}{
		{values: []string{"a"}},
		{values: []string{"a", "a"}, decided: true, winner: 0},
		{values: []string{"a", "b"}, disputed: true},
		{values: []string{"a", "b", "b"}, decided: true, winner: 1, losers: []string{"id0"}, disputed: true},
		{values: []string{"a", "b", "a"}, decided: true, winner: 0, losers: []string{"id1"}, disputed: true},
		{values: []string{"a", "b", "c"}, disputed: true},
		{values: []string{"a", "b", "c", "c"}, decided: true, winner: 2, losers: []string{"id0", "id1"}, disputed: true},
		{values: []string{"a", "b", "c", "d"}, disputed: true, failed: true},
		{values: []string{"a", "b", "a", "b"}, disputed: true, failed: true},
	} {
		v := settleHeld(results(tc.values...))
		if v.decided != tc.decided || v.disputed != tc.disputed || v.failed != tc.failed ||
			(v.decided && (v.winner != tc.winner || !slices.Equal(v.losers, tc.losers))) {
			t.Errorf("%v: %+v; want decided %v winner %d losers %v disputed %v failed %v",
				tc.values, v, tc.decided, tc.winner, tc.losers, tc.disputed, tc.failed)
		}
	}
}

func TestFirstDifference(t *testing.T) {
	a := []string{"e4 e5 1-0 checkmate", "d4 d5 Nf3 1/2-1/2 repetition"}
	b := []string{"e4 e5 1-0 checkmate", "d4 d5 Nc3 1/2-1/2 repetition"}
	if got := firstDifference(a, b); got != `game 1, ply 3: "Nc3" against "Nf3"` {
		t.Errorf("firstDifference = %s", got)
	}
	c := []string{"e4 e5 1-0 checkmate", "d4 d5 Nf3 0-1 time_forfeit"}
	if got := firstDifference(a, c); got != `game 1: 3 plies ending 0-1 time_forfeit against 3 ending 1/2-1/2 repetition` {
		t.Errorf("firstDifference = %s", got)
	}
}

// Selected: never at 0, always at 1, about as often as asked between.
func TestSelected(t *testing.T) {
	n := 0
	for range 4000 {
		if Selected(0) {
			t.Fatal("selected at fraction 0")
		}
		if !Selected(1) {
			t.Fatal("not selected at fraction 1")
		}
		if Selected(0.25) {
			n++
		}
	}
	// 1000 expected, σ ≈ 27: outside [800, 1200] is a broken draw.
	if n < 800 || n > 1200 {
		t.Errorf("%d of 4000 selected at 0.25", n)
	}
}

// Only tests whose engines are both deterministic at a fixed node count
// are checked by a replay.
func TestCrossCheckable(t *testing.T) {
	nodes := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}}
	depth := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Depth{Depth: 5}}
	builtin := &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Options: map[string]string{"Hash": "8"}}
	one := &arbiterv1.EngineSpec{Name: "b", Protocol: "builtin", Options: map[string]string{"threads": "1"}}
	two := &arbiterv1.EngineSpec{Name: "c", Command: "embedded", Options: map[string]string{"Threads": "2"}}
	sf := &arbiterv1.EngineSpec{Name: "sf", Command: "stockfish"}
	sfUpload := &arbiterv1.EngineSpec{Name: "sf", Command: "stockfish", Artifact: &arbiterv1.EngineArtifact{}}
	clockOdds := &arbiterv1.EngineSpec{Name: "d", Command: "embedded",
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{}}}
	plain := Settings{}
	declared := Settings{DeterministicEngines: []string{"stockfish"}}
	for _, tc := range []struct {
		s    Settings
		tc   *arbiterv1.TimeControl
		a, b *arbiterv1.EngineSpec
		want bool
	}{
		{plain, nodes, builtin, one, true},
		{plain, depth, builtin, one, false},
		{plain, nodes, builtin, two, false},
		{plain, nodes, builtin, sf, false},
		{declared, nodes, builtin, sf, true},
		{declared, nodes, builtin, sfUpload, false},
		{plain, nodes, builtin, clockOdds, false},
	} {
		if got := tc.s.CrossCheckable(tc.tc, tc.a, tc.b); got != tc.want {
			t.Errorf("%v, %s vs %s (declared %v): %v, want %v", tc.tc, tc.a, tc.b, tc.s.DeterministicEngines, got, tc.want)
		}
	}
}

// A parked batch is out of the hand-out until it is stored, or unparked
// and reopened.
func TestBatchesPark(t *testing.T) {
	b := NewBatches(2)
	now := time.Now()
	i, _ := b.Take("w1", now)
	j, _ := b.Take("w2", now)
	b.Park(i)
	if b.Free(i) || b.Available() || b.Leased() != 1 {
		t.Fatalf("parked batch %d: free %v, available %v, leased %d", i, b.Free(i), b.Available(), b.Leased())
	}
	b.Store(j)
	b.Unpark(i)
	if !b.Reopen(i) || !b.Available() {
		t.Fatal("an unparked batch is not reopened")
	}
	if k, ok := b.Take("w3", now); !ok || k != i {
		t.Fatalf("took %d %v, want %d", k, ok, i)
	}
	b.Park(i)
	b.Store(i)
	if b.Parked(i) || !b.Stored(i) {
		t.Fatal("a stored batch stays parked")
	}
}
