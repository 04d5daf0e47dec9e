package accounts_test

// The approval rule reads which kinds wait from the kinds' registrations
// (workload.Kind.Runs): this test walks every kind the coordinator
// registers, and kinds registered only in this test binary, so a kind that
// runs submitted code cannot be left ungated by a list someone forgot.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/identity"
	_ "github.com/arbiter-chess/arbiter/coordinator" // the built-in kinds register
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	_ "github.com/arbiter-chess/arbiter/kinds/install" // and every kind of kinds/
)

func init() {
	// Kinds only this test binary has, as a kind added later would be.
	noWorkload := func(workload.Deps) (core.Workload, error) { return nil, nil }
	workload.Register(workload.Kind{Name: "fake-uploads", New: noWorkload, Runs: workload.SubmittedPrograms})
	workload.Register(workload.Kind{Name: "fake-builtin", New: noWorkload, Runs: workload.OperatorPrograms})
}

// TestApprovalFromRegistry: with approvals on, a user's job of every
// registered kind that declares SubmittedPrograms is held, DATAGEN
// included, and a fake kind registered here too; kinds that run only the
// operator's programs are not. Controls: the same user is not held with
// approvals off, nor an approver with them on; a kind that is not
// registered is held (fail closed); a registration that does not say
// whose programs it runs is refused.
func TestApprovalFromRegistry(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gate := func(approval bool) *accounts.Gate {
		s, err := accounts.New(accounts.Config{Store: st, Now: time.Now, Approval: approval})
		if err != nil {
			t.Fatal(err)
		}
		return s.Gate(workload.RunsSubmittedCode)
	}
	on, off := gate(true), gate(false)
	acc, err := accounts.New(accounts.Config{Store: st, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]accounts.Role{"ursula": accounts.User, "victor": accounts.Approver} {
		if err := acc.Add(ctx, identity.Bootstrap, name, "correct horse battery", role); err != nil {
			t.Fatal(err)
		}
	}
	ursula := identity.Identity{Name: "ursula", Role: identity.Client}
	victor := identity.Identity{Name: "victor", Role: identity.Client}
	hold := func(g *accounts.Gate, who identity.Identity, kind string) bool {
		t.Helper()
		h, err := g.Hold(ctx, who, kind)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	held := map[string]bool{}
	for _, k := range workload.Kinds() {
		want := k.Runs == workload.SubmittedPrograms
		if got := hold(on, ursula, k.Name); got != want {
			t.Errorf("kind %s (Runs %d): a user's job held %v, want %v", k.Name, k.Runs, got, want)
		}
		if hold(off, ursula, k.Name) {
			t.Errorf("kind %s: held with approvals off", k.Name)
		}
		if hold(on, victor, k.Name) {
			t.Errorf("kind %s: an approver's job held", k.Name)
		}
		held[k.Name] = want
	}
	// The kinds the audit found running uploads, verify sessions (the
	// client's arguments and options reach the worker's engine), and the
	// test's own.
	for _, k := range []string{"test", "spsa", "datagen", "verify", "fake-uploads"} {
		if !held[k] {
			t.Errorf("kind %s is not held (registered: %v)", k, held)
		}
	}
	for _, k := range []string{"perft", "fake-builtin"} {
		if v, ok := held[k]; !ok || v {
			t.Errorf("kind %s: registered %v, held %v", k, ok, v)
		}
	}
	if !hold(on, ursula, "no-such-kind") {
		t.Error("a kind nobody registered is not held")
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "without Runs") {
				t.Errorf("a registration without Runs: recovered %v", r)
			}
		}()
		workload.Register(workload.Kind{Name: "fake-unstated"})
	}()
}
