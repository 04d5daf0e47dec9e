package coordinator

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// An admin's liar verdict is checked as every door's strings are: admins
// only, sizes, no control or invisible characters; a good one is stored.
func TestDeclareLiarChecksItsInput(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c, err := New(ctx, Config{Store: st, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := identity.Identity{Name: "carol", Role: identity.Client}
	for _, tc := range []struct {
		caller       identity.Identity
		name, reason string
		want         string
	}{
		{client, "w1", "lies", "admins only"},
		{identity.Bootstrap, "", "lies", "1 to"},
		{identity.Bootstrap, "w1", strings.Repeat("x", 10000), "1 to"},
		{identity.Bootstrap, "w1", "lies\nsetoption", "reason"},
		{identity.Bootstrap, "w\u202e1", "lies", "identity"},
	} {
		if _, err := c.DeclareLiar(ctx, tc.caller, tc.name, tc.reason); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DeclareLiar(%s, %q, %.20q): %v, want an error naming %q", tc.caller.Name, tc.name, tc.reason, err, tc.want)
		}
	}
	if _, err := c.DeclareLiar(ctx, identity.Bootstrap, "w1", "invents moves"); err != nil {
		t.Fatal(err)
	}
	if l := c.Trust.Level("w1"); !l.Liar || !strings.Contains(l.Reason, "invents moves") {
		t.Fatalf("w1 after the verdict: %+v", l)
	}
}
