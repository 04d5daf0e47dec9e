package credentials

import (
	"context"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// TestOwnedTokens: a token an account makes acts as the account, with the
// role asked (client or worker, never admin); only its owner revokes it
// on its page; it stops when the owner check says the account may not
// act; it is still there after a restart; each action is audited.
func TestOwnedTokens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := New(ctx, st, "boot", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	alice := identity.Identity{Name: "alice", Role: identity.Client}
	bob := identity.Identity{Name: "bob", Role: identity.Client}
	if _, err := m.CreateOwn(ctx, alice, "ci", identity.Admin); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("an admin token from an account's page: %v", err)
	}
	if _, err := m.CreateOwn(ctx, alice, "no/slash", identity.Client); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("a bad label: %v", err)
	}
	if _, err := m.CreateOwn(ctx, identity.Identity{Name: "w", Role: identity.Worker}, "x", identity.Worker); err == nil {
		t.Fatal("a worker made a token")
	}
	tok, err := m.CreateOwn(ctx, alice, "farm", identity.Worker)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := m.Resolve(tok); !ok || id.Name != "alice" || id.Role != identity.Worker {
		t.Fatalf("alice's worker token resolves to %+v %v", id, ok)
	}
	if vs := m.Owned("alice"); len(vs) != 1 || vs[0].Name != "alice.farm" || vs[0].Owner != "alice" {
		t.Fatalf("alice's tokens: %+v", vs)
	}
	if err := m.RevokeOwn(ctx, bob, "alice.farm"); apierr.ReasonOf(err) != apierr.ReasonBadInput {
		t.Fatalf("bob revoked alice's token: %v", err)
	}
	active := true
	m.SetOwnerCheck(func(owner string) bool { return owner != "alice" || active })
	active = false
	if _, ok := m.Resolve(tok); ok {
		t.Fatal("the token of an account that may not act resolves")
	}
	active = true
	// After a restart the token still acts as alice.
	m2, err := New(ctx, st, "boot", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := m2.Resolve(tok); !ok || id.Name != "alice" {
		t.Fatalf("after a restart: %+v %v", id, ok)
	}
	if err := m2.RevokeOwn(ctx, alice, "alice.farm"); err != nil {
		t.Fatal(err)
	}
	if _, ok := m2.Resolve(tok); ok {
		t.Fatal("a revoked token resolves")
	}
	log, err := st.AuditLog(ctx, store.AuditFilter{})
	if err != nil || len(log) != 2 || log[0].Action != "credential.revoke" || log[1].Action != "credential.create" || log[1].Actor != "alice" {
		t.Fatalf("audit: %+v %v", log, err)
	}
}

// Vouched: the identities the operator made, not an account acting
// through the tokens it minted, even one named like an admin's credential.
func TestVouched(t *testing.T) {
	ctx := context.Background()
	m, err := New(ctx, nil, "boot", nil)
	if err != nil {
		t.Fatal(err)
	}
	admin := identity.Bootstrap
	for _, c := range []store.Credential{
		{Name: "farm", Role: "worker", Hash: make([]byte, 32)},
		{Name: "mallory.w", Role: "worker", Hash: append(make([]byte, 31), 1), Owner: "mallory"},
		{Name: "ivan", Role: "worker", Hash: append(make([]byte, 31), 2)},
		{Name: "ivan.w", Role: "worker", Hash: append(make([]byte, 31), 3), Owner: "ivan"},
	} {
		m.index(c)
	}
	if _, err := m.Ephemeral("up-worker-1", identity.Worker); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{admin.Name: true, "farm": true, "cert:worker-1": true, "up-worker-1": true,
		"mallory": false, "mallory.w": false, "ivan": false, "stranger": false} {
		if got := m.Vouched(name); got != want {
			t.Errorf("Vouched(%q) = %v, want %v", name, got, want)
		}
	}
}
