package test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A group of two takes: each take's SPRT runs at alpha/2 (its upper LLR
// bound is ln((1−β)/(α/2))), both are listed on each take, a third take
// and a take declaring another number are refused. The control: a test of
// its own keeps ln((1−β)/α).
func TestGroupOfTakes(t *testing.T) {
	e := newEnv(t, Config{})
	take := func(group string, takes uint32) *arbiterv1.MatchSpec {
		s := sprtSpec(2)
		s.Group, s.GroupTakes = group, takes
		return s
	}
	id1 := e.create(take("Idea-1", 2))
	id2 := e.create(take("idea-1", 2))
	wantUpper := math.Log(0.95 / 0.025)
	for _, id := range []string{id1, id2} {
		j := e.Job(id)
		mp := j.GetMatchProgress()
		if math.Abs(mp.GetUpperBound()-wantUpper) > 1e-12 {
			t.Fatalf("take %s: upper bound %g, want ln(0.95/0.025) = %g", id, mp.GetUpperBound(), wantUpper)
		}
		if j.GetMatch().GetGroup() != "idea-1" || j.GetMatch().GetSprt().GetAlpha() != 0.05 {
			t.Fatalf("take %s: group %q, family alpha %g", id, j.GetMatch().GetGroup(), j.GetMatch().GetSprt().GetAlpha())
		}
		takes := mp.GetGroupTakes()
		if len(takes) != 2 || takes[0].GetJobId() != id1 || takes[1].GetJobId() != id2 || takes[0].GetAlpha() != 0.025 {
			t.Fatalf("take %s lists %v", id, takes)
		}
	}
	e.Refused(Kind, take("idea-1", 2), "group \"idea-1\" already has its 2 takes")
	e.Refused(Kind, take("idea-1", 3), "group \"idea-1\" was declared with 2 takes")

	alone := e.Job(e.create(sprtSpec(2))).GetMatchProgress()
	if math.Abs(alone.GetUpperBound()-math.Log(0.95/0.05)) > 1e-12 || alone.GetGroupTakes() != nil {
		t.Fatalf("a test of its own: upper bound %g, takes %v", alone.GetUpperBound(), alone.GetGroupTakes())
	}
}

// Eight takes submitted at once to a group of three: exactly three are
// admitted, the others refused as the group's being full.
func TestGroupTakesRaceForTheLastPlace(t *testing.T) {
	e := newEnv(t, Config{})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sprtSpec(2)
			s.Group, s.GroupTakes = "race", 3
			_, errs[i] = e.C.Create(context.Background(), carol, Kind, s)
		}()
	}
	wg.Wait()
	admitted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			admitted++
		case !strings.Contains(err.Error(), "already has its 3 takes"):
			t.Errorf("refused for another reason: %v", err)
		}
	}
	if admitted != 3 {
		t.Fatalf("%d takes admitted to a group of 3", admitted)
	}
}
