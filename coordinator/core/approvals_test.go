package core

import (
	"context"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// TestPendingJobGetsNoLeaseUntilApproved: a job of an account with role
// user waits, leases nothing, is listed as pending, cannot be approved by
// its submitter (cross-approval), runs once an approver approves it, and a
// refused one is cancelled; after a restart a pending job still waits.
func TestPendingJobGetsNoLeaseUntilApproved(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acc, err := accounts.New(accounts.Config{Store: st, Approval: true, CrossApproval: true})
	if err != nil {
		t.Fatal(err)
	}
	admin := identity.Bootstrap
	if err := acc.Add(ctx, admin, "ursula", "correct horse battery", accounts.User); err != nil {
		t.Fatal(err)
	}
	if err := acc.Add(ctx, admin, "victor", "correct horse battery", accounts.Approver); err != nil {
		t.Fatal(err)
	}
	ursula := identity.Identity{Name: "ursula", Role: identity.Client}
	victor := identity.Identity{Name: "victor", Role: identity.Client}
	wl := newFakeWork()
	open := func() *Core {
		c := New(Config{Now: time.Now, LeaseDuration: 10 * time.Second, LeaseKey: []byte("k"), Approvals: acc.Gate(func(kind string) bool { return kind == "fake" }), Auditor: st}, wl)
		if err := c.Load(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	w := register(t, c, alice, "a")
	ref, err := c.Create(ctx, ursula, "fake", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Lease(ctx, alice, w.ID, 0); ok || err != nil {
		t.Fatalf("a pending job leased a unit: ok=%v err=%v", ok, err)
	}
	if p := c.PendingJobs(); len(p) != 1 || p[0].ID != ref.ID || p[0].State != StatePending {
		t.Fatalf("pending jobs: %+v", p)
	}
	// An approver's own job does not wait.
	own, err := c.Create(ctx, victor, "fake", 1)
	if err != nil || c.Pending(own.ID) {
		t.Fatalf("approver's job: pending=%v err=%v", c.Pending(own.ID), err)
	}
	if err := c.Approve(ctx, ursula, ref.ID); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("a user approved: %v", err)
	}

	// After a restart the job still waits.
	c = open()
	w = register(t, c, alice, "a")
	if !c.Pending(ref.ID) {
		t.Fatal("pending job not pending after a restart")
	}
	g := takeLease(t, c, alice, w)
	if g.Lease.JobID != own.ID {
		t.Fatalf("leased %s, want the approver's job %s only", g.Lease.JobID, own.ID)
	}
	if _, ok, _ := c.Lease(ctx, alice, w.ID, 0); ok {
		t.Fatal("a second lease: the pending job's")
	}
	if err := c.Approve(ctx, victor, ref.ID); err != nil {
		t.Fatal(err)
	}
	if g := takeLease(t, c, alice, w); g.Lease.JobID != ref.ID {
		t.Fatalf("after approval leased %s, want %s", g.Lease.JobID, ref.ID)
	}
	if err := c.Approve(ctx, victor, ref.ID); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("second approval: %v", err)
	}

	// A refusal cancels; the self-approval is refused first.
	vic, err := acc.Get(ctx, "victor")
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.Change(ctx, admin, "victor", accounts.User, vic.State); err != nil {
		t.Fatal(err)
	}
	ref2, err := c.Create(ctx, victor, "fake", 1)
	if err != nil || !c.Pending(ref2.ID) {
		t.Fatalf("job of a demoted approver: pending=%v err=%v", c.Pending(ref2.ID), err)
	}
	if err := acc.Change(ctx, admin, "victor", accounts.Approver, vic.State); err != nil {
		t.Fatal(err)
	}
	if err := c.Refuse(ctx, victor, ref2.ID, "own"); apierr.ReasonOf(err) != apierr.ReasonWrongRole {
		t.Fatalf("self-refusal under cross-approval: %v", err)
	}
	if err := c.Refuse(ctx, admin, ref2.ID, "wrong bounds"); err != nil {
		t.Fatal(err)
	}
	if !wl.jobs[ref2.ID].finished || c.Pending(ref2.ID) {
		t.Fatal("refused job not cancelled")
	}
	log, err := st.AuditLog(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Actor+" "+e.Action+" "+e.Target)
	}
	want := map[string]bool{"victor test.approve " + ref.ID: true, "admin test.refuse " + ref2.ID: true}
	for _, a := range actions {
		delete(want, a)
	}
	if len(want) != 0 {
		t.Fatalf("audit log %v lacks %v", actions, want)
	}
}
