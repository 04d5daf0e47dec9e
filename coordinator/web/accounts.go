package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/credentials"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Accounts on the pages: sign-up, sign-in with a password, the account's
// page (password, tokens), the admins' page of accounts, the audit log,
// and the approval of pending tests from the front page.
//
// Every form here is a POST with the CSRF token (action or checkForm); a
// bad field re-renders the form with the field named and stores nothing.

func (s *Server) accountRoutes() {
	s.handle("GET /signup", s.signupPage)
	s.handle("POST /signup", s.signup)
	s.handle("GET /account", s.page(s.accountPage))
	s.handle("POST /account/password", s.action(s.changePassword))
	s.handle("POST /account/tokens", s.action(s.createToken))
	s.handle("POST /account/tokens/{name}/revoke", s.action(s.revokeToken))
	s.handle("GET /users", s.page(s.usersPage))
	s.handle("POST /users/{name}", s.action(s.changeUser))
	s.handle("GET /audit", s.page(s.auditPage))
	s.handle("POST /jobs/{id}/approve", s.action(s.approveJob))
	s.handle("POST /jobs/{id}/refuse", s.action(s.refuseJob))
}

// clipName is a typed account name as it may be shown again.
func clipName(name string) string {
	name = strings.TrimSpace(name)
	if len(name) > 64 {
		return name[:64]
	}
	return name
}

// clientAddr is the address sign-in and sign-up attempts are counted by:
// the peer, or, behind a proxy the operator trusts (--trusted-proxy),
// the address it forwarded for (admission.Proxies).
func (s *Server) clientAddr(r *http.Request) string {
	return s.adm.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
}

