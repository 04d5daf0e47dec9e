package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
)

// Sign-in and CSRF.
//
// The credential a reader signs in with (a client or admin token, as the
// CLI uses) is kept as it is in a cookie: Secure, HttpOnly (no script
// reads it), SameSite=Strict (no other site's page sends it) and
// __Host- prefixed (only this origin sets it). It is resolved on every
// request, so a revoked credential stops at once. An account's sign-in
// (a name and password, accounts.go) puts a session token in the same
// cookie instead, looked up in the store on every request.
//
// Forms carry a CSRF token: an HMAC, under a key kept in the store, of a
// random value held in the browser's own CSRF cookie (same attributes).
// The token travels in the form's action URL (?csrf=, the templates put
// it there) or an X-CSRF-Token header, never only in the body: the
// admission of the web door (package admission) checks it, the origin,
// the viewer's role and the body's length from the headers, and a POST
// without the token, with one that does not match the cookie, or from
// another origin, is refused before a byte of its body is read.

const (
	sessionCookie = "__Host-arbiter-session"
	csrfCookie    = "__Host-arbiter-csrf"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
	// maxTokenBytes bounds a credential read from a form or cookie.
	maxTokenBytes = 256
)

// viewer is who reads a page.
type viewer struct {
	Name   string
	Role   identity.Role
	Signed bool
	// Account: signed in with a name and password (a session), not a token.
	Account bool
	// Approver: may approve other people's pending tests (an admin, or an
	// account with role approver).
	Approver bool
	// session is the session token of an account's cookie.
	session string
}

// CanSubmit reports whether the viewer may submit and manage jobs.
func (v viewer) CanSubmit() bool { return v.Signed && v.identity().CanSubmit() }

// IsAdmin reports whether the viewer is an administrator.
func (v viewer) IsAdmin() bool { return v.Signed && v.Role == identity.Admin }

func (v viewer) identity() identity.Identity { return identity.Identity{Name: v.Name, Role: v.Role} }

// MayManage reports whether the viewer may cancel, change or resume a job
// of submitter: its submitter, an approver or an admin (the core checks
// again).
func (v viewer) MayManage(submitter string) bool {
	return v.CanSubmit() && (v.IsAdmin() || v.Approver || submitter == "" || submitter == v.Name)
}

// viewerOf resolves the request's cookie: an account's session (looked up
// in the store, so a signed-out, expired or disabled one stops at once) or
// a credential; a missing, unknown, revoked or worker credential reads
// anonymously.
func (s *Server) viewerOf(r *http.Request) viewer {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > maxTokenBytes {
		return viewer{}
	}
	if strings.HasPrefix(c.Value, accounts.SessionPrefix) {
		if s.cfg.Accounts == nil {
			return viewer{}
		}
		a, ok := s.cfg.Accounts.Resolve(r.Context(), c.Value)
		if !ok {
			return viewer{}
		}
		id := a.Identity()
		return viewer{Name: id.Name, Role: id.Role, Signed: true, Account: true, Approver: a.Role.MayApprove(), session: c.Value}
	}
	id, ok := s.cfg.Credentials.Resolve(c.Value)
	if !ok || !id.CanSubmit() {
		return viewer{}
	}
	return viewer{Name: id.Name, Role: id.Role, Signed: true, Approver: id.IsAdmin()}
}

// mayRead refuses anonymous readers when anonymous reading is off.
func (s *Server) mayRead(vw viewer) error {
	if s.cfg.RequireSignIn && !vw.Signed {
		return &webError{Status: http.StatusUnauthorized, Title: "Sign in",
			Msg: "This coordinator's pages need a credential: sign in with a client or admin token.", SignIn: true}
	}
	return nil
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenFor is the form token of a CSRF cookie value.
func (s *Server) tokenFor(cookie string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("csrf:"))
	m.Write([]byte(cookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge})
}

// csrfToken returns the form token of the browser's CSRF cookie, setting a
// new cookie when it has none.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 43 {
		return s.tokenFor(c.Value)
	}
	v := randomToken()
	setCookie(w, csrfCookie, v, 0)
	return s.tokenFor(v)
}

// checkCSRF refuses a POST from another origin or without a valid CSRF
// token, from the headers and the query alone (the web door's admission
// calls it before the body is read).
func (s *Server) checkCSRF(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return pageError(http.StatusForbidden, "Refused", "The form was sent from another site (origin %s): refused.", clipQ(o))
		}
	}
	tok := r.Header.Get(csrfHeader)
	if tok == "" {
		tok = r.URL.Query().Get(csrfField)
	}
	if tok == "" {
		return pageError(http.StatusForbidden, "Refused", "The form has no CSRF token: reload the page and send it again.")
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil {
		return pageError(http.StatusForbidden, "Refused", "The browser sent no CSRF cookie (cookies off?): reload the page and send the form again.")
	}
	if !hmac.Equal([]byte(tok), []byte(s.tokenFor(c.Value))) {
		return pageError(http.StatusForbidden, "Refused", "The form's CSRF token does not match this browser's: reload the page and send it again.")
	}
	return nil
}

