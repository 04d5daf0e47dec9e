package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// TestHooksPage: a signed-in user sees their webhooks and deliveries with
// status, never a secret or another user's; a reader without a
// credential is asked to sign in.
func TestHooksPage(t *testing.T) {
	cl := newCluster(t, clusterOpts{books: bookDir})
	ctx := context.Background()
	h, err := cl.c.Hooks.Add(ctx, cl.carol(), "https://example.org/<hook>", []string{"finished"}, "json", "own")
	if err != nil {
		t.Fatal(err)
	}
	other, err := cl.c.Hooks.Add(ctx, identity.Identity{Name: "dave", Role: identity.Client}, "https://example.org/dave", []string{"failed"}, "slack", "own")
	if err != nil {
		t.Fatal(err)
	}
	// A delivery as the sender records it after two failed attempts.
	d := &store.Delivery{ID: h.ID + "/s1/finished", HookID: h.ID, JobID: "s1", Event: "finished", Payload: "{}", State: "pending",
		Attempts: 2, LastStatus: 500, LastError: "HTTP 500", CreatedAt: cl.c.Core.Now(), NextAt: cl.c.Core.Now().Add(1e12)}
	if _, err := cl.st.AddDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	b := cl.browser(t)
	if r := b.get("/hooks"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "sign in") {
		t.Errorf("anonymous /hooks: %d", r.status)
	}
	b.signIn(cl.client)
	r := b.get("/hooks")
	if r.status != http.StatusOK {
		t.Fatalf("/hooks: %d %s", r.status, r.body)
	}
	for _, want := range []string{`<tr data-hook="` + h.ID + `">`, "https://example.org/&lt;hook&gt;", `<tr data-delivery="` + d.ID + `">`,
		`<td data-field="state">pending</td>`, `<td class="num" data-field="attempts">2</td>`, `<td class="num" data-field="last_status">500</td>`, "HTTP 500"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("/hooks lacks %q", want)
		}
	}
	if strings.Contains(r.body, h.Secret) || strings.Contains(r.body, other.ID) {
		t.Error("/hooks shows a secret or dave's hook")
	}
}
