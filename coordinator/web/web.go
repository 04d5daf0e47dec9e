// Package web serves the coordinator's pages: the running, pending and
// finished tests, perft jobs and verify sessions (/ and /tests), the
// workers (/workers) and the overview's key figures read from a
// Prometheus (/monitor, monitor.go); and, for a signed-in client or admin,
// the submit page (/submit), forms to cancel a job and change a running
// job's priority or throughput share. The kinds of job plug in their own
// pages (a test, its games, a perft job, a tune, a verify session:
// pages.go), downloads (a test's PGNs: downloads.go), forms (changing,
// resuming, copying a test, and the submit routes: routes.go), their
// forms on the submit page (the test's and perft's: formsections.go, with
// the kit they share, formkit.go) and tables of the list (the tests',
// perft's and tunes': listsections.go), from their folders under kinds/,
// so this package names no kind that plugs in.
//
// Pages are rendered on the server from html/template with their CSS, a
// small script and the charts (inline SVG) embedded in the binary; every
// page is complete without JavaScript. With it, a page subscribes to its
// own URL with ?live=1 (server-sent events) and swaps in the part that
// changes when its job changes (or every LiveInterval for lists).
//
// Invariants:
//   - Reading needs no credential unless Config.RequireSignIn; changing
//     anything needs a signed-in client or admin, whose credential (the
//     bearer token, or an account's session token) is kept in a Secure,
//     HttpOnly, SameSite=Strict cookie and resolved on every request, so a
//     revoked credential or ended session stops at once.
//   - Every route is registered through the web door's admission
//     (Server.handle, package admission): every state-changing request is
//     a POST carrying a CSRF token bound to the browser's own CSRF cookie
//     in its URL or an X-CSRF-Token header, from this origin, with a
//     viewer of the route's role and a body within the route's limit,
//     all checked from the headers before a byte of the body is read;
//     the core checks roles and ownership again.
//   - Bad input (unknown ids, bad FENs, time controls, specs, missing
//     tokens, credentials) gets a page naming the problem with a 4xx status,
//     and nothing is stored.
//   - The package only reads the coordinator through its pieces' public
//     methods and changes it only through the core (Create, Cancel,
//     SetPriority), as the gRPC face does.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/credentials"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what the pages serve.
type Config struct {
	Core *core.Core
	// Games, when set, is the workload of match and SPRT tests; nil: the
	// test kind's workload of Core (testview.Of), which a program installs.
	Games testview.Tests
	// Tunes, when set, shows which workers running SPSA tunes bar (the
	// workers page); nil: the workload of Core that bars workers from its
	// jobs (the SPSA kind's, when a program installs it). Tunes are listed
	// and shown through Core either way.
	Tunes Barrer
	// Verify, when set, is where the list reads verify sessions; nil: the
	// workload of Core that keeps them (the verify kind's, when a program
	// installs it), or none, and then the list has none. A session's page
	// (/verify/{id}) registers from the kind and reads its own workload.
	Verify      VerifySessions
	Credentials *credentials.Manager
	// Accounts, when set, adds accounts: sign-up, sign-in with a password,
	// the account page, the admins' accounts page, approvals of pending
	// tests. Tokens sign in either way.
	Accounts *accounts.Service
	// Store keeps the CSRF key across restarts (meta table); nil: a key
	// per process, so forms opened before a restart must be reloaded.
	Store  *store.Store
	Now    func() time.Time
	Logger *zap.Logger
	// GrafanaURL is the base URL of the Grafana serving the dashboards of
	// dashboards/ ("" for none): each page links its dashboard.
	GrafanaURL string
	// PrometheusURL is the base URL of a Prometheus scraping this
	// coordinator ("" for none): /monitor reads the key figures from it.
	PrometheusURL string
	// PrometheusScrape is that Prometheus's scrape interval (0: 15s);
	// the queries' rate windows are four of it.
	PrometheusScrape time.Duration
	// RequireSignIn turns anonymous reading off: every page but the
	// sign-in page then needs a client or admin credential.
	RequireSignIn bool
	// BooksDir is a directory of opening books (.epd, .pgn) the submit form
	// offers ("" for none); a book can always be uploaded with the form.
	BooksDir string
	// LiveInterval is how often live list pages look for changes (3s).
	LiveInterval time.Duration
	// MaxLiveStreams bounds the live-update streams served at once (256).
	MaxLiveStreams int
	// MaxLiveDuration ends a live stream after this long (10 minutes); the
	// browser reconnects, so a stream never holds a connection for ever.
	MaxLiveDuration time.Duration
	// Diffs, when set, shows on a test of two commits of one repository
	// the diff between them.
	Diffs DiffSource
	// Hooks, when set, lists a signed-in user's webhooks and their
	// deliveries (/hooks).
	Hooks HookSource
	// Follows, when set, lets a signed-in user follow jobs and be told,
	// in the browser, when they finish, fail or are blocked (follows.go).
	Follows FollowSource
	// EventPoll is how often pages ask for the user's events of followed
	// jobs (15s).
	EventPoll time.Duration
	// Trust, when set, shows every worker identity's trust on the workers
	// page (gamepair/trust.go).
	Trust *gamepair.Trust
	// DeclareLiar, when set, takes an admin's verdict that a worker
	// identity lied (the block form's "found lying"): its results are
	// purged from every running or stopped job (Coordinator.DeclareLiar).
	DeclareLiar func(ctx context.Context, caller identity.Identity, name, reason string) ([]string, error)
	// NoWorkerMinting refuses worker tokens on /account (the coordinator's
	// --worker-token-minting=false): workers then run only on credentials
	// an admin made.
	NoWorkerMinting bool
	// Admission admits every request before its body is read (the
	// coordinator's; nil: a default one of the pages' own).
	Admission *admission.Admission
}

