package match

import (
	"fmt"
	"strings"
	"testing"
)

func TestScheduleRoundRobin(t *testing.T) {
	s, err := NewSchedule(3, RoundRobin, 0, 2, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.Pairings()) != "[[0 1] [0 2] [1 2]]" || s.Len() != 12 || s.Repeat != 2 || !s.Paired() {
		t.Fatalf("pairings %v, len %d, repeat %d", s.Pairings(), s.Len(), s.Repeat)
	}
	// Round 1: each pairing plays its pair (first engine white first)
	// from its own opening; round 2 the next openings.
	var got []string
	for k := 0; k < s.Len(); k++ {
		g := s.Game(k)
		got = append(got, fmt.Sprintf("%s:%d-%d@%d", g.RoundTag(), g.White, g.Black, g.Unit))
	}
	want := "1.1:0-1@0 1.2:1-0@0 1.3:0-2@1 1.4:2-0@1 1.5:1-2@2 1.6:2-1@2 " +
		"2.1:0-1@3 2.2:1-0@3 2.3:0-2@4 2.4:2-0@4 2.5:1-2@5 2.6:2-1@5"
	if strings.Join(got, " ") != want {
		t.Fatalf("schedule\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestScheduleGauntlet(t *testing.T) {
	s, err := NewSchedule(4, Gauntlet, 0, 1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.Pairings()) != "[[0 1] [0 2] [0 3]]" || s.Seeds != 1 {
		t.Fatalf("pairings %v seeds %d", s.Pairings(), s.Seeds)
	}
	s, err = NewSchedule(4, Gauntlet, 2, 1, 2, 2)
	if err != nil || fmt.Sprint(s.Pairings()) != "[[0 1] [0 2] [0 3] [1 2] [1 3]]" {
		t.Fatalf("two seeds: %v %v", s.Pairings(), err)
	}
}

// Single games with cutechess's habits: one game per pairing and round,
// colours alternating over the rounds, a new opening every game.
func TestScheduleSingleGames(t *testing.T) {
	s, err := NewSchedule(2, RoundRobin, 0, 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Repeat != 1 || s.Paired() {
		t.Fatalf("repeat %d", s.Repeat)
	}
	for k := 0; k < 4; k++ {
		g := s.Game(k)
		if g.White != k%2 || g.Unit != k {
			t.Errorf("game %d: %+v", k, g)
		}
	}
	// Many games per round, in pairs (cutechess -games 10 -repeat).
	s, err = NewSchedule(2, RoundRobin, 0, 1, 10, 0)
	if err != nil || s.Repeat != 2 || s.Game(9).Unit != 4 || s.Game(9).White != 1 {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestScheduleUnbounded(t *testing.T) {
	s, err := NewSchedule(2, RoundRobin, 0, 0, 2, 2)
	if err != nil || s.Len() != -1 {
		t.Fatal(s, err)
	}
	if g := s.Game(2_000_001); g.Round != 1_000_000 || g.White != 1 || g.Unit != 1_000_000 {
		t.Errorf("%+v", g)
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		engines, seeds, rounds, games, repeat int
		kind                                  Kind
		want                                  string
	}{
		{1, 0, 1, 2, 2, RoundRobin, "at least two engines"},
		{3, 0, -1, 2, 2, RoundRobin, "negative"},
		{3, 0, 1, 3, 2, RoundRobin, "multiple of repeat"},
		{3, 1, 1, 2, 2, RoundRobin, "seeds are for a gauntlet"},
		{3, 3, 1, 2, 2, Gauntlet, "want 1..2"},
		{3, 0, 1, 2, 2, "swiss", `"swiss"`},
		{3, 0, 1 << 29, 2, 2, RoundRobin, "more than"},
	} {
		_, err := NewSchedule(c.engines, c.kind, c.seeds, c.rounds, c.games, c.repeat)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}

// TestScheduleNoSwapReverse: -noswap keeps the pairing's first engine
// white (the units are then no colour-swapped pairs), -reverse gives it
// black first; fastchess 1.8.2 plays the same colours.
func TestScheduleNoSwapReverse(t *testing.T) {
	colours := func(s *Schedule) string {
		var c []string
		for k := 0; k < s.Len(); k++ {
			c = append(c, fmt.Sprintf("%d-%d", s.Game(k).White, s.Game(k).Black))
		}
		return strings.Join(c, " ")
	}
	for _, c := range []struct {
		noswap, reverse bool
		want            string
		paired          bool
	}{
		{false, false, "0-1 1-0 0-1 1-0", true},
		{true, false, "0-1 0-1 0-1 0-1", false},
		{false, true, "1-0 0-1 1-0 0-1", true},
		{true, true, "1-0 1-0 1-0 1-0", false},
	} {
		s, err := NewSchedule(2, RoundRobin, 0, 2, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		plain := *s
		s.NoSwap, s.Reverse = c.noswap, c.reverse
		if got := colours(s); got != c.want || s.Paired() != c.paired {
			t.Errorf("noswap %v reverse %v: %s paired %v, want %s paired %v", c.noswap, c.reverse, got, s.Paired(), c.want, c.paired)
		}
		if (c.noswap || c.reverse) && s.Same(&plain) {
			t.Errorf("noswap %v reverse %v: Same as the plain schedule (a state would resume with other colours)", c.noswap, c.reverse)
		}
	}
}
