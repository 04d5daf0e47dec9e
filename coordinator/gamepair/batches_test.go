package gamepair

import (
	"testing"
	"time"
)

// Batches go out in order, re-opened ones first; stored and leased ones are
// skipped, each index is passed once, and nothing past the end is handed
// out.
func TestBatches(t *testing.T) {
	now := time.Unix(1, 0)
	b := NewBatches(5)
	take := func(w string) int {
		t.Helper()
		idx, ok := b.Take(w, now)
		if !ok {
			t.Fatalf("no batch for %s", w)
		}
		return idx
	}
	if take("a") != 0 || take("b") != 1 {
		t.Fatal("batches out of order")
	}
	b.Hold(3, "c", now) // adopted ahead of next after a restart
	b.Store(2)          // counted from a late result
	if got := take("a"); got != 4 {
		t.Fatalf("next fresh batch %d, want 4 (2 stored, 3 held)", got)
	}
	if b.Drop(1, "a") {
		t.Fatal("a dropped b's lease")
	}
	if !b.Drop(1, "b") || !b.Reopen(1) || b.Reopen(2) {
		t.Fatal("re-opening batch 1 (free) or 2 (stored)")
	}
	if b.Leased() != 3 || b.Workers() != 2 {
		t.Fatalf("%d leased by %d workers, want 3 by 2", b.Leased(), b.Workers())
	}
	if got := take("b"); got != 1 {
		t.Fatalf("re-opened batch first: got %d", got)
	}
	if _, ok := b.Take("d", now); ok || b.Available() {
		t.Fatal("a batch past the end")
	}
	if h, ok := b.Holder(3); !ok || h.Worker != "c" || b.Free(3) || !b.InRange(4) || b.InRange(5) || b.InRange(-1) {
		t.Fatalf("holder of 3: %v %v", h, ok)
	}
	b.Store(3)
	if b.Leased() != 3 || !b.Stored(3) {
		t.Fatalf("after storing 3: %d leased", b.Leased())
	}
}