// Server serves the pages. It is an http.Handler for "/".
type Server struct {
	cfg   Config
	log   *zap.Logger
	mux   *http.ServeMux
	pages map[string]*template.Template
	// sections are the list's registered sections, by name.
	sections map[string]*template.Template
	// forms are the submit page's registered forms, by name.
	forms   map[string]*template.Template
	csrfKey []byte
	live    chan struct{} // a slot per live stream
	closing chan struct{} // closed by Close: live streams end
	once    sync.Once
	adm     *admission.Admission
	// door registers every route behind the admission check.
	door *admission.HTTPDoor
}

// Close ends the live streams (call it before shutting the HTTP server
// down, which would otherwise wait for them). Pages are still served.
func (s *Server) Close() { s.once.Do(func() { close(s.closing) }) }

// csrfKeyName is the meta key of the CSRF key.
const csrfKeyName = "web_csrf_key"

// New builds the pages' handler.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Games == nil && cfg.Core != nil {
		cfg.Games = testview.Of(cfg.Core.Workloads())
	}
	if cfg.Core == nil || cfg.Games == nil || cfg.Credentials == nil {
		return nil, errors.New("web: core, workloads and credentials are required")
	}
	if cfg.Verify == nil {
		cfg.Verify = verifySessionsOf(cfg.Core)
	}
	if cfg.Tunes == nil {
		cfg.Tunes = barrerOf(cfg.Core)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.LiveInterval <= 0 {
		cfg.LiveInterval = 3 * time.Second
	}
	if cfg.MaxLiveStreams <= 0 {
		cfg.MaxLiveStreams = 256
	}
	if cfg.MaxLiveDuration <= 0 {
		cfg.MaxLiveDuration = 10 * time.Minute
	}
	if cfg.EventPoll <= 0 {
		cfg.EventPoll = 15 * time.Second
	}
	cfg.GrafanaURL = strings.TrimRight(cfg.GrafanaURL, "/")
	if cfg.GrafanaURL != "" && !strings.HasPrefix(cfg.GrafanaURL, "http://") && !strings.HasPrefix(cfg.GrafanaURL, "https://") {
		return nil, fmt.Errorf("web: Grafana URL %q: want http:// or https://", clipQ(cfg.GrafanaURL))
	}
	key, err := csrfKey(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	if cfg.Admission == nil {
		if cfg.Admission, err = admission.New(admission.Config{}, nil); err != nil {
			return nil, err
		}
	}
	s := &Server{cfg: cfg, log: cfg.Logger.Named("web"), mux: http.NewServeMux(), csrfKey: key,
		live: make(chan struct{}, cfg.MaxLiveStreams), closing: make(chan struct{}), adm: cfg.Admission}
	s.door = &admission.HTTPDoor{Door: admission.Web, A: cfg.Admission, CSRF: s.checkCSRF, Refuse: s.refuse,
		Identify: func(r *http.Request) (identity.Identity, bool) {
			vw := s.viewerOf(r)
			return vw.identity(), vw.Signed
		}}
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	base, err := parseBase()
	if err != nil {
		return nil, err
	}
	if s.sections, err = parseSections(base); err != nil {
		return nil, err
	}
	if s.forms, err = parseForms(base); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// csrfKey returns the stored CSRF key, making it on first use.
func csrfKey(ctx context.Context, st *store.Store) ([]byte, error) {
	if st != nil {
		key, err := st.Meta(ctx, csrfKeyName)
		if err != nil {
			return nil, fmt.Errorf("web: CSRF key: %w", err)
		}
		if len(key) >= 32 {
			return key, nil
		}
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if st != nil {
		if err := st.PutMeta(ctx, csrfKeyName, key); err != nil {
			return nil, fmt.Errorf("web: CSRF key: %w", err)
		}
	}
	return key, nil
}

// pageNames are the templates of templates/ that are whole pages (with
// those of the registered pages, pages.go).
var pageNames = []string{"list", "workers", "submit", "signin", "error", "signup", "account", "users", "audit", "follows"}

// parseBase parses the layout with its parts and functions, the base
// every page and list section is parsed on.
func parseBase() (*template.Template, error) {
	base, err := template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/block.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	return base, nil
}

func parsePages() (map[string]*template.Template, error) {
	base, err := parseBase()
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	parse := func(name string, from fs.FS) error {
		t, err := parseOn(base, from, name)
		if err != nil {
			return fmt.Errorf("web: template %s: %w", name, err)
		}
		out[name] = t
		return nil
	}
	for _, n := range pageNames {
		if err := parse(n, templateFS); err != nil {
			return nil, err
		}
	}
	for _, p := range Pages() {
		from := p.Templates
		if from == nil {
			from = templateFS
		}
		if err := parse(p.Name, from); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(staticFS, "static")
	s.door.Handle(s.mux, "GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	s.handle("GET /{$}", s.page(s.frontPage))
	s.handle("GET /tests", s.page(s.listPage))
	s.handle("GET /users/{name}", s.page(s.userPage))
	s.pageRoutes()
	s.downloadRoutes()
	s.handle("GET /workers", s.page(s.workersPage))
	s.handle("GET /jobs/{id}", s.guard(s.jobRedirect))
	s.handle("GET /submit", s.page(s.submitPage))
	s.handle("POST /jobs/{id}/cancel", s.action(s.cancelJob))
	s.handle("POST /jobs/{id}/priority", s.action(s.setPriority))
	s.handle("POST /workers/block", s.action(s.blockWorker))
	s.formRoutes()
	s.handle("GET /signin", s.signinPage)
	s.handle("POST /signin", s.signin)
	s.handle("POST /signout", s.signout)
	s.accountRoutes()
	s.followRoutes()
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, s.viewerOf(r), pageError(http.StatusNotFound, "No such page", "%s is not a page of this coordinator.", clipQ(r.URL.Path)))
	})
}

// handle serves pattern behind the web door's admission (package
// admission: CSRF, role and body length from the headers, before the
// body is read). Every route goes through it.
func (s *Server) handle(pattern string, h http.HandlerFunc) { s.door.HandleFunc(s.mux, pattern, h) }

// Door is the web door's admission, for the tests that walk its routes.
func (s *Server) Door() *admission.HTTPDoor { return s.door }

// refuse answers a request admission refused, as a page.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		switch {
		case ae.Reason == apierr.ReasonTooLarge:
			err = pageError(http.StatusRequestEntityTooLarge, "Too large", "%s", ae.Msg)
		case ae.Code == apierr.Unauthenticated:
			err = &webError{Status: http.StatusUnauthorized, Title: "Sign in",
				Msg: "No credential: sign in with a client or admin token to submit, cancel or change jobs.", SignIn: true}
		}
	}
	s.fail(w, r, s.viewerOf(r), err)
}

