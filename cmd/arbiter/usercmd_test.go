package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// TestUserAndAuditCommands: arbiter user adds, approves, re-roles and
// disables accounts in a store, refuses bad input with exit 2 and stores
// nothing then; arbiter audit --json prints each change with who made it.
func TestUserAndAuditCommands(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.AddUser(ctx, store.User{Name: "newcomer", Password: "$argon2id$x", Role: "user", State: store.UserPending}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"short\n", []string{"user", "add", "bob"}, "password: 5 characters"},
		{"", []string{"user", "add", "bob"}, "no password"},
		{"long enough password\n", []string{"user", "add", "bad name"}, "name"},
		{"long enough password\n", []string{"user", "add", "bob", "--role", "king"}, "--role"},
		{"", []string{"user", "approve", "nobody"}, "no account named"},
		{"", []string{"user", "role", "newcomer", "king"}, "want user, approver or admin"},
		{"", []string{"user", "list", "--data", dir + "/nowhere"}, "no coordinator store"},
		{"", []string{"audit", "--limit", "0"}, "--limit"},
	} {
		args := append(c.args, "--data", dir)
		if c.args[len(c.args)-2] == "--data" {
			args = c.args
		}
		_, _, err := runArbiter(t, c.stdin, args...)
		if err == nil || cliexit.Code(err, 0) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v (exit %d), want exit 2 naming %q", c.args, err, cliexit.Code(err, 0), c.want)
		}
	}
	if out, _, err := runArbiter(t, "", "user", "list", "--json", "--data", dir); err != nil || strings.Count(out, `"name"`) != 1 {
		t.Fatalf("after refused commands: %s %v", out, err)
	}
	for _, args := range [][]string{
		{"user", "add", "alice", "--role", "approver"},
		{"user", "approve", "newcomer"},
		{"user", "role", "newcomer", "approver"},
		{"user", "disable", "alice"},
	} {
		if _, _, err := runArbiter(t, "correct horse battery\n", append(args, "--data", dir)...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	out, _, err := runArbiter(t, "", "user", "list", "--json", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	var us []struct{ Name, Role, State string }
	if err := json.Unmarshal([]byte(out), &us); err != nil || len(us) != 2 {
		t.Fatalf("user list --json: %s %v", out, err)
	}
	if us[0].Name != "alice" || us[0].State != "disabled" || us[1].Role != "approver" || us[1].State != "active" {
		t.Fatalf("accounts: %+v", us)
	}
	out, _, err = runArbiter(t, "", "audit", "--json", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	var es []struct{ Actor, Action, Target string }
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if !strings.HasPrefix(e.Actor, "store:") {
			t.Errorf("audit entry by %q, want store:<login>", e.Actor)
		}
		got = append(got, e.Action+" "+e.Target)
	}
	if want := "user.disable alice,user.role newcomer,user.approve newcomer,user.add alice"; strings.Join(got, ",") != want {
		t.Fatalf("audit: %v, want %s", got, want)
	}
	if out, _, err := runArbiter(t, "", "audit", "--action", "user.add", "--data", dir); err != nil || !strings.Contains(out, "user.add") || strings.Contains(out, "user.disable") {
		t.Fatalf("audit --action: %s %v", out, err)
	}
}
