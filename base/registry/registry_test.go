package registry

import (
	"slices"
	"testing"
)

// Entries come back by name; a second Add of a name and an empty name
// panic, Set replaces.
func TestRegistry(t *testing.T) {
	r := New[int]("thing")
	r.Add("b", 2)
	r.Add("a", 1)
	if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names %v", got)
	}
	if got := r.All(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("All %v", got)
	}
	r.Set("a", 10)
	if v, ok := r.Get("a"); !ok || v != 10 {
		t.Errorf("Get a after Set: %d %v", v, ok)
	}
	if _, ok := r.Get("c"); ok {
		t.Error("Get c: found")
	}
	for _, name := range []string{"a", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Add(%q) did not panic", name)
				}
			}()
			r.Add(name, 3)
		}()
	}
}
