//go:build unix

package e2e

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestSignInStaysOnSite: signing in on the pages of a real coordinator
// with next=/%09/evil.example (issue 41: the browser drops the tab and
// follows "//evil.example", another site, which only the CSP stopped)
// redirects to "/" instead, as do the other off-site forms; the sign-in
// page does not carry them in its form either. The control: next=/tests
// is where the sign-in sends the browser.
func TestSignInStaysOnSite(t *testing.T) {
	addr, httpAddr := proctest.FreeAddr(t), proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--http", httpAddr)
	client := newCredential(t, addr, "client")
	base := "http://" + httpAddr
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	signIn := func(next string) string {
		t.Helper()
		resp, err := noFollow.Get(base + "/signin?next=" + url.QueryEscape(next))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("sign-in page without a CSRF field: %s", page)
		}
		if n := regexp.MustCompile(`name="next" value="([^"]*)"`).FindSubmatch(page); n == nil ||
			(string(n[1]) != "/" && string(n[1]) != next) {
			t.Errorf("sign-in page for next=%q carries next %q", next, n)
		}
		// The form token travels in the action URL, as the page's form
		// sends it.
		form := url.Values{"token": {client}, "next": {next}}
		req, _ := http.NewRequest("POST", base+"/signin?csrf="+url.QueryEscape(string(m[1])), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, c := range resp.Cookies() {
			req.AddCookie(c)
		}
		// The transport, not a client: a client parses Location and would
		// stop at a tab before the test could see where it points.
		resp, err = http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in with next=%q: status %d, want 303", next, resp.StatusCode)
		}
		return resp.Header.Get("Location")
	}

	for _, next := range []string{"/\t/evil.example", "/%09/evil.example", "/\n/evil.example", "//evil.example", "/\\evil.example",
		"https://evil.example/", "/%2F/evil.example", "/\u202e/evil.example"} {
		if got := signIn(next); got != "/" {
			t.Errorf("sign-in with next=%q redirects to %q, want /", next, got)
		}
	}
	if got := signIn("/tests"); got != "/tests" {
		t.Errorf("sign-in with next=/tests redirects to %q, want /tests (the control)", got)
	}
}
