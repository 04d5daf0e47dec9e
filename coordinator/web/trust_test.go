package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
)

// Minting worker tokens on /account follows --worker-token-minting (a
// client token is minted either way), and the workers page shows each
// identity's trust: an account's identity earning it.
func TestWorkerMintingAndTrustOnPages(t *testing.T) {
	for _, off := range []bool{false, true} {
		cl := newCluster(t, clusterOpts{accounts: approvals, noWorkerMinting: off})
		ctx := context.Background()
		if err := cl.c.Accounts.Add(ctx, identity.Bootstrap, "ursula", secret, accounts.User); err != nil {
			t.Fatal(err)
		}
		ursula := cl.browser(t)
		ursula.signInAccount("ursula", secret)
		mint := func(role string) response {
			return ursula.post("/account/tokens", url.Values{"csrf": {ursula.csrf()}, "label": {"w-" + role}, "role": {role}})
		}
		r := mint("worker")
		switch {
		case !off && (r.status != http.StatusOK || !strings.Contains(r.body, `id="new-token"`)):
			t.Fatalf("minting on: worker token: %d %s", r.status, excerpt(r.body))
		case off:
			if f, msg := problem(r.body); r.status != http.StatusBadRequest || f != "role" || !strings.Contains(msg, "--worker-token-minting") {
				t.Fatalf("minting off: worker token: %d field %q %q", r.status, f, msg)
			}
			if r := mint("client"); r.status != http.StatusOK || !strings.Contains(r.body, `id="new-token"`) {
				t.Fatalf("minting off: client token: %d", r.status)
			}
			continue
		}
		cl.c.Trust.Confirmed(ctx, "ursula")
		page := cl.browser(t).get("/workers").body
		if !strings.Contains(page, `data-identity="ursula"`) || !strings.Contains(page, "earning (1 of 10)") {
			t.Fatalf("workers page without ursula's trust: %s", excerpt(page))
		}
	}
}
