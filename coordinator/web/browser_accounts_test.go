package web

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestBrowserAccounts drives a real headless Chromium against a real
// coordinator with sign-up, approvals and cross-approval on: a newcomer
// signs up and cannot sign in until an admin approves the account; signed
// in, she submits an SPRT from the form, which waits for approval (listed
// on the front page, its page says so, no worker plays it); she may not
// approve it, neither as a user nor once an approver herself (cross-
// approval); another approver approves it and a worker plays its games;
// the audit log shows who did what. Every page passes the console and
// accessibility checks of TestBrowser.
func TestBrowserAccounts(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("no " + chromiumPath + " (Debian package chromium)")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	cl := newCluster(t, clusterOpts{books: bookDir, accounts: approvals})
	cl.startWorker(t, "w1")
	ctx := context.Background()
	if err := cl.c.Accounts.Add(ctx, identity.Bootstrap, "victor", secret, accounts.Approver); err != nil {
		t.Fatal(err)
	}
	grpcAdmin := cl.dial(t, cl.admin)
	c := newChrome(t, cl.web.URL, t.TempDir())
	text := func() string { return eval[string](c, `document.querySelector('main').innerText`) }
	signOut := func() {
		c.navigate("sign out", chromedp.Click(chromedp.CSS(`.who button`)))
	}
	signIn := func(name, password string) {
		c.visit("/signin", "")
		c.navigate("sign in as "+name, chromedp.SendKeys(chromedp.CSS("#name"), name), chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.Click(chromedp.CSS("#signin-password")))
	}

	// ---- sign up, and wait ----
	c.visit("/signup", "signup")
	c.navigate("sign up with a short password", chromedp.SendKeys(chromedp.CSS("#name"), "ursula"),
		chromedp.SendKeys(chromedp.CSS("#password"), "short"), chromedp.SendKeys(chromedp.CSS("#password_repeat"), "short"),
		chromedp.Click(chromedp.CSS("#signup-send")))
	if f := eval[string](c, `document.getElementById('problem').dataset.field`); f != "password" {
		t.Fatalf("short password: problem on %q: %s", f, text())
	}
	c.consoleErrors() // the 400 of the refused form
	if inv := eval[string](c, `document.getElementById('password').getAttribute('aria-invalid')`); inv != "true" {
		t.Errorf("the password field is not marked invalid")
	}
	c.navigate("sign up", chromedp.SetValue(chromedp.CSS("#password"), secret), chromedp.SetValue(chromedp.CSS("#password_repeat"), secret),
		chromedp.Click(chromedp.CSS("#signup-send")))
	if !strings.Contains(text(), "waits for an admin's approval") {
		t.Fatalf("after sign-up: %s", text())
	}
	signIn("ursula", secret)
	if !strings.Contains(text(), "waits for an admin's approval") {
		t.Fatalf("sign-in before approval: %s", text())
	}
	c.consoleErrors() // the 403 of the refused sign-in

	// ---- an admin approves the account ----
	c.do("open the sign-in page", chromedp.Navigate(c.base+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")))
	c.navigate("sign in as the admin", chromedp.SendKeys(chromedp.CSS("#token"), cl.admin), chromedp.Click(chromedp.CSS("#signin")))
	c.visit("/users", "users")
	c.navigate("approve ursula", chromedp.Click(chromedp.CSS(`tr[data-user="ursula"] .approve-user`)))
	if st := eval[string](c, `document.querySelector('tr[data-user="ursula"] [data-field="state"]').textContent`); st != "active" {
		t.Fatalf("ursula after approval: %s", st)
	}
	signOut()

	// ---- she signs in and submits an SPRT: it waits ----
	signIn("ursula", secret)
	if who := eval[string](c, `document.querySelector('.who').innerText`); !strings.Contains(who, "ursula") {
		t.Fatalf("after signing in: %q (%s)", who, text())
	}
	c.visit("/account", "account")
	c.visit("/submit", "")
	c.navigate("submit an SPRT",
		chromedp.SetValue(chromedp.CSS("#engine_a"), "name=strong,builtin"),
		chromedp.SetValue(chromedp.CSS("#engine_b"), "name=twin,builtin"),
		chromedp.SetValue(chromedp.CSS("#each"), "nodes=600"),
		chromedp.SetValue(chromedp.CSS("#book"), "uho-200.epd"),
		chromedp.SetValue(chromedp.CSS("#batch_pairs"), "1"),
		chromedp.Click(chromedp.CSS("#submit-test")))
	loc := eval[string](c, "location.pathname")
	if !strings.HasPrefix(loc, "/tests/") {
		t.Fatalf("the form went to %s: %s", loc, text())
	}
	id := strings.TrimPrefix(loc, "/tests/")
	if st := eval[string](c, `document.querySelector('#status [data-field="state"]').textContent`); !strings.Contains(st, "approval") {
		t.Errorf("the test page shows state %q, want approval", st)
	}
	if j := cl.job(t, grpcAdmin, id); j.GetState() != arbiterv1.JobState_JOB_STATE_PENDING {
		t.Fatalf("arbiter status says %v, want pending", j.GetState())
	}
	c.visit("/", "list-pending")
	if n := eval[int](c, `document.querySelectorAll('#pending tr[data-job="`+id+`"]').length`); n != 1 {
		t.Fatalf("the front page does not list %s as pending", id)
	}
	// The one rule (Core.MayDecide) hides what she may not do; the core
	// refuses it all the same (core's TestApprovals).
	if n := eval[int](c, `document.querySelectorAll('#pending tr[data-job="`+id+`"] .approve').length`); n != 0 {
		t.Errorf("a user is shown an Approve button for her own test: %s", text())
	}
	signOut()

	// ---- an approver now, she still may not approve her own (cross-approval) ----
	c.do("open the sign-in page", chromedp.Navigate(c.base+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")))
	c.navigate("sign in as the admin", chromedp.SendKeys(chromedp.CSS("#token"), cl.admin), chromedp.Click(chromedp.CSS("#signin")))
	c.visit("/users", "")
	c.navigate("make ursula an approver", chromedp.SetValue(chromedp.CSS(`#role-ursula`), "approver"),
		chromedp.Click(chromedp.CSS(`tr[data-user="ursula"] .set-role`)))
	signOut()
	signIn("ursula", secret)
	c.visit("/", "")
	if n := eval[int](c, `document.querySelectorAll('#pending tr[data-job="`+id+`"] .approve').length`); n != 0 {
		t.Errorf("an approver is shown an Approve button for her own test under cross-approval: %s", text())
	}
	if !cl.c.Core.Pending(id) {
		t.Fatal("the test is no longer pending after a refused self-approval")
	}
	if j := cl.job(t, grpcAdmin, id); j.GetMatchProgress().GetGames() != 0 || j.GetMatchProgress().GetBatchesLeased() != 0 {
		t.Fatalf("a pending test was played: %d games, %d batches leased", j.GetMatchProgress().GetGames(), j.GetMatchProgress().GetBatchesLeased())
	}
	signOut()

	// ---- another approver approves it; a worker plays it ----
	signIn("victor", secret)
	c.visit("/", "")
	c.navigate("approve as victor", chromedp.Click(chromedp.CSS(`#pending tr[data-job="`+id+`"] .approve`)))
	if loc := eval[string](c, "location.pathname"); loc != "/tests/"+id {
		t.Fatalf("after approval the browser is on %s: %s", loc, text())
	}
	cl.waitJob(t, grpcAdmin, id, 90*time.Second, "played", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetGames() > 0 })
	c.visit("/audit", "audit")
	rows := eval[[]string](c, `[...document.querySelectorAll('#audit tr[data-action]')].map(r => r.querySelector('[data-field="actor"]').textContent + ' ' + r.dataset.action + ' ' + r.querySelector('[data-field="target"]').textContent)`)
	for _, want := range []string{"ursula user.signup ursula", "admin user.approve ursula", "admin user.role ursula", "victor test.approve " + id} {
		found := false
		for _, r := range rows {
			found = found || r == want
		}
		if !found {
			t.Errorf("audit page lacks %q: %v", want, rows)
		}
	}
	if errs := c.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
