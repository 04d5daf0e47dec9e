package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/arbiter-chess/arbiter/base/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestBrowserFollow drives a real headless Chromium: ann signs in,
// follows a test that is waiting for a worker (the Follow button becomes
// Unfollow; following it again, following a job that does not exist and
// following without a session are refused), allows notifications (granted
// through the DevTools protocol, as a click on the browser's prompt
// would), and once a worker has played it the page she has open shows the
// finished event, delivered as a browser notification and listed on the
// page, without a reload. /follows lists the follow and unfollows it. ben,
// signed in and following nothing, gets no event, in the browser or from
// /me/events.
func TestBrowserFollow(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("no " + chromiumPath + " (Debian package chromium)")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	cl := newCluster(t, clusterOpts{books: bookDir})
	ctx := context.Background()
	annTok, err := cl.c.Credentials.Create(ctx, identity.Bootstrap, "ann", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	benTok, err := cl.c.Credentials.Create(ctx, identity.Bootstrap, "ben", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	admin := cl.dial(t, cl.admin)
	resp, err := admin.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: testSpec(t, 600, 4, false)})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()

	c := newChrome(t, cl.web.URL, t.TempDir())
	text := func() string { return eval[string](c, `document.querySelector('main').innerText`) }
	signIn := func(tok string) {
		c.do("open the sign-in page", chromedp.Navigate(c.base+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")))
		c.navigate("sign in", chromedp.SendKeys(chromedp.CSS("#token"), tok), chromedp.Click(chromedp.CSS("#signin")))
	}
	// post sends a form from the page as a script on it would (same
	// origin, the page's CSRF token in the X-CSRF-Token header, where
	// admission reads it before the body) and returns the HTTP status.
	post := func(path string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
		defer cancel()
		st, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch(`+jsString(path)+`, {method: "POST", credentials: "same-origin",
			headers: {"X-CSRF-Token": document.querySelector('input[name=csrf]').value},
			body: new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value})}).then(r => r.status)`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		return st
	}
	// events reads /me/events as the holder of token's session.
	events := func(tok string) (int, []EventJSON) {
		req, _ := http.NewRequest("GET", cl.web.URL+"/me/events?after=0", nil)
		if tok != "" {
			req.AddCookie(&http.Cookie{Name: sessionCookie, Value: tok})
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var out struct{ Events []EventJSON }
		json.NewDecoder(r.Body).Decode(&out)
		return r.StatusCode, out.Events
	}

	// Anonymous: no Follow button, no notices, follows refused.
	c.visit("/tests/"+id, "")
	if n := eval[int](c, `document.querySelectorAll('#follow, #notices').length`); n != 0 {
		t.Errorf("an anonymous reader sees %d follow elements", n)
	}
	c.visit("/signin", "") // a page with a form, for its CSRF token
	if st := post("/jobs/" + id + "/follow"); st != http.StatusUnauthorized {
		t.Errorf("follow without a session: HTTP %d, want 401", st)
	}
	if st, _ := events(""); st != http.StatusUnauthorized {
		t.Errorf("/me/events without a session: HTTP %d, want 401", st)
	}
	c.consoleErrors() // the refused requests

	signIn(annTok)
	if _, err := chromedp.CallBrowser(c.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: c.base}); err != nil {
		t.Fatalf("granting notifications: %v", err)
	}
	c.visit("/tests/"+id, "follow")
	if b := eval[string](c, `document.getElementById('follow').textContent`); b != "Follow" {
		t.Fatalf("ann sees button %q, want Follow: %s", b, text())
	}
	c.navigate("follow the test", chromedp.Click(chromedp.CSS("#follow")))
	if loc, b := eval[string](c, "location.pathname"), eval[string](c, `document.getElementById('follow').textContent`); loc != "/tests/"+id || b != "Unfollow" {
		t.Fatalf("after following: at %s, button %q: %s", loc, b, text())
	}
	if st := post("/jobs/" + id + "/follow"); st != http.StatusConflict {
		t.Errorf("following twice: HTTP %d, want 409", st)
	}
	if st := post("/jobs/s424242/follow"); st != http.StatusNotFound {
		t.Errorf("following a job that does not exist: HTTP %d, want 404", st)
	}
	c.consoleErrors() // the refused requests
	if p := eval[string](c, `Notification.permission`); p != "granted" {
		t.Fatalf("notification permission %q", p)
	}

	// A worker plays the test; the open page hears of its end.
	cl.startWorker(t, "w1")
	sel := `#notices-list li[data-job="` + id + `"][data-event="finished"]`
	for deadline := time.Now().Add(120 * time.Second); !eval[bool](c, `!!document.querySelector('`+sel+`')`); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no finished event on the page; state %v, notices %q", cl.job(t, admin, id).GetState(),
				eval[string](c, `document.getElementById('notices').outerHTML`))
		}
	}
	if n := eval[string](c, `document.querySelector('`+sel+`').dataset.notified || ''`); n != "1" {
		t.Errorf("the event was not shown as a browser notification (data-notified %q)", n)
	}
	// The test may also have been seen blocked (no worker yet) before
	// the worker came: that is an event too, shown before the end.
	if hidden, count, items := eval[bool](c, `document.getElementById('notices').hidden`), eval[string](c, `document.getElementById('notices-count').textContent`),
		eval[int](c, `document.querySelectorAll('#notices-list li').length`); hidden || count != strconv.Itoa(items) || items < 1 || items > 2 {
		t.Errorf("notices hidden %v, count %q, %d listed", hidden, count, items)
	}
	if title := eval[string](c, `document.querySelector('`+sel+` a').textContent`); !strings.HasPrefix(title, "test "+id+" finished: default vs weak") {
		t.Errorf("event title %q", title)
	}
	if errs := c.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if problems := eval[[]string](c, a11yScript); len(problems) > 0 {
		t.Errorf("with the notices shown: accessibility:\n%s", strings.Join(problems, "\n"))
	}
	c.screenshot("follow-notified")
	if st, evs := events(annTok); st != http.StatusOK || !endsFinished(evs, id) {
		t.Errorf("ann's /me/events: HTTP %d %+v", st, evs)
	}

	// /follows lists it; Unfollow there ends it.
	c.visit("/follows", "follows")
	if n := eval[int](c, `document.querySelectorAll('#follows tr[data-job="`+id+`"]').length`); n != 1 {
		t.Fatalf("/follows does not list %s: %s", id, text())
	}
	c.navigate("unfollow", chromedp.Click(chromedp.CSS(`#follows tr[data-job="`+id+`"] .unfollow`)))
	if loc := eval[string](c, "location.pathname"); loc != "/follows" || eval[int](c, `document.querySelectorAll('#follows tr').length`) != 0 {
		t.Errorf("after unfollowing: at %s: %s", loc, text())
	}
	if st := post("/jobs/" + id + "/unfollow"); st != http.StatusNotFound {
		t.Errorf("unfollowing what one does not follow: HTTP %d, want 404", st)
	}
	c.consoleErrors()

	// ben follows nothing: nothing reaches him.
	c.navigate("sign out", chromedp.Click(chromedp.CSS(`.who button`)))
	signIn(benTok)
	c.visit("/tests/"+id, "")
	for deadline := time.Now().Add(30 * time.Second); eval[int](c, `parseInt(document.getElementById('notices').dataset.polls || '0', 10)`) < 3; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page did not poll for events")
		}
	}
	if hidden, n := eval[bool](c, `document.getElementById('notices').hidden`), eval[int](c, `document.querySelectorAll('#notices-list li').length`); !hidden || n != 0 {
		t.Errorf("ben sees %d notices (hidden %v)", n, hidden)
	}
	if st, evs := events(benTok); st != http.StatusOK || len(evs) != 0 {
		t.Errorf("ben's /me/events: HTTP %d %+v", st, evs)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// endsFinished: evs are job id's events, its finished one last, at most
// one "blocked" (seen while no worker had come yet) before it.
func endsFinished(evs []EventJSON, id string) bool {
	if len(evs) == 0 || len(evs) > 2 {
		return false
	}
	for i, e := range evs {
		want := "finished"
		if i < len(evs)-1 {
			want = "blocked"
		}
		if e.Job != id || e.Event != want || e.URL != "/tests/"+id {
			return false
		}
	}
	return true
}
