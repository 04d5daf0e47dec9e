package lease

import (
	"strings"
	"testing"
	"time"
)

var key = []byte("test key")

func TestGrantExtendExpire(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := New(10*time.Second, "b1", key)
	a := m.Grant("u1", "j", "w1", t0)
	b := m.Grant("u2", "j", "w2", t0)
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
	if len(m.ForUnit("u2")) != 0 || len(m.ForUnit("u1")) != 1 || m.CountJob("j") != 1 {
		t.Fatal("unit or job index wrong")
	}
	if exp := m.Expire(t0.Add(17 * time.Second)); len(exp) != 0 {
		t.Fatalf("expired too early: %v", exp)
	}
	if exp := m.Expire(t0.Add(18 * time.Second)); len(exp) != 1 {
		t.Fatalf("not expired at deadline: %v", exp)
	}
	if m.Len() != 0 || m.CountJob("j") != 0 {
		t.Fatalf("%d leases left", m.Len())
	}
}

func TestExpireOrderAndEnd(t *testing.T) {
	t0 := time.Unix(0, 0)
	m := New(time.Second, "b", key)
	var ids []string
	for i := 0; i < 50; i++ {
		ids = append(ids, m.Grant("u", "j", "w", t0.Add(time.Duration(49-i)*time.Millisecond)).ID)
	}
	m.End(ids[10])
	exp := m.Expire(t0.Add(time.Hour))
	if len(exp) != 49 {
		t.Fatalf("expired %d, want 49", len(exp))
	}
	for i := 1; i < len(exp); i++ {
		if exp[i].Deadline.Before(exp[i-1].Deadline) {
			t.Fatal("not earliest first")
		}
	}
}

func TestSigned(t *testing.T) {
	t0 := time.Unix(0, 0)
	m := New(time.Second, "boot1", key)
	l := m.Grant("job.3", "job", "w-1", t0)
	if !m.Signed(l.ID, "job.3", "w-1") {
		t.Fatal("own lease not signed")
	}
	// Another run of the coordinator with the same key recognises it.
	later := New(time.Second, "boot2", key)
	if !later.Signed(l.ID, "job.3", "w-1") {
		t.Fatal("lease of an earlier run not recognised")
	}
	for _, c := range []struct{ id, unit, worker string }{
		{l.ID, "job.4", "w-1"}, // another unit
		{l.ID, "job.3", "w-2"}, // another worker
		{l.ID + "0", "job.3", "w-1"},
		{"boot1-1", "job.3", "w-1"},
		{"", "job.3", "w-1"},
		{strings.Repeat("a", 40), "job.3", "w-1"},
	} {
		if m.Signed(c.id, c.unit, c.worker) {
			t.Errorf("Signed(%q, %q, %q) = true", c.id, c.unit, c.worker)
		}
	}
	other := New(time.Second, "boot1", []byte("another key"))
	if other.Signed(l.ID, "job.3", "w-1") {
		t.Fatal("a different key accepted the lease")
	}
	a := m.Adopt(l.ID, "job.3", "job", "w-1", t0)
	if a.ID != l.ID || m.Len() != 1 {
		t.Fatal("adopt")
	}
}