// ServeHTTP implements http.Handler: security headers, panic recovery, the
// routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic serving a page", zap.String("path", r.URL.Path), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			http.Error(w, "internal error (logged by the coordinator)", http.StatusInternalServerError)
		}
	}()
	s.mux.ServeHTTP(w, r)
}

func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		h.ServeHTTP(w, r)
	})
}

// view is what the layout renders around a page.
type view struct {
	Title   string
	Nav     string // the active navigation entry
	Viewer  viewer
	CSRF    string // the form token ("" when the browser has no CSRF cookie yet)
	Grafana string // this page's dashboard ("" without Grafana)
	Live    string // the URL of this page's live stream ("" for none)
	Now     time.Time
	Page    any
	// Pending are the jobs waiting for approval (the front page).
	Pending []pendingRow
	// Follow is a job page's Follow button (nil: none).
	Follow *followState
	// EventPoll is how often, in milliseconds, the page asks for the
	// signed-in user's events of followed jobs (0: it does not).
	EventPoll int64
	status    int
	watch     []string // job ids whose changes refresh the live part
	tmpl      string
}

// pageFunc builds a page for a request, or fails with an error page.
type pageFunc func(r *http.Request, v *view) error

// page wraps a page builder: the reader's credential (or anonymous reading),
// then either the whole page or, with ?live=1, its live stream.
func (s *Server) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vw := s.viewerOf(r)
		if err := s.mayRead(vw); err != nil {
			s.fail(w, r, vw, err)
			return
		}
		if r.URL.Query().Get("live") == "1" {
			s.stream(w, r, vw, fn)
			return
		}
		v, err := s.build(w, r, vw, fn)
		if err != nil {
			s.fail(w, r, vw, err)
			return
		}
		s.render(w, v, v.tmpl)
	}
}

