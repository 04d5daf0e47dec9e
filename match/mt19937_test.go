package match

import (
	"slices"
	"testing"
)

// TestMT19937_64 checks the generator against C++'s std::mt19937_64: the
// standard's own check (the 10000th output after seed 5489) and the first
// outputs after Fishtest's -srand, printed by a C++ program (g++, libstdc++).
func TestMT19937_64(t *testing.T) {
	m := newMT19937_64(5489)
	for range 9999 {
		m.next()
	}
	if got := m.next(); got != 9981545732273789042 {
		t.Errorf("10000th output after seed 5489: %d, want 9981545732273789042", got)
	}
	m = newMT19937_64(3141592653)
	for i, want := range []uint64{1558176111911513569, 10615129190287313426, 8818915722602063181} {
		if got := m.next(); got != want {
			t.Errorf("seed 3141592653, output %d: %d, want %d", i+1, got, want)
		}
	}
}

// TestFastchessShuffle: 0..9 shuffled with seed 7 as fastchess's
// Openings::shuffle does it (the same loop in C++ over std::mt19937_64).
func TestFastchessShuffle(t *testing.T) {
	s := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	fastchessShuffle(s, 7)
	if want := []int{5, 7, 8, 0, 3, 2, 1, 4, 9, 6}; !slices.Equal(s, want) {
		t.Errorf("got %v, want %v", s, want)
	}
}
