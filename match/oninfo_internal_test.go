package match

import "testing"

func TestPrimaryPVMove(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"info depth 5 seldepth 7 multipv 1 score cp 20 nodes 100 pv e2e4 e7e5", "e2e4"},
		{"info depth 5 score cp 20 pv g1f3", "g1f3"},
		{"info depth 5 multipv 2 score cp 10 pv d2d4", ""},
		{"info depth 5 currmove e2e4 currmovenumber 1", ""},
		{"info string pv is printed below", ""},
		{"info depth 5 pv", ""},
		{"info", ""},
	} {
		if got := string(primaryPVMove([]byte(c.line))); got != c.want {
			t.Errorf("%q: got %q, want %q", c.line, got, c.want)
		}
	}
}
