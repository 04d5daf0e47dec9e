package coordinator

import (
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

func runs(cs ...uint64) []store.Run {
	var out []store.Run
	for _, c := range cs {
		out = append(out, store.Run{Counts: []uint64{c}})
	}
	return out
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name     string
		runs     []store.Run
		required int
		settled  bool
		value    uint64
		want     int
		disputed bool
		failed   bool
	}{
		{"none", nil, 1, false, 0, 1, false, false},
		{"none verified", nil, 2, false, 0, 2, false, false},
		{"one", runs(7), 1, true, 7, 0, false, false},
		{"one of two", runs(7), 2, false, 0, 1, false, false},
		{"two agree", runs(7, 7), 2, true, 7, 0, false, false},
		{"mismatch", runs(7, 8), 2, false, 0, 1, true, false},
		{"late duplicate differs", runs(7, 8), 1, false, 0, 1, true, false},
		{"third settles", runs(7, 8, 7), 2, true, 7, 0, true, false},
		{"third settles other", runs(7, 8, 8), 2, true, 8, 0, true, false},
		{"three ways", runs(7, 8, 9), 2, false, 0, 1, true, false},
		{"verified then late wrong", runs(7, 7, 9), 2, true, 7, 0, true, false},
		{"exhausted", runs(1, 2, 3, 4, 5), 2, false, 0, 0, true, true},
	}
	for _, c := range cases {
		v := judge(c.runs, c.required, 5)
		if v.settled != c.settled || v.want != c.want || v.disputed != c.disputed || v.failed != c.failed {
			t.Errorf("%s: got %+v", c.name, v)
			continue
		}
		if c.settled && v.counts[0] != c.value {
			t.Errorf("%s: settled on %d, want %d", c.name, v.counts[0], c.value)
		}
	}
}