// maxFormBytes bounds a form (with an uploaded opening book).
const maxFormBytes = 16 << 20

// parseForm reads a POST's form, multipart or not, within maxFormBytes.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(1 << 20)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		return pageError(http.StatusBadRequest, "Bad form", "The form could not be read (at most %d MB): %s", maxFormBytes>>20, clipQ(err.Error()))
	}
	return nil
}

// action wraps a state-changing POST, admitted by the web door (CSRF
// token, a credential that may submit, the body's length): the form,
// then fn.
func (s *Server) action(fn func(w http.ResponseWriter, r *http.Request, vw viewer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vw := s.viewerOf(r)
		err := parseForm(w, r)
		if err == nil {
			err = fn(w, r, vw)
		}
		if err != nil {
			s.fail(w, r, vw, err)
		}
	}
}

// secureRequest reports whether a Secure cookie set in answer to r is kept
// by the browser: TLS, a loopback host, or TLS ended by a proxy on
// loopback.
func secureRequest(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if loopbackHost(r.Host) {
		return true
	}
	peer, _, _ := net.SplitHostPort(r.RemoteAddr)
	return loopbackHost(peer) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type signinData struct {
	Next  string
	Error string
	// Field is the form field the error is about ("" for none).
	Field string
	// Name is the account name typed (shown again; never the password).
	Name string
	// Accounts: the coordinator has accounts (the password form shows).
	Accounts bool
	SignUp   bool
}

func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	vw := s.viewerOf(r)
	v := &view{Title: "Sign in", Nav: "signin", Viewer: vw, Now: s.cfg.Now(), status: http.StatusOK,
		Page: signinData{Next: localPath(r.URL.Query().Get("next")), Accounts: s.cfg.Accounts != nil,
			SignUp: s.cfg.Accounts != nil && s.cfg.Accounts.SignUpOpen()}}
	v.CSRF = s.csrfToken(w, r)
	s.render(w, v, "signin")
}

// signin checks the token and keeps it in the session cookie.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	vw := s.viewerOf(r)
	field := ""
	fail := func(status int, msg string) {
		v := &view{Title: "Sign in", Nav: "signin", Viewer: vw, Now: s.cfg.Now(), status: status,
			Page: signinData{Next: localPath(r.PostFormValue("next")), Error: msg, Field: field, Name: clipName(r.PostFormValue("name")),
				Accounts: s.cfg.Accounts != nil, SignUp: s.cfg.Accounts != nil && s.cfg.Accounts.SignUpOpen()}}
		v.CSRF = s.csrfToken(w, r)
		s.render(w, v, "signin")
	}
	if !secureRequest(r) {
		fail(http.StatusBadRequest, "Signing in needs HTTPS (or a loopback address): the credential is kept in a Secure cookie, "+
			"which the browser drops over plain HTTP. Serve the pages behind TLS.")
		return
	}
	if err := parseForm(w, r); err != nil {
		s.fail(w, r, vw, err)
		return
	}
	if _, password := r.PostForm["password"]; password {
		s.signinAccount(w, r, func(status int, f, msg string) { field = f; fail(status, msg) })
		return
	}
	field = "token"
	tok := strings.TrimSpace(r.PostFormValue("token"))
	switch {
	case tok == "":
		fail(http.StatusBadRequest, "The credential field is empty: paste a client or admin token (arbiter token create --role client).")
		return
	case len(tok) > maxTokenBytes:
		fail(http.StatusBadRequest, "That credential is too long to be one of this coordinator's tokens.")
		return
	}
	id, ok := s.cfg.Credentials.Resolve(tok)
	if !ok {
		fail(http.StatusUnauthorized, "Unknown or revoked credential.")
		return
	}
	if !id.CanSubmit() {
		fail(http.StatusForbidden, "Credential "+id.Name+" has role "+string(id.Role)+": the pages take client or admin credentials.")
		return
	}
	setCookie(w, sessionCookie, tok, 0)
	s.log.Info("signed in", zap.String("identity", id.Name), zap.String("role", string(id.Role)))
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

func (s *Server) signout(w http.ResponseWriter, r *http.Request) {
	vw := s.viewerOf(r)
	if err := parseForm(w, r); err != nil {
		s.fail(w, r, vw, err)
		return
	}
	if vw.session != "" {
		if err := s.cfg.Accounts.SignOut(r.Context(), vw.session); err != nil {
			s.fail(w, r, vw, err)
			return
		}
	}
	setCookie(w, sessionCookie, "", -1)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
