package test

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// dave is a client that did not submit the tests.
var dave = identity.Identity{Name: "dave", Role: identity.Client}

// A running match's game cap changes within what its batches allow: the
// new batches are leased and the test ends at the new cap; a cap below the
// batches handed out, an odd one, one that splits a batch, or any change
// by a client who did not submit the test are refused and change nothing.
// The change is stored: a restart keeps it.
func TestModifyGameCap(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	id := e.create(matchSpec(8, 2, 4)) // 4 pairs in 2 batches
	w := e.Worker("a", DefaultReferenceNPS)
	g, g2 := e.MustLease(w), e.MustLease(w)
	games := func(n uint64) core.Modification { return core.Modification{Games: &n} }
	for _, c := range []struct {
		m    core.Modification
		want string
	}{
		{games(7), "odd"},
		{games(10), "multiple of 4"},
		{games(0), "needs a number of games"},
		{games(4), "fewer than"},
	} {
		if err := e.C.Modify(ctx, carol, id, c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v, want %q", c.m, err, c.want)
		}
	}
	if err := e.C.Modify(ctx, dave, id, games(16)); err == nil || !strings.Contains(err.Error(), "submitted by") {
		t.Fatalf("another client's change: %v", err)
	}
	if j := e.Job(id); j.GetMatch().GetGames() != 8 || j.GetProgress().GetUnitsTotal() != 2 {
		t.Fatalf("refused changes changed the test: %v", j.GetMatch().GetGames())
	}
	notes := "raised"
	if err := e.C.Modify(ctx, carol, id, core.Modification{Games: func() *uint64 { n := uint64(16); return &n }(), Notes: &notes}); err != nil {
		t.Fatal(err)
	}
	if j := e.Job(id); j.GetMatch().GetGames() != 16 || j.GetProgress().GetUnitsTotal() != 4 || j.GetMatch().GetNotes() != "raised" {
		t.Fatalf("after raising the cap: games %d, units %d", j.GetMatch().GetGames(), j.GetProgress().GetUnitsTotal())
	}
	e.MustSubmit(w, g, draws(2), core.Accepted)
	e.MustSubmit(w, g2, draws(2), core.Accepted)
	e.Restart()
	w = e.Worker("a", DefaultReferenceNPS)
	if j := e.Job(id); j.GetMatch().GetGames() != 16 || j.GetProgress().GetUnitsTotal() != 4 {
		t.Fatalf("after a restart: games %d, units %d", j.GetMatch().GetGames(), j.GetProgress().GetUnitsTotal())
	}
	for i := 0; i < 2; i++ {
		e.MustSubmit(w, e.MustLease(w), draws(2), core.Accepted)
	}
	if j := e.Job(id); j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetMatchProgress().GetGames() != 16 {
		t.Fatalf("at the new cap: %v, %d games", j.GetState(), j.GetMatchProgress().GetGames())
	}
	if err := e.C.Modify(ctx, carol, id, games(20)); err == nil || !strings.Contains(err.Error(), "already done") {
		t.Fatalf("change of a finished test: %v", err)
	}
}

// A stopped SPRT is marked stopped by hand; resumed, it leases again and
// counts on from where it stood, no longer marked.
func TestResumeStoppedSPRT(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	id := e.create(sprtSpec(2))
	w := e.Worker("a", DefaultReferenceNPS)
	e.MustSubmit(w, e.MustLease(w), draws(2), core.Accepted)
	if err := e.C.Resume(ctx, carol, id); err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("resume of a running test: %v", err)
	}
	if err := e.C.Cancel(ctx, carol, id, "stopped by alice"); err != nil {
		t.Fatal(err)
	}
	if j := e.Job(id); !j.GetMatchProgress().GetStoppedByHand() {
		t.Fatal("a stopped SPRT is not marked")
	}
	if err := e.C.Resume(ctx, dave, id); err == nil {
		t.Fatal("another client resumed it")
	}
	if err := e.C.Resume(ctx, carol, id); err != nil {
		t.Fatal(err)
	}
	j := e.Job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || j.GetMatchProgress().GetStoppedByHand() || j.GetMatchProgress().GetGames() != 4 {
		t.Fatalf("resumed: %v, marked %v, %d games", j.GetState(), j.GetMatchProgress().GetStoppedByHand(), j.GetMatchProgress().GetGames())
	}
	e.MustSubmit(w, e.MustLease(w), draws(2), core.Accepted)
	if j := e.Job(id); j.GetMatchProgress().GetGames() != 8 {
		t.Fatalf("after resuming: %d games", j.GetMatchProgress().GetGames())
	}
}
