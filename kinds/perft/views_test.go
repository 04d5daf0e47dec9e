package perft

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The divide as it completes: a root move is complete exactly when its
// count is final, counts only grow toward the final divide, and a finished
// job reports its stored divide.
func TestProgressDivide(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	cl := newCluster(t, t.TempDir(), clk)
	// Split at ply 2: units of consecutive positions end inside a root
	// move's positions, so some moves are partly counted for a while.
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 4, SplitPly: 2})
	start := engine.StartPosition()
	final := map[string]string{}
	for _, m := range start.LegalMoves() {
		c := start
		c.MakeMove(m)
		final[start.UCIMove(m)] = fmt.Sprint(engine.Perft(&c, 3))
	}
	p, err := cl.perft.Progress(id)
	if err != nil || len(p.Divide) != 20 {
		t.Fatalf("progress: %+v %v", p, err)
	}
	for _, rc := range p.Divide {
		if rc.Complete || rc.Nodes != "0" || rc.Open == 0 {
			t.Fatalf("before any unit: %+v", rc)
		}
	}
	a := cl.worker(alice, "a")
	sawPartial := false
	for {
		g, ok := cl.lease(alice, a)
		if !ok {
			break
		}
		clk.Advance(time.Second)
		if _, err := cl.core.Submit(context.Background(), alice, a.ID, g.Lease.ID, g.Lease.UnitID, compute(t, g, nil), time.Millisecond); err != nil {
			t.Fatal(err)
		}
		p, err := cl.perft.Progress(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range p.Divide {
			if rc.Complete != (rc.Nodes == final[rc.Move]) {
				t.Fatalf("%s: complete %v with %s of %s", rc.Move, rc.Complete, rc.Nodes, final[rc.Move])
			}
			sawPartial = sawPartial || (!rc.Complete && rc.Nodes != "0")
		}
	}
	if !sawPartial {
		t.Fatal("no root move was seen partly counted")
	}
	p, err = cl.perft.Progress(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range p.Divide {
		if !rc.Complete || rc.Nodes != final[rc.Move] {
			t.Fatalf("finished job: %+v, want %s", rc, final[rc.Move])
		}
	}
	if _, err := cl.perft.Progress("nope"); err == nil {
		t.Fatal("progress of an unknown job")
	}
}

// A running perft job's priority changes through the core, is stored, and
// schedules the next lease.
func TestPerftSetPriority(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Unix(1e9, 0)}
	cl := newCluster(t, dir, clk)
	id := cl.submit(&arbiterv1.PerftSpec{Depth: 4})
	ctx := context.Background()
	if err := cl.core.SetPriority(ctx, identity.Identity{Name: "eve", Role: identity.Client}, id, 3, 2); err == nil {
		t.Fatal("another client changed the priority")
	}
	if err := cl.core.SetPriority(ctx, client, id, 3, 2); err != nil {
		t.Fatal(err)
	}
	if s := cl.job(id).GetPerft(); s.GetPriority() != 3 || s.GetThroughput() != 2 {
		t.Fatalf("after the change: %v", s)
	}
	cl2 := newCluster(t, dir, clk)
	if s := cl2.job(id).GetPerft(); s.GetPriority() != 3 || s.GetThroughput() != 2 {
		t.Fatalf("after a reload: %v", s)
	}
	cands := cl2.perft.Candidates(cl2.worker(alice, "a"), []core.Candidate{})
	if len(cands) != 1 || cands[0].Priority != 3 || cands[0].Share != 2 {
		t.Fatalf("candidates: %+v", cands)
	}
}
