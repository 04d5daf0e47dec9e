package gamepair

import (
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A missing spec (none, a nil one, one of another type) is refused naming
// what was expected; a book over MaxOpenings is refused; a good spec is a
// copy the workload may change.
func TestSpecOf(t *testing.T) {
	for _, in := range []any{nil, (*arbiterv1.SpsaSpec)(nil), &arbiterv1.MatchSpec{}} {
		if _, err := SpecOf[*arbiterv1.SpsaSpec](in, "spsa spec"); err == nil || err.Error() != "spsa spec missing" {
			t.Errorf("%T: %v", in, err)
		}
	}
	big := &arbiterv1.MatchSpec{Openings: make([]*arbiterv1.Opening, MaxOpenings+1)}
	if _, err := SpecOf[*arbiterv1.MatchSpec](big, "match spec"); err == nil || !strings.Contains(err.Error(), "openings: 1000001") {
		t.Errorf("a big book: %v", err)
	}
	in := &arbiterv1.SpsaSpec{Pairs: 10, Openings: []*arbiterv1.Opening{{Fen: "x"}}}
	out, err := SpecOf[*arbiterv1.SpsaSpec](in, "spsa spec")
	if err != nil || out == in || out.GetPairs() != 10 || len(out.GetOpenings()) != 1 {
		t.Fatalf("a good spec: %v %v", out, err)
	}
	out.Pairs = 20
	if in.GetPairs() != 10 {
		t.Error("the copy shares the caller's spec")
	}
}
