package quota

import (
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

func TestCallsCountedAndReleased(t *testing.T) {
	g := NewGate(Limits{Calls: 2}, nil)
	c := identity.Identity{Name: "c", Role: identity.Client}
	r1, err := g.AddCall(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddCall(c); err != nil {
		t.Fatal(err)
	}
	_, err = g.AddCall(c)
	if e, ok := apierr.As(err); !ok || e.Code != apierr.ResourceExhausted || e.Reason != apierr.ReasonQuota ||
		!strings.Contains(e.Msg, "2 calls in progress") || !strings.Contains(e.Msg, FlagCalls) {
		t.Fatalf("third call: %v, want RESOURCE_EXHAUSTED naming the limit and its flag", err)
	}
	r1()
	r1() // a second release changes nothing
	if _, err := g.AddCall(c); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if _, err := g.AddCall(c); err == nil {
		t.Fatal("a double release freed two slots")
	}
	// Another identity has its own count; admins none.
	if _, err := g.AddCall(identity.Identity{Name: "d", Role: identity.Client}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := g.AddCall(identity.Identity{Name: "a", Role: identity.Admin}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSubmitBucket(t *testing.T) {
	now := time.Unix(0, 0)
	g := NewGate(Limits{SubmitsPerMinute: 60}, func() time.Time { return now })
	c := identity.Identity{Name: "c", Role: identity.Client}
	for i := range 60 {
		if err := g.Submit(c); err != nil {
			t.Fatalf("submit %d of the burst: %v", i, err)
		}
	}
	if err := g.Submit(c); err == nil {
		t.Fatal("61st submit in the same instant accepted")
	}
	now = now.Add(time.Second) // one token back
	if err := g.Submit(c); err != nil {
		t.Fatalf("after a second: %v", err)
	}
	if err := g.Submit(c); err == nil {
		t.Fatal("two submits accepted for one second's refill")
	}
}

func TestValidate(t *testing.T) {
	if err := (Limits{Uploads: -1}).Validate(); err == nil || !strings.Contains(err.Error(), FlagUploads) {
		t.Fatalf("negative uploads: %v", err)
	}
	if err := Defaults.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerCallsHaveTheirOwnLimit(t *testing.T) {
	g := NewGate(Limits{Calls: 1, WorkerCalls: 3}, nil)
	w := identity.Identity{Name: "pool", Role: identity.Worker}
	for i := range 3 {
		if _, err := g.AddCall(w); err != nil {
			t.Fatalf("worker call %d: %v", i, err)
		}
	}
	if _, err := g.AddCall(w); err == nil || !strings.Contains(err.Error(), FlagWorkerCalls) {
		t.Fatalf("fourth worker call: %v", err)
	}
}
