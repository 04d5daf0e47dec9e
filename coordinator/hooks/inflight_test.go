package hooks

import "testing"

// TestInFlightBudgets: a delivery is attempted once at a time; an owner
// gets at most perOwner places, everyone together at most total; a place
// given back is taken again.
func TestInFlightBudgets(t *testing.T) {
	f := newInFlight(2, 3)
	for _, c := range []struct {
		id, owner string
		want      bool
	}{
		{"m1", "mallory", true},
		{"m1", "mallory", false}, // the same delivery twice at once
		{"m2", "mallory", true},
		{"m3", "mallory", false}, // mallory's budget
		{"b1", "bob", true},      // bob is not held by mallory
		{"c1", "carol", false},   // the budget in all
	} {
		if got := f.start(c.id, c.owner); got != c.want {
			t.Fatalf("start(%s, %s) = %v, want %v", c.id, c.owner, got, c.want)
		}
	}
	f.done("m1", "mallory")
	if !f.start("c1", "carol") {
		t.Fatal("a place given back is not taken again")
	}
	if f.start("m3", "mallory") {
		t.Fatal("past the budget in all")
	}
}
