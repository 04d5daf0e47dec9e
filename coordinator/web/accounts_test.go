package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

const secret = "Tr0ub4dor&3-very-secret"

var approvals = coordinator.AccountsConfig{SignUp: true, Approval: true, CrossApproval: true}

// signInAccount signs b in with a name and password and returns the
// session cookie's Set-Cookie line.
func (b *browser) signInAccount(name, password string) string {
	b.t.Helper()
	r := b.post("/signin", url.Values{"csrf": {b.csrf()}, "name": {name}, "password": {password}})
	if r.status != http.StatusSeeOther {
		b.t.Fatalf("sign in %s: %d %s", name, r.status, excerpt(r.body))
	}
	for _, c := range r.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, sessionCookie+"=") {
			return c
		}
	}
	b.t.Fatalf("sign in %s: no session cookie", name)
	return ""
}

// problem is the error paragraph of a page and the field it names.
func problem(body string) (field, msg string) {
	i := strings.Index(body, `id="problem"`)
	if i < 0 {
		return "", ""
	}
	rest := body[i:]
	if j := strings.Index(rest, `data-field="`); j >= 0 && j < strings.Index(rest, ">") {
		f := rest[j+len(`data-field="`):]
		field = f[:strings.IndexByte(f, '"')]
	}
	msg = rest[strings.IndexByte(rest, '>')+1:]
	return field, msg[:strings.Index(msg, "</p>")]
}

