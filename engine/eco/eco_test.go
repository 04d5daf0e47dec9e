package eco

import (
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// TestLookup: positions reached by real moves are named as fastchess's
// table names them; the start position and a position off the table are
// not (the control).
func TestLookup(t *testing.T) {
	play := func(moves ...string) string {
		pos := engine.StartPosition()
		for _, s := range moves {
			m, err := pos.ParseUCIMove(s)
			if err != nil {
				t.Fatal(err)
			}
			pos.MakeMove(m)
		}
		return pos.IdentityFEN()
	}
	cases := []struct {
		moves []string
		want  Opening
		ok    bool
	}{
		{[]string{"e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "g8f6"}, Opening{"C65", "Ruy Lopez: Berlin Defense"}, true},
		{[]string{"e2e4", "c7c5"}, Opening{"B20", "Sicilian Defense"}, true},
		// An en passant square that a pawn can take is part of the key.
		{[]string{"d2d4", "c7c5", "d4d5", "e7e5"}, Opening{"A44", "Benoni Defense: Old Benoni"}, true},
		{nil, Opening{}, false},
		{[]string{"a2a3", "h7h6", "h2h3", "a7a6"}, Opening{}, false},
	}
	for _, c := range cases {
		got, ok := Lookup(play(c.moves...))
		if ok != c.ok || got != c.want {
			t.Errorf("%v: got %+v %v, want %+v %v", c.moves, got, ok, c.want, c.ok)
		}
	}
	if n := len(byFEN); n != 3536 {
		t.Errorf("%d openings loaded, fastchess 1.8.2's table has 3536", n)
	}
}