// fieldOf names the form field of an error ("" when it names none).
func fieldOf(err error) string {
	var fe *accounts.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// formStatus is the HTTP status of a form's error.
func formStatus(err error) int {
	if fieldOf(err) != "" {
		return http.StatusBadRequest
	}
	return asWebError(err).Status
}

// signinAccount signs in with a name and password (the form is parsed and
// its CSRF token checked).
func (s *Server) signinAccount(w http.ResponseWriter, r *http.Request, fail func(status int, field, msg string)) {
	if s.cfg.Accounts == nil {
		fail(http.StatusBadRequest, "name", "This coordinator has no accounts: sign in with a client or admin token.")
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	password := r.PostFormValue("password")
	switch {
	case name == "":
		fail(http.StatusBadRequest, "name", "The account name is empty.")
		return
	case password == "":
		fail(http.StatusBadRequest, "password", "The password is empty.")
		return
	}
	token, a, err := s.cfg.Accounts.SignIn(r.Context(), s.clientAddr(r), name, password)
	switch {
	case errors.Is(err, accounts.ErrSignIn):
		fail(http.StatusUnauthorized, "password", "Unknown account or wrong password.")
		return
	case errors.Is(err, accounts.ErrRateLimited):
		w.Header().Set("Retry-After", "60")
		fail(http.StatusTooManyRequests, "", "Too many sign-in attempts: wait a minute and try again.")
		return
	case admission.IsBusy(err):
		w.Header().Set("Retry-After", "5")
		fail(http.StatusTooManyRequests, "", "The coordinator is checking as many passwords as it may at once: try again in a few seconds.")
		return
	case err != nil:
		we := asWebError(err)
		if we.Status >= 500 {
			s.log.Error("sign-in failed", zap.Error(err))
		}
		fail(we.Status, "", we.Msg)
		return
	}
	setCookie(w, sessionCookie, token, int(s.cfg.Accounts.SessionTTL()/time.Second))
	s.log.Info("account signed in on the web", zap.String("account", a.Name))
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

type signupData struct {
	Name, Error, Field string
	Done               bool
}

func (s *Server) signupPage(w http.ResponseWriter, r *http.Request) {
	vw := s.viewerOf(r)
	if s.cfg.Accounts == nil || !s.cfg.Accounts.SignUpOpen() {
		s.fail(w, r, vw, pageError(http.StatusNotFound, "No sign-up", "This coordinator takes no sign-ups: ask an admin for an account."))
		return
	}
	v := &view{Title: "Sign up", Nav: "signin", Viewer: vw, Now: s.cfg.Now(), status: http.StatusOK, Page: &signupData{}}
	v.CSRF = s.csrfToken(w, r)
	s.render(w, v, "signup")
}

func (s *Server) signup(w http.ResponseWriter, r *http.Request) {
	vw := s.viewerOf(r)
	err := parseForm(w, r)
	if err == nil && (s.cfg.Accounts == nil || !s.cfg.Accounts.SignUpOpen()) {
		err = pageError(http.StatusNotFound, "No sign-up", "This coordinator takes no sign-ups: ask an admin for an account.")
	}
	if err != nil {
		s.fail(w, r, vw, err)
		return
	}
	d := &signupData{Name: clipName(r.PostFormValue("name"))}
	status := http.StatusOK
	if err := s.cfg.Accounts.SignUp(r.Context(), s.clientAddr(r), strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("password"), r.PostFormValue("password_repeat")); err != nil {
		if asWebError(err).Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "60")
		}
		d.Error, d.Field, status = asWebError(err).Msg, fieldOf(err), formStatus(err)
		if d.Field != "" {
			d.Error = err.Error()
		}
	} else {
		d.Done = true
	}
	v := &view{Title: "Sign up", Nav: "signin", Viewer: vw, Now: s.cfg.Now(), status: status, Page: d}
	v.CSRF = s.csrfToken(w, r)
	s.render(w, v, "signup")
}

// signedAccount refuses a viewer that is not signed in with an account.
func (s *Server) signedAccount(vw viewer) error {
	if s.cfg.Accounts == nil {
		return pageError(http.StatusNotFound, "No accounts", "This coordinator has no accounts.")
	}
	if !vw.Account {
		return &webError{Status: http.StatusUnauthorized, Title: "Sign in",
			Msg: "This page is an account's: sign in with your name and password.", SignIn: true}
	}
	return nil
}

type accountData struct {
	Account  accounts.Account
	Tokens   []credentials.View
	NewToken string // shown once, right after it is made
	NewName  string
	Error    string
	Field    string
	Which    string // the form the error is about: "password" or "token"
	Changed  bool
	Label    string
	Role     string
}

func (s *Server) accountData(r *http.Request, vw viewer) (*accountData, error) {
	if err := s.signedAccount(vw); err != nil {
		return nil, err
	}
	a, err := s.cfg.Accounts.Get(r.Context(), vw.Name)
	if err != nil {
		return nil, err
	}
	return &accountData{Account: a, Tokens: s.cfg.Credentials.Owned(vw.Name), Role: "client"}, nil
}

func (s *Server) accountPage(r *http.Request, v *view) error {
	d, err := s.accountData(r, v.Viewer)
	if err != nil {
		return err
	}
	d.Changed = r.URL.Query().Get("changed") == "1"
	v.Title, v.Nav, v.tmpl, v.Page = "Account "+v.Viewer.Name, "account", "account", d
	return nil
}

// renderAccount shows the account page after a form.
func (s *Server) renderAccount(w http.ResponseWriter, r *http.Request, vw viewer, d *accountData, status int) {
	v := &view{Title: "Account " + vw.Name, Nav: "account", Viewer: vw, Now: s.cfg.Now(), status: status, Page: d}
	v.CSRF = s.csrfToken(w, r)
	s.render(w, v, "account")
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request, vw viewer) error {
	d, err := s.accountData(r, vw)
	if err != nil {
		return err
	}
	err = s.cfg.Accounts.ChangePassword(r.Context(), vw.session, r.PostFormValue("old_password"), r.PostFormValue("password"), r.PostFormValue("password_repeat"))
	if err != nil {
		if fieldOf(err) == "" && asWebError(err).Status != http.StatusTooManyRequests {
			return err
		}
		d.Error, d.Field, d.Which = err.Error(), fieldOf(err), "password"
		s.renderAccount(w, r, vw, d, formStatus(err))
		return nil
	}
	http.Redirect(w, r, "/account?changed=1", http.StatusSeeOther)
	return nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, vw viewer) error {
	d, err := s.accountData(r, vw)
	if err != nil {
		return err
	}
	d.Label, d.Role = strings.TrimSpace(r.PostFormValue("label")), r.PostFormValue("role")
	var tok string
	switch {
	case d.Label == "":
		err = &accounts.FieldError{Field: "label", Msg: "missing: name the script or worker the token is for"}
	case d.Role != "client" && d.Role != "worker":
		err = &accounts.FieldError{Field: "role", Msg: "want client or worker"}
	case d.Role == "worker" && s.cfg.NoWorkerMinting:
		err = &accounts.FieldError{Field: "role", Msg: "this coordinator makes no worker tokens here (--worker-token-minting=false): ask an admin for a worker credential"}
	default:
		tok, err = s.cfg.Credentials.CreateOwn(r.Context(), vw.identity(), d.Label, identity.Role(d.Role))
		var ae *apierr.Error
		if errors.As(err, &ae) && (ae.Code == apierr.InvalidArgument || ae.Code == apierr.AlreadyExists) {
			err = &accounts.FieldError{Field: "label", Msg: ae.Msg}
		}
	}
	if err != nil {
		if fieldOf(err) == "" {
			return err
		}
		d.Error, d.Field, d.Which = err.Error(), fieldOf(err), "token"
		s.renderAccount(w, r, vw, d, http.StatusBadRequest)
		return nil
	}
	s.log.Info("token made on the web", zap.String("account", vw.Name), zap.String("token", vw.Name+"."+d.Label))
	d.Tokens = s.cfg.Credentials.Owned(vw.Name)
	d.NewToken, d.NewName, d.Label = tok, vw.Name+"."+d.Label, ""
	s.renderAccount(w, r, vw, d, http.StatusOK)
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, vw viewer) error {
	if err := s.signedAccount(vw); err != nil {
		return err
	}
	if err := s.cfg.Credentials.RevokeOwn(r.Context(), vw.identity(), r.PathValue("name")); err != nil {
		return err
	}
	http.Redirect(w, r, "/account", http.StatusSeeOther)
	return nil
}

type usersData struct {
	Users []accounts.Account
	Roles []string
	Error string
	Field string
	Which string // the account the error is about
}

func (s *Server) mayAdminister(vw viewer) error {
	if s.cfg.Accounts == nil {
		return pageError(http.StatusNotFound, "No accounts", "This coordinator has no accounts.")
	}
	if !vw.IsAdmin() {
		return pageError(http.StatusForbidden, "Not allowed", "Only an admin manages accounts.")
	}
	return nil
}

func (s *Server) usersPage(r *http.Request, v *view) error {
	if err := s.mayAdminister(v.Viewer); err != nil {
		return err
	}
	us, err := s.cfg.Accounts.List(r.Context(), v.Viewer.identity())
	if err != nil {
		return err
	}
	v.Title, v.Nav, v.tmpl = "Accounts", "users", "users"
	v.Page = &usersData{Users: us, Roles: []string{"user", "approver", "admin"}}
	return nil
}

// changeUser approves, changes the role of, disables or enables an account.
func (s *Server) changeUser(w http.ResponseWriter, r *http.Request, vw viewer) error {
	if err := s.mayAdminister(vw); err != nil {
		return err
	}
	name := r.PathValue("name")
	role, state := r.PostFormValue("role"), r.PostFormValue("state")
	err := s.cfg.Accounts.Change(r.Context(), vw.identity(), name, accounts.Role(role), state)
	if err == nil && state == store.UserDisabled {
		// The account's tokens stop with it.
		err = s.cfg.Credentials.RevokeOwnedBy(r.Context(), identity.Identity{Name: vw.Name, Role: identity.Admin}, name)
	}
	if err != nil {
		if fieldOf(err) == "" && asWebError(err).Status != http.StatusBadRequest {
			return err
		}
		us, lerr := s.cfg.Accounts.List(r.Context(), vw.identity())
		if lerr != nil {
			return lerr
		}
		v := &view{Title: "Accounts", Nav: "users", Viewer: vw, Now: s.cfg.Now(), status: http.StatusBadRequest,
			Page: &usersData{Users: us, Roles: []string{"user", "approver", "admin"}, Error: err.Error(), Field: fieldOf(err), Which: name}}
		v.CSRF = s.csrfToken(w, r)
		s.render(w, v, "users")
		return nil
	}
	http.Redirect(w, r, "/users", http.StatusSeeOther)
	return nil
}

type auditData struct {
	Entries []store.AuditEntry
	Filter  store.AuditFilter
	Next    string
}

// auditPage shows the audit log to admins and approvers, newest first, a
// page at a time (?before=ID), filtered by actor, action or target.
func (s *Server) auditPage(r *http.Request, v *view) error {
	if s.cfg.Store == nil {
		return pageError(http.StatusNotFound, "No audit log", "This coordinator keeps no store.")
	}
	if !v.Viewer.Approver {
		return pageError(http.StatusForbidden, "Not allowed", "The audit log is for admins and approvers.")
	}
	q := r.URL.Query()
	f := store.AuditFilter{Actor: q.Get("actor"), Action: q.Get("action"), Target: q.Get("target"), Limit: PageSize}
	for _, p := range []struct{ name, v string }{{"actor", f.Actor}, {"action", f.Action}, {"target", f.Target}} {
		if len(p.v) > 200 {
			return pageError(http.StatusBadRequest, "Bad filter", "%s: at most 200 bytes.", p.name)
		}
	}
	if b := q.Get("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 1 {
			return pageError(http.StatusBadRequest, "Bad page", "before %s: want an entry number.", clipQ(b))
		}
		f.Before = n
	}
	es, err := s.cfg.Store.AuditLog(r.Context(), f)
	if err != nil {
		return apierr.Store(err)
	}
	d := &auditData{Entries: es, Filter: f}
	if len(es) == PageSize {
		nq := url.Values{}
		for k, vs := range q {
			nq[k] = vs
		}
		nq.Set("before", strconv.FormatInt(es[len(es)-1].ID, 10))
		d.Next = "/audit?" + nq.Encode()
	}
	v.Title, v.Nav, v.tmpl, v.Page = "Audit log", "audit", "audit", d
	return nil
}

