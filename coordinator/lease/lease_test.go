package lease

import (
	"testing"
	"time"
)

func TestGrantExtendExpire(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := New(10*time.Second, "b1")
	a := m.Grant("u1", "w1", t0)
	b := m.Grant("u2", "w2", t0)
	if a.ID == b.ID {
		t.Fatal("lease ids repeat")
	}
	if !a.Deadline.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("deadline %v", a.Deadline)
	}
	// A heartbeat at t0+8s extends a to t0+18s; b is not extended.
	if _, ok := m.Extend(a.ID, "w1", t0.Add(8*time.Second)); !ok {
		t.Fatal("extend failed")
	}
	if _, ok := m.Extend(a.ID, "w2", t0.Add(8*time.Second)); ok {
		t.Fatal("another worker extended a lease")
	}
	exp := m.Expire(t0.Add(10 * time.Second))
	if len(exp) != 1 || exp[0].ID != b.ID {
		t.Fatalf("expired %v, want only %s", exp, b.ID)
	}
	if _, ok := m.Get(b.ID); ok {
		t.Fatal("expired lease still live")
	}
	if len(m.ForUnit("u2")) != 0 || len(m.ForUnit("u1")) != 1 {
		t.Fatal("unit index wrong")
	}
	if exp := m.Expire(t0.Add(17 * time.Second)); len(exp) != 0 {
		t.Fatalf("expired too early: %v", exp)
	}
	if exp := m.Expire(t0.Add(18 * time.Second)); len(exp) != 1 {
		t.Fatalf("not expired at deadline: %v", exp)
	}
	if m.Len() != 0 {
		t.Fatal("leases left")
	}
}

func TestAdoptAndEnd(t *testing.T) {
	t0 := time.Unix(0, 0)
	m := New(time.Second, "b2")
	l := m.Adopt("b1-7", "u1", "w1", t0)
	if l.ID != "b1-7" {
		t.Fatal(l.ID)
	}
	if _, ok := m.Extend("b1-7", "w1", t0.Add(500*time.Millisecond)); !ok {
		t.Fatal("adopted lease not extendable")
	}
	if _, ok := m.End("b1-7"); !ok {
		t.Fatal("end failed")
	}
	if _, ok := m.End("b1-7"); ok {
		t.Fatal("ended twice")
	}
	// Extending never moves a deadline backwards.
	g := m.Grant("u", "w", t0.Add(5*time.Second))
	e, _ := m.Extend(g.ID, "w", t0)
	if !e.Deadline.Equal(g.Deadline) {
		t.Fatal("deadline moved backwards")
	}
}