// build runs fn for a whole page; w receives a CSRF cookie when the
// browser has none (nil w: no cookie is set, for live updates).
func (s *Server) build(w http.ResponseWriter, r *http.Request, vw viewer, fn pageFunc) (*view, error) {
	v := &view{Viewer: vw, Now: s.cfg.Now(), status: http.StatusOK}
	if w != nil {
		v.CSRF = s.csrfToken(w, r)
	} else if c, err := r.Cookie(csrfCookie); err == nil {
		v.CSRF = s.tokenFor(c.Value)
	}
	if err := fn(r, v); err != nil {
		return nil, err
	}
	if w != nil {
		s.setFollow(r, v)
		if s.cfg.Follows != nil && vw.CanSubmit() {
			v.EventPoll = s.cfg.EventPoll.Milliseconds()
		}
	}
	return v, nil
}

// guard wraps a handler that writes its own response (downloads).
func (s *Server) guard(fn func(w http.ResponseWriter, r *http.Request, vw viewer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vw := s.viewerOf(r)
		if err := s.mayRead(vw); err != nil {
			s.fail(w, r, vw, err)
			return
		}
		if err := fn(w, r, vw); err != nil {
			s.fail(w, r, vw, err)
		}
	}
}

// render writes a whole page from template name.
func (s *Server) render(w http.ResponseWriter, v *view, name string) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.Error("rendering a page", zap.String("template", name), zap.Error(err))
		http.Error(w, "internal error rendering the page (logged by the coordinator)", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(v.status)
	w.Write(buf.Bytes())
}

// webError is a problem shown as a page with an HTTP status.
type webError struct {
	Status int
	Title  string
	Msg    string
	// SignIn shows the sign-in form with the message.
	SignIn bool
}

func (e *webError) Error() string { return e.Msg }

func pageError(status int, title, format string, args ...any) *webError {
	return &webError{Status: status, Title: title, Msg: fmt.Sprintf(format, args...)}
}

// asWebError turns a domain error into a page: its class into the HTTP
// status, its message (which names the input) as it is.
func asWebError(err error) *webError {
	var we *webError
	if errors.As(err, &we) {
		return we
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case apierr.InvalidArgument:
			return &webError{Status: http.StatusBadRequest, Title: "Bad input", Msg: ae.Msg}
		case apierr.NotFound:
			return &webError{Status: http.StatusNotFound, Title: "Not found", Msg: ae.Msg}
		case apierr.PermissionDenied:
			return &webError{Status: http.StatusForbidden, Title: "Not allowed", Msg: ae.Msg}
		case apierr.Unauthenticated:
			return &webError{Status: http.StatusUnauthorized, Title: "Sign in", Msg: ae.Msg, SignIn: true}
		case apierr.FailedPrecondition, apierr.AlreadyExists:
			return &webError{Status: http.StatusConflict, Title: "Not possible now", Msg: ae.Msg}
		case apierr.ResourceExhausted:
			return &webError{Status: http.StatusTooManyRequests, Title: "Too large", Msg: ae.Msg}
		case apierr.Unavailable:
			return &webError{Status: http.StatusServiceUnavailable, Title: "Unavailable", Msg: ae.Msg}
		}
		return &webError{Status: http.StatusInternalServerError, Title: "Internal error", Msg: ae.Msg}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &webError{Status: http.StatusServiceUnavailable, Title: "Unavailable", Msg: "the request was cancelled"}
	}
	return &webError{Status: http.StatusInternalServerError, Title: "Internal error", Msg: "internal error (logged by the coordinator)"}
}

// fail answers with an error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, vw viewer, err error) {
	we := asWebError(err)
	if we.Status >= 500 {
		s.log.Error("page failed", zap.String("path", r.URL.Path), zap.Error(err))
	}
	v := &view{Title: we.Title, Viewer: vw, Now: s.cfg.Now(), status: we.Status, Page: we}
	v.CSRF = s.csrfToken(w, r)
	if we.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="arbiter"`)
	}
	s.render(w, v, "error")
}

// clipQ quotes s for a message, cut to about 100 bytes.
func clipQ(s string) string { return apierr.Q(s) }