func (s *Server) approveJob(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	if err := s.cfg.Core.Approve(r.Context(), vw.identity(), id); err != nil {
		return err
	}
	s.log.Info("job approved on the web", zap.String("job_id", id), zap.String("identity", vw.Name))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

func (s *Server) refuseJob(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if len(reason) > 500 {
		return bad("reason: at most 500 bytes")
	}
	if err := s.cfg.Core.Refuse(r.Context(), vw.identity(), id, reason); err != nil {
		return err
	}
	s.log.Info("job refused on the web", zap.String("job_id", id), zap.String("identity", vw.Name))
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

// pendingRow is a job waiting for approval on the front page.
type pendingRow struct {
	ID, URL, Kind, Submitter string
	// MayDecide: the viewer may approve or refuse it (else no buttons: the
	// core would answer 403).
	MayDecide bool
}

// frontPage is the list with the jobs that wait for approval above it.
func (s *Server) frontPage(r *http.Request, v *view) error {
	if err := s.listPage(r, v); err != nil {
		return err
	}
	for _, j := range s.cfg.Core.PendingJobs() {
		row := pendingRow{ID: j.ID, Kind: j.Kind, Submitter: j.Submitter, URL: "/jobs/" + url.PathEscape(j.ID),
			MayDecide: v.Viewer.Signed && s.cfg.Core.MayDecide(r.Context(), v.Viewer.identity(), j.ID)}
		v.Pending = append(v.Pending, row)
	}
	return nil
}

// jobSnapshot is the core's snapshot of a job, shown as pending when it
// waits for approval (a copy: snapshots may be shared).
func (s *Server) jobSnapshot(id string, full bool) (any, error) {
	snap, err := s.cfg.Core.Job(id, full)
	if err != nil {
		return nil, err
	}
	if j, ok := snap.(*arbiterv1.Job); ok && j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING && s.cfg.Core.Pending(id) {
		c := proto.Clone(j).(*arbiterv1.Job)
		jobproto.MarkPending(c)
		return c, nil
	}
	return snap, nil
}
