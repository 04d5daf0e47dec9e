package gamepair

import (
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The rules of one replay against the held result of its batch: an
// agreement counts and confirms the untrusted side of a trusted one; a
// trusted replay that contradicts an untrusted result finds it lying and
// counts; an untrusted replay of a trusted result brands nobody; two
// trusted identities that disagree pause the job.
func TestJudgeReplay(t *testing.T) {
	trusted := func(id string) bool { return strings.HasPrefix(id, "t") }
	res := func(owner, games string) *heldResult {
		return &heldResult{owner: owner, worker: owner + "-w", games: []string{games}}
	}
	for _, tc := range []struct {
		name                 string
		prev, cand           *heldResult
		decided, disputed    bool
		confirmed, liar      string
		liarWorker, pausedBy string
	}{
		{name: "trusted replays a newcomer, agreeing", prev: res("new", "a"), cand: res("t1", "a"), decided: true, confirmed: "new"},
		{name: "newcomer replays the trusted, agreeing", prev: res("t1", "a"), cand: res("new", "a"), decided: true, confirmed: "new"},
		{name: "two trusted agree", prev: res("t1", "a"), cand: res("t2", "a"), decided: true},
		{name: "trusted contradicts a newcomer", prev: res("new", "a"), cand: res("t1", "b"), decided: true, disputed: true,
			liar: "new", liarWorker: "new-w"},
		{name: "newcomer contradicts the trusted", prev: res("t1", "a"), cand: res("new", "b"), disputed: true},
		{name: "two trusted disagree", prev: res("t1", "a"), cand: res("t2", "b"), disputed: true, pausedBy: "t2"},
		{name: "two newcomers disagree", prev: res("n1", "a"), cand: res("n2", "b"), disputed: true},
	} {
		v := judgeReplay(tc.prev, tc.cand, trusted)
		if v.decided != tc.decided || v.disputed != tc.disputed || v.confirmed != tc.confirmed || v.liar != tc.liar ||
			v.liarWorker != tc.liarWorker || (v.pause != "") != (tc.pausedBy != "") {
			t.Errorf("%s: %+v", tc.name, v)
		}
		if tc.pausedBy != "" && !strings.Contains(v.pause, tc.pausedBy) {
			t.Errorf("%s: pause reason %q does not name %s", tc.name, v.pause, tc.pausedBy)
		}
	}
}

// An untrusted identity's held batch goes to trusted replayers only; a
// trusted identity's to any other identity; never to its own.
func TestForIdentityTrust(t *testing.T) {
	trusted := func(id string) bool { return strings.HasPrefix(id, "t") }
	c := newCrossCheck()
	c.held[3] = &heldBatch{results: []*heldResult{{owner: "new"}}}
	c.held[5] = &heldBatch{results: []*heldResult{{owner: "t1"}}}
	for _, tc := range []struct {
		owner string
		want  int
		ok    bool
	}{
		{"t2", 3, true}, {"t1", 3, true}, {"new", 5, true}, {"other", 5, true},
	} {
		if got, ok := c.forIdentity(tc.owner, trusted); got != tc.want || ok != tc.ok {
			t.Errorf("forIdentity(%s) = %d %v, want %d %v", tc.owner, got, ok, tc.want, tc.ok)
		}
	}
	c.distrusted["other"] = "lied"
	if _, ok := c.forIdentity("other", trusted); ok {
		t.Error("an identity excluded from the job replays its batches")
	}
	delete(c.held, 5)
	if _, ok := c.forIdentity("n2", trusted); ok {
		t.Error("a newcomer replays a newcomer's batch")
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
