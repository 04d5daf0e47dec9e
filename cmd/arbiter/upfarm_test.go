package main

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
)

// upSignInRE is the line with which `arbiter up` tells how to sign in to
// its pages.
var upSignInRE = regexp.MustCompile(`^(http://\S+/)signin with the token (\S+)$`)

// The demo takes the coordinator's farm flags (issue 45): with
// --hook-allow 127.0.0.1 a webhook to a loopback receiver is accepted and
// delivered when a job finishes, as real processes; without it (the
// control) the same hook is refused naming the flag. It prints how to sign
// in to its pages, and the printed token signs in while another does not.
func TestUpTakesFarmFlagsAndPrintsSignIn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs arbiter up")
	}
	t.Setenv(auth.EnvToken, "")
	t.Setenv(envAPI, "")
	delivered := make(chan string, 4)
	recv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(recv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		delivered <- string(b)
	}))
	defer recv.Close()
	hookURL := "http://" + recv.Addr().String() + "/hook"

	up := startArbiterProcess(t, nil, "up", "--temp", "--workers", "1", "--threads", "1", "--hash", "1", "--listen", "127.0.0.1:0",
		"--hook-allow", "127.0.0.1", "--git-allow-file", "--git-allow", "10.0.0.0/8", "--approval")
	m := upSignInRE.FindStringSubmatch(up.waitLine(t, "arbiter up: sign in on "))
	if m == nil {
		t.Fatalf("sign-in line does not parse:\n%s", up.log())
	}
	pages, token := m[1], m[2]
	addr := strings.Fields(up.waitLine(t, "arbiter up: serving; elsewhere connect with --coordinator "))[0]
	api := strings.TrimSuffix(pages, "/")

	if !signsIn(t, pages, token) {
		t.Errorf("the printed token %q does not sign in at %s", token, pages)
	}
	if signsIn(t, pages, token+"x") {
		t.Errorf("a token other than the printed one signs in at %s", pages)
	}

	out, stderr, err := runArbiter(t, "", "hook", "add", hookURL, "--events", "finished", "--api", api, "--token", token)
	if err != nil {
		t.Fatalf("hook add to loopback with --hook-allow 127.0.0.1: %v\n%s%s", err, out, stderr)
	}
	out, stderr, err = runArbiter(t, "", "submit", "perft", "--coordinator", addr, "--token", token, "--depth", "2", "--wait")
	if err != nil {
		t.Fatalf("submit perft: %v\n%s%s", err, out, stderr)
	}
	select {
	case body := <-delivered:
		if !strings.Contains(body, "finished") {
			t.Errorf("webhook body does not say finished: %s", body)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("no webhook delivered to %s within 90 s:\n%s", hookURL, up.log())
	}

	// The control: the same up without --hook-allow refuses the hook.
	plain := startArbiterProcess(t, nil, "up", "--temp", "--workers", "0", "--listen", "127.0.0.1:0")
	m = upSignInRE.FindStringSubmatch(plain.waitLine(t, "arbiter up: sign in on "))
	if m == nil {
		t.Fatalf("sign-in line does not parse:\n%s", plain.log())
	}
	_, _, err = runArbiter(t, "", "hook", "add", hookURL, "--events", "finished", "--api", strings.TrimSuffix(m[1], "/"), "--token", m[2])
	if err == nil || !strings.Contains(err.Error(), "--hook-allow") {
		t.Errorf("hook add to loopback without --hook-allow: %v; want a refusal naming --hook-allow", err)
	}
	// A bound the coordinator refuses is refused by up too.
	_, _, err = runArbiter(t, "", "up", "--temp", "--workers", "0", "--hook-concurrency", "0")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--hook-concurrency") {
		t.Errorf("up --hook-concurrency 0: %v", err)
	}
}

// signsIn posts token to the sign-in form at pages as a browser does (the
// form's CSRF token from GET /signin) and reports whether it was
// accepted: a redirect that sets a session cookie.
func signsIn(t *testing.T, pages, token string) bool {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(pages + "signin")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(b))
	if csrf == nil {
		t.Fatalf("GET %ssignin: %d, no CSRF token", pages, resp.StatusCode)
	}
	resp, err = c.PostForm(pages+"signin?csrf="+url.QueryEscape(csrf[1]), url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusSeeOther && len(resp.Cookies()) > 0
}
