package spsa

import (
	"context"
	"testing"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
)

// No replay checks a tune's batches (its engines change every batch), so
// an identity that has not earned trust gets none (gamepair/trust.go);
// the control, an identity an admin made, gets one.
func TestUntrustedIdentityGetsNoTuneBatch(t *testing.T) {
	cfg := Config{}
	e := newEnv(t, cfg)
	trust, err := gamepair.NewTrust(context.Background(), e.St, func(id string) bool { return id == alice.Name }, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.WL.Trust = trust
	e.create(tuneSpec(8, 2))
	mallory := identity.Identity{Name: "mallory", Role: identity.Worker}
	if g, ok := e.LeaseOf(mallory, e.WorkerOf(mallory, "m1", 1_000_000)); ok {
		t.Fatalf("an untrusted identity leased %s of a tune", g.Lease.UnitID)
	}
	if _, ok := e.Lease(e.Worker("a1", 1_000_000)); !ok {
		t.Fatal("the vouched identity gets no batch of the tune")
	}
}