// TestAccountsOnThePages: sign-up waits for an admin; sign-in answers the
// same for an unknown name and a wrong password; the session cookie is
// Secure, HttpOnly, SameSite=Strict and the store keeps neither password
// nor session token; a user's SPRT goes pending and is approved by an
// approver, not by its submitter; a user's token acts as the user; every
// new form refuses a missing CSRF token and bad fields by name, storing
// nothing; the audit log shows it all.
func TestAccountsOnThePages(t *testing.T) {
	dir := t.TempDir()
	cl := newCluster(t, clusterOpts{books: bookDir, accounts: approvals, dir: dir})
	ctx := context.Background()
	users := func() int {
		us, err := cl.st.Users(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(us)
	}
	var bodies []string
	keep := func(r response) response { bodies = append(bodies, r.body); return r }

	anon := cl.browser(t)
	// Bad sign-ups: the field is named, nothing is stored.
	for _, c := range []struct{ name, pw, repeat, field string }{
		{"bad name!", secret, secret, "name"},
		{"admin", secret, secret, "name"},
		{"ursula", "short", "short", "password"},
		{"ursula", secret, secret + "x", "password_repeat"},
	} {
		r := keep(anon.post("/signup", url.Values{"csrf": {anon.csrf()}, "name": {c.name}, "password": {c.pw}, "password_repeat": {c.repeat}}))
		if f, msg := problem(r.body); r.status != http.StatusBadRequest || f != c.field {
			t.Errorf("sign-up %q: %d, field %q (%s), want 400 on %s", c.name, r.status, f, msg, c.field)
		}
	}
	if r := anon.post("/signup", url.Values{"name": {"ursula"}, "password": {secret}, "password_repeat": {secret}}); r.status != http.StatusForbidden {
		t.Errorf("sign-up without a CSRF token: %d", r.status)
	}
	if n := users(); n != 0 {
		t.Fatalf("%d accounts stored by refused sign-ups", n)
	}
	r := keep(anon.post("/signup", url.Values{"csrf": {anon.csrf()}, "name": {"ursula"}, "password": {secret}, "password_repeat": {secret}}))
	if r.status != http.StatusOK || !strings.Contains(r.body, `id="signed-up"`) {
		t.Fatalf("sign-up: %d %s", r.status, excerpt(r.body))
	}
	r = keep(anon.post("/signin", url.Values{"csrf": {anon.csrf()}, "name": {"ursula"}, "password": {secret}}))
	if _, msg := problem(r.body); r.status != http.StatusForbidden || !strings.Contains(msg, "waits for an admin") {
		t.Fatalf("sign-in before approval: %d %q", r.status, msg)
	}
	// No enumeration: an unknown account and a wrong password read alike.
	wrong := keep(anon.post("/signin", url.Values{"csrf": {anon.csrf()}, "name": {"ursula"}, "password": {"not the password"}}))
	unknown := keep(anon.post("/signin", url.Values{"csrf": {anon.csrf()}, "name": {"nobody"}, "password": {"not the password"}}))
	_, m1 := problem(wrong.body)
	_, m2 := problem(unknown.body)
	if wrong.status != unknown.status || m1 != m2 || m1 == "" {
		t.Errorf("wrong password: %d %q; unknown account: %d %q", wrong.status, m1, unknown.status, m2)
	}

	// The admin approves the account (the form refuses a missing token).
	admin := cl.browser(t)
	admin.signIn(cl.admin)
	if r := admin.post("/users/ursula", url.Values{"role": {"user"}, "state": {"active"}}); r.status != http.StatusForbidden {
		t.Errorf("account change without a CSRF token: %d", r.status)
	}
	if r := keep(admin.post("/users/ursula", url.Values{"csrf": {admin.csrf()}, "role": {"overlord"}, "state": {"active"}})); r.status != http.StatusBadRequest {
		t.Errorf("bad role: %d", r.status)
	} else if f, _ := problem(r.body); f != "role" {
		t.Errorf("bad role names field %q", f)
	}
	if u, _ := cl.st.User(ctx, "ursula"); u.State != store.UserPending {
		t.Fatalf("refused changes changed the account: %+v", u)
	}
	if r := keep(admin.post("/users/ursula", url.Values{"csrf": {admin.csrf()}, "role": {"user"}, "state": {"active"}})); r.status != http.StatusSeeOther {
		t.Fatalf("approve the account: %d %s", r.status, excerpt(r.body))
	}

	ursula := cl.browser(t)
	cookie := ursula.signInAccount("ursula", secret)
	for _, want := range []string{"__Host-arbiter-session=ses_", "HttpOnly", "SameSite=Strict", "Secure", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("session cookie %q lacks %s", cookie, want)
		}
	}
	session := ursula.cookies[sessionCookie]

	// Her SPRT waits for an approver.
	form := url.Values{"csrf": {ursula.csrf()}, "kind": {"sprt"}, "engine_a": {"name=a,builtin"}, "engine_b": {"name=b,builtin"},
		"each": {"nodes=500"}, "book": {"uho-200.epd"}, "elo0": {"0"}, "elo1": {"5"}, "model": {"normalized"}}
	r = keep(ursula.post("/submit/test", form))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/tests/") {
		t.Fatalf("submit: %d %s", r.status, excerpt(r.body))
	}
	id := strings.TrimPrefix(r.location, "/tests/")
	grpcAdmin := cl.dial(t, cl.admin)
	if j := cl.job(t, grpcAdmin, id); j.GetState() != arbiterv1.JobState_JOB_STATE_PENDING || j.GetSubmitter() != "ursula" {
		t.Fatalf("a user's SPRT: state %v by %s, want pending", j.GetState(), j.GetSubmitter())
	}
	front := keep(anon.get("/"))
	if !strings.Contains(front.body, `id="pending"`) || !strings.Contains(front.body, `data-job="`+id+`"`) {
		t.Errorf("the front page does not list %s as pending", id)
	}
	if r := keep(ursula.get("/tests/" + id)); !strings.Contains(r.body, `id="pending-approval"`) || !strings.Contains(r.body, `id="withdraw"`) {
		t.Errorf("the test page does not tell its submitter it waits for approval and offer to withdraw it")
	}
	// No Approve button for her own test (cross-approval) nor for an
	// anonymous reader: the core would refuse them.
	pendingRow := regexp.MustCompile(`(?s)<tr data-job="` + id + `">.*?</tr>`)
	for who, page := range map[string]string{"ursula": keep(ursula.get("/")).body, "anonymous": front.body} {
		row := pendingRow.FindString(page)
		if row == "" || strings.Contains(row, `class="approve"`) || !strings.Contains(row, "waits for an approver") {
			t.Errorf("%s's front page, the pending row: %q; want no Approve button", who, row)
		}
	}
	// Not by herself, not without a CSRF token.
	if r := ursula.post("/jobs/"+id+"/approve", url.Values{"csrf": {ursula.csrf()}}); r.status != http.StatusForbidden {
		t.Errorf("self-approval by a user: %d", r.status)
	}
	// A watcher (arbiter submit --wait, arbiter status --watch) keeps
	// watching a pending test: it is not over.
	type watched struct {
		final  *arbiterv1.Job
		states []arbiterv1.JobState
		err    error
	}
	watchDone := make(chan watched, 1)
	go func() {
		var w watched
		w.final, w.err = grpcAdmin.WatchJob(ctx, id, clusterclient.Policy{}, func(j *arbiterv1.Job) { w.states = append(w.states, j.GetState()) })
		watchDone <- w
	}()
	if err := cl.c.Accounts.Add(ctx, identity.Bootstrap, "victor", secret, accounts.Approver); err != nil {
		t.Fatal(err)
	}
	victor := cl.browser(t)
	victor.signInAccount("victor", secret)
	if row := regexp.MustCompile(`(?s)<tr data-job="` + id + `">.*?</tr>`).FindString(keep(victor.get("/")).body); !strings.Contains(row, `class="approve"`) {
		t.Errorf("the approver's front page offers no Approve button: %q", row)
	}
	if r := victor.post("/jobs/"+id+"/approve", url.Values{}); r.status != http.StatusForbidden || !cl.c.Core.Pending(id) {
		t.Errorf("approval without a CSRF token: %d, pending %v", r.status, cl.c.Core.Pending(id))
	}
	if r := victor.post("/jobs/"+id+"/approve", url.Values{"csrf": {victor.csrf()}}); r.status != http.StatusSeeOther {
		t.Fatalf("approval: %d %s", r.status, excerpt(r.body))
	}
	if j := cl.job(t, grpcAdmin, id); j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("after approval: %v", j.GetState())
	}
	if err := cl.c.Core.Cancel(ctx, identity.Bootstrap, id, "enough"); err != nil {
		t.Fatal(err)
	}
	w := <-watchDone
	if w.err != nil || w.final.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || len(w.states) == 0 || w.states[0] != arbiterv1.JobState_JOB_STATE_PENDING {
		t.Fatalf("watching the pending test: ended %v in %v after %v", w.err, w.final.GetState(), w.states)
	}
	// A second one is refused, with a reason.
	form.Set("csrf", ursula.csrf())
	r = ursula.post("/submit/test", form)
	id2 := strings.TrimPrefix(r.location, "/tests/")
	if r := victor.post("/jobs/"+id2+"/refuse", url.Values{"csrf": {victor.csrf()}, "reason": {"bounds too wide"}}); r.status != http.StatusSeeOther {
		t.Fatalf("refusal: %d %s", r.status, excerpt(r.body))
	}
	if j := cl.job(t, grpcAdmin, id2); j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || !strings.Contains(j.GetError(), "refused by victor: bounds too wide") {
		t.Fatalf("after refusal: %v %q", j.GetState(), j.GetError())
	}

	// A third she withdraws herself while it waits.
	form.Set("csrf", ursula.csrf())
	r = ursula.post("/submit/test", form)
	id3 := strings.TrimPrefix(r.location, "/tests/")
	if r := ursula.post("/jobs/"+id3+"/cancel", url.Values{"csrf": {ursula.csrf()}}); r.status != http.StatusSeeOther {
		t.Fatalf("withdrawing her pending test: %d %s", r.status, excerpt(r.body))
	}
	if j := cl.job(t, grpcAdmin, id3); j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || cl.c.Core.Pending(id3) {
		t.Fatalf("after withdrawal: %v, pending %v", j.GetState(), cl.c.Core.Pending(id3))
	}

	// A token made on her page acts as her.
	if r := ursula.post("/account/tokens", url.Values{"label": {"ci"}, "role": {"client"}}); r.status != http.StatusForbidden {
		t.Errorf("token form without a CSRF token: %d", r.status)
	}
	r = keep(ursula.post("/account/tokens", url.Values{"csrf": {ursula.csrf()}, "label": {"bad label!"}, "role": {"client"}}))
	if f, _ := problem(r.body); r.status != http.StatusBadRequest || f != "label" {
		t.Errorf("bad token label: %d field %q", r.status, f)
	}
	r = keep(ursula.post("/account/tokens", url.Values{"csrf": {ursula.csrf()}, "label": {"ci"}, "role": {"admin"}}))
	if f, _ := problem(r.body); r.status != http.StatusBadRequest || f != "role" {
		t.Errorf("admin token from a user's page: %d field %q", r.status, f)
	}
	if n := len(cl.c.Credentials.Owned("ursula")); n != 0 {
		t.Fatalf("refused token forms stored %d tokens", n)
	}
	r = ursula.post("/account/tokens", url.Values{"csrf": {ursula.csrf()}, "label": {"ci"}, "role": {"client"}})
	i := strings.Index(r.body, `id="new-token">`)
	if r.status != http.StatusOK || i < 0 {
		t.Fatalf("make a token: %d %s", r.status, excerpt(r.body))
	}
	tok := r.body[i+len(`id="new-token">`):]
	tok = tok[:strings.Index(tok, "<")]
	ci := cl.dial(t, tok)
	sub, err := ci.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: testSpec(t, 500, 0, true)})
	if err != nil {
		t.Fatal(err)
	}
	if j := sub.GetJob(); j.GetSubmitter() != "ursula" || j.GetState() != arbiterv1.JobState_JOB_STATE_PENDING {
		t.Errorf("a test through her token: by %s, %v; want ursula's, pending", j.GetSubmitter(), j.GetState())
	}

	// Disabled in the store (as arbiter user disable does, from another
	// process), the account's token stops too.
	if err := cl.st.UpdateUser(ctx, "ursula", "user", store.UserDisabled, "store:test", time.Now()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		_, err := ci.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
		if status.Code(err) == codes.Unauthenticated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token of a disabled account still works: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cl.st.UpdateUser(ctx, "ursula", "user", store.UserActive, "store:test", time.Now()); err != nil {
		t.Fatal(err)
	}
	ursula.signInAccount("ursula", secret)
	session = ursula.cookies[sessionCookie]

	// The password: a wrong old one is named; a change ends other sessions.
	other := cl.browser(t)
	other.signInAccount("ursula", secret)
	r = keep(ursula.post("/account/password", url.Values{"csrf": {ursula.csrf()}, "old_password": {"nope"}, "password": {secret + "2"}, "password_repeat": {secret + "2"}}))
	if f, _ := problem(r.body); r.status != http.StatusBadRequest || f != "old_password" {
		t.Errorf("wrong old password: %d field %q", r.status, f)
	}
	if r := ursula.post("/account/password", url.Values{"csrf": {ursula.csrf()}, "old_password": {secret}, "password": {secret + "2"}, "password_repeat": {secret + "2"}}); r.status != http.StatusSeeOther {
		t.Fatalf("password change: %d %s", r.status, excerpt(r.body))
	}
	if r := other.get("/account"); r.status != http.StatusUnauthorized {
		t.Errorf("another session after the password change: %d", r.status)
	}
	if r := keep(ursula.get("/account")); r.status != http.StatusOK {
		t.Errorf("the changing session after the change: %d", r.status)
	}
	// Signing out ends the session in the store, not only in the browser.
	ursula.post("/signout", url.Values{"csrf": {ursula.csrf()}})
	replay := cl.browser(t)
	replay.cookies[sessionCookie] = session
	if r := replay.get("/account"); r.status != http.StatusUnauthorized {
		t.Errorf("a signed-out session's cookie still reads the account page: %d", r.status)
	}

	// Every form of this page set, without its CSRF token: 403, nothing done.
	auditBefore, _ := cl.st.AuditLog(ctx, store.AuditFilter{Limit: 1000})
	vic := cl.browser(t)
	vic.signInAccount("victor", secret)
	for _, p := range []string{"/signup", "/signin", "/signout", "/account/password", "/account/tokens", "/account/tokens/ursula.ci/revoke",
		"/users/ursula", "/jobs/" + id + "/approve", "/jobs/" + id + "/refuse"} {
		form := url.Values{"name": {"x"}, "password": {secret}, "password_repeat": {secret}, "old_password": {secret}, "label": {"x"},
			"role": {"admin"}, "state": {"disabled"}, "reason": {"x"}}
		if r := vic.post(p, form); r.status != http.StatusForbidden {
			t.Errorf("POST %s without a CSRF token: %d", p, r.status)
		}
		form.Set("csrf", "forged")
		if r := vic.post(p, form); r.status != http.StatusForbidden {
			t.Errorf("POST %s with a forged CSRF token: %d", p, r.status)
		}
	}
	if after, _ := cl.st.AuditLog(ctx, store.AuditFilter{Limit: 1000}); len(after) != len(auditBefore) {
		t.Errorf("refused forms were audited as done: %d entries, then %d", len(auditBefore), len(after))
	}

	// The audit log, for admins and approvers only.
	if r := anon.get("/audit"); r.status != http.StatusForbidden {
		t.Errorf("anonymous audit page: %d", r.status)
	}
	r = keep(admin.get("/audit"))
	for _, want := range []string{"user.signup", "user.approve", "test.approve", "test.refuse", "credential.create", "user.password"} {
		if !strings.Contains(r.body, `data-action="`+want+`"`) {
			t.Errorf("audit page lacks %s", want)
		}
	}

	// No page showed the password, and the store holds neither it nor a
	// session token.
	for _, b := range bodies {
		if strings.Contains(b, secret) {
			t.Fatalf("a page shows the password: %s", excerpt(b))
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "coordinator.db*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), secret) || strings.Contains(string(data), session) {
			t.Fatalf("%s holds a password or session token in clear", f)
		}
	}
}
