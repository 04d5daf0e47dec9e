package gamelabel

import (
	"slices"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Every termination the wire defines has its own label, and unknown values
// (from a newer worker) fall back to abandoned / none instead of a new series.
func TestEveryEnumHasALabel(t *testing.T) {
	series := Series()
	seen := map[string]arbiterv1.GameTermination{}
	for v := range arbiterv1.GameTermination_name {
		term := arbiterv1.GameTermination(v)
		l := Termination(term)
		if _, ok := series[l]; !ok {
			t.Errorf("%v -> %q, not a series", term, l)
		}
		if term == arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED {
			continue
		}
		if prev, dup := seen[l]; dup {
			t.Errorf("%v and %v share the label %q", term, prev, l)
		}
		seen[l] = term
	}
	if len(seen) != len(series) {
		t.Errorf("%d terminations have labels, %d series exist", len(seen), len(series))
	}
	if Termination(999) != Abandoned || Result(999) != None {
		t.Error("unknown enum values do not fall back")
	}
	for v := range arbiterv1.GameResult_name {
		r := Result(arbiterv1.GameResult(v))
		if !slices.Contains([]string{White, Black, Draw, None}, r) {
			t.Errorf("result %v -> %q", v, r)
		}
	}
	o := &arbiterv1.GameOutcome{Result: arbiterv1.GameResult_GAME_RESULT_DRAW, Termination: arbiterv1.GameTermination_GAME_TERMINATION_STALEMATE}
	if r, term := Labels(o); r != Draw || term != Stalemate {
		t.Errorf("Labels = %s, %s", r, term)
	}
}
