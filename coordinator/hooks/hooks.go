// Package hooks sends webhooks: when a job finishes, fails or cannot
// progress, every hook subscribed to that event gets one signed POST
// with the job (as `arbiter status --json` prints it) and its result
// block.
//
// Invariants:
//   - One event reaches one hook once: a delivery's id is hook/job/event,
//     written before the first attempt (store.AddDelivery refuses a
//     second); it is marked delivered after the first 2xx and never sent
//     again. The id travels in X-Arbiter-Delivery so that a receiver can
//     drop the duplicate a coordinator killed between the receiver's 2xx
//     and its own write would send after its restart.
//   - Deliveries are attempted concurrently, at most PerOwner of one hook
//     owner's at once and Concurrent in all, and a delivery is never
//     attempted twice at once (inFlight): one user's slow or hanging
//     receivers delay only that user's deliveries. Each pass reads at
//     most PerOwner due deliveries of each hook, so a long backlog of one
//     hook cannot push another's out of the pass either.
//   - A failed attempt is retried with exponential backoff
//     (RetryBase·2^(n-1), at most an hour apart) up to MaxAttempts.
//   - Webhooks make the coordinator send requests where a user says: the
//     address is checked when the connection is made, after DNS
//     resolution (so a name that resolves to a public address when the
//     hook is made and to a private one later is still refused), and
//     loopback, private, link-local, CGNAT, multicast and unspecified
//     addresses are refused unless the operator allows them (Allow).
//     Proxies from the environment are not used and redirects are not
//     followed: either would send the request somewhere not checked.
//   - The body is signed with the hook's secret (HMAC-SHA256, in
//     X-Arbiter-Signature-256 as sha256=HEX, as GitHub does); the secret
//     is shown once, when the hook is made.
package hooks

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/destpolicy"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Events a hook may subscribe to.
const (
	EventFinished = "finished" // a test, tune, perft job or dataset ended done
	EventFailed   = "failed"   // a job ended failed
	EventBlocked  = "blocked"  // a running job cannot progress (no worker can take it)
)

// Events lists them in order.
var Events = []string{EventFinished, EventFailed, EventBlocked}

// Scopes of a hook: whose jobs' events it gets.
const (
	ScopeOwn      = "own"      // its owner's jobs
	ScopeFarm     = "farm"     // every job (admins)
	ScopeFollowed = "followed" // the jobs its owner follows on the web pages
)

// Scopes lists them.
var Scopes = []string{ScopeOwn, ScopeFarm, ScopeFollowed}

// Formats of a payload.
var Formats = []string{"json", "discord", "slack"}

// Defaults and bounds.
const (
	DefaultInterval    = time.Second
	DefaultRetryBase   = 5 * time.Second
	DefaultMaxAttempts = 8
	DefaultTimeout     = 10 * time.Second
	// DefaultPerOwner deliveries of one hook owner are attempted at once,
	// DefaultConcurrent in all.
	DefaultPerOwner   = 4
	DefaultConcurrent = 64
	// dueBatch bounds the due deliveries one pass reads.
	dueBatch    = 1000
	maxBackoff  = time.Hour
	maxURLBytes = 2048
	// MaxHooksPerIdentity bounds the hooks of one non-admin credential:
	// each is a request the coordinator sends per event.
	MaxHooksPerIdentity = 20
	// scanJobs is how many of the newest jobs each scan reads.
	scanJobs = 500
)

// Config is what a Manager needs.
type Config struct {
	Store *store.Store
	// Jobs is the coordinator's own API (in process), called with Token:
	// the jobs the hooks see are those `arbiter status` shows, with the
	// reasons why a job cannot progress.
	Jobs  grpc.ClientConnInterface
	Token string
	// Allow lists the destinations outside the public internet that
	// hooks may reach anyway: CIDRs ("10.0.0.0/8") or host names
	// ("hooks.internal"); "*" allows everything.
	Allow []string
	// JobJSON renders a job in payloads as `arbiter status --json` does
	// (jobreport.NewJobJSON, which the coordinator's packages do not
	// import); nil: the Job message in protobuf JSON.
	JobJSON func(*arbiterv1.Job) any
	// PageURL, when set, gives a job's page address (its link in the
	// result block).
	PageURL func(jobID string) string
	// Interval between scans (DefaultInterval); RetryBase, MaxAttempts
	// and Timeout shape deliveries.
	Interval    time.Duration
	RetryBase   time.Duration
	MaxAttempts int
	Timeout     time.Duration
	// PerOwner (DefaultPerOwner) and Concurrent (DefaultConcurrent) bound
	// the deliveries attempted at once: of one hook owner, and in all.
	PerOwner   int
	Concurrent int
	Logger     *zap.Logger
	Now        func() time.Time
	Registerer prometheus.Registerer
}

// Manager keeps the hooks and delivers their events.
type Manager struct {
	cfg       Config
	log       *zap.Logger
	jobs      arbiterv1.JobServiceClient
	client    *http.Client
	policy    *destpolicy.Policy
	mu        sync.Mutex
	hooks     []*store.Hook
	seen      map[string]bool // deliveries known to be recorded
	sent      *prometheus.CounterVec
	deliverMu sync.Mutex // one delivery pass at a time
	flight    *inFlight
	attempts  sync.WaitGroup // attempts started and not ended
}

// New loads the hooks and makes the sender.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Store == nil {
		return nil, errors.New("hooks: a store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.PerOwner <= 0 {
		cfg.PerOwner = DefaultPerOwner
	}
	if cfg.Concurrent <= 0 {
		cfg.Concurrent = DefaultConcurrent
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, seen: map[string]bool{}, flight: newInFlight(cfg.PerOwner, cfg.Concurrent),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome: delivered, retry (failed, to be tried again), failed (given up)."}, []string{"outcome"})}
	for _, o := range []string{"delivered", "retry", "failed"} {
		m.sent.WithLabelValues(o)
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(m.sent)
	}
	policy, err := destpolicy.Parse("--hook-allow", cfg.Allow)
	if err != nil {
		return nil, err
	}
	m.policy = policy
	if cfg.Jobs != nil {
		m.jobs = arbiterv1.NewJobServiceClient(cfg.Jobs)
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, Control: m.checkDial}
	transport := &http.Transport{
		Proxy: nil, // a proxy would make the connection this check sees
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if m.policy.AllowsHost(host) {
				return (&net.Dialer{Timeout: cfg.Timeout}).DialContext(ctx, network, addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       time.Minute,
	}
	m.client = &http.Client{Transport: transport, Timeout: cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hooks, err := cfg.Store.Hooks(ctx)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	m.hooks = hooks
	return m, nil
}

// checkDial runs on the address a connection is about to be made to,
// after DNS resolution.
func (m *Manager) checkDial(network, address string, c syscall.RawConn) error {
	return m.policy.Control("webhook destination")(network, address, c)
}

// checkURL refuses what a hook may not be: not http(s), no host,
// credentials in the URL, an address literal the operator does not
// allow. A host name is checked when each delivery connects.
func (m *Manager) checkURL(raw string) error {
	if len(raw) > maxURLBytes {
		return apierr.Invalid("url: %d bytes (at most %d)", len(raw), maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return apierr.Invalid("url %s: %v", apierr.Q(raw), err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return apierr.Invalid("url %s: a webhook is http:// or https://", apierr.Q(raw))
	case u.Host == "" || u.Hostname() == "":
		return apierr.Invalid("url %s: no host", apierr.Q(raw))
	case u.User != nil:
		return apierr.Invalid("url %s: no user or password in the URL (the hook's secret signs each delivery)", apierr.Q(raw))
	case u.Fragment != "":
		return apierr.Invalid("url %s: a fragment is never sent", apierr.Q(raw))
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := m.policy.Denied(ip); why != "" {
			return apierr.Invalid("url %s: %s is %s; this coordinator sends webhooks to public addresses only unless its operator allows more (--hook-allow)", apierr.Q(raw), ip, why)
		}
	} else if destpolicy.IsLocalhost(host) {
		if !m.policy.AllowsHost(host) {
			return apierr.Invalid("url %s: localhost is this machine; refused unless the operator allows it (--hook-allow)", apierr.Q(raw))
		}
	}
	return nil
}

// Add registers a hook of id's for events (a subset of Events) in format
// (Formats; "" is json) with scope (Scopes; "" is own): farm hooks
// (every job, not only id's) are for admins; followed hooks get the
// events of the jobs id follows. It returns the hook with its secret,
// which is shown only now.
func (m *Manager) Add(ctx context.Context, id identity.Identity, rawURL string, events []string, format, scope string) (*store.Hook, error) {
	if !id.CanSubmit() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not add webhooks", apierr.Q(id.Name), id.Role)
	}
	if scope == "" {
		scope = ScopeOwn
	}
	if !slices.Contains(Scopes, scope) {
		return nil, apierr.Invalid("scope %s: want own, farm or followed", apierr.Q(scope))
	}
	farm := scope == ScopeFarm
	if farm && !id.IsAdmin() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s: only admins add farm-wide webhooks (every job's events)", apierr.Q(id.Name))
	}
	if err := m.checkURL(rawURL); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, apierr.Invalid("events: name at least one of %s", strings.Join(Events, ", "))
	}
	var evs []string
	for _, e := range events {
		e = strings.ToLower(strings.TrimSpace(e))
		if !slices.Contains(Events, e) {
			return nil, apierr.Invalid("events: %s is not an event (%s)", apierr.Q(e), strings.Join(Events, ", "))
		}
		if !slices.Contains(evs, e) {
			evs = append(evs, e)
		}
	}
	if format == "" {
		format = "json"
	}
	if !slices.Contains(Formats, format) {
		return nil, apierr.Invalid("format %s: want json, discord or slack", apierr.Q(format))
	}
	m.mu.Lock()
	mine := 0
	for _, h := range m.hooks {
		if h.Owner == id.Name {
			mine++
		}
	}
	m.mu.Unlock()
	if !id.IsAdmin() && mine >= MaxHooksPerIdentity {
		return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonQuota, "credential %s has %d webhooks, the most one credential may have", apierr.Q(id.Name), mine)
	}
	h := &store.Hook{ID: "h" + randomHex(6), URL: rawURL, Events: strings.Join(evs, ","), Format: format, Secret: randomHex(32),
		Owner: id.Name, Scope: scope, CreatedAt: m.cfg.Now()}
	if err := m.cfg.Store.PutHook(ctx, h); err != nil {
		return nil, apierr.Store(err)
	}
	m.mu.Lock()
	m.hooks = append(m.hooks, h)
	m.mu.Unlock()
	m.log.Info("webhook added", zap.String("hook", h.ID), zap.String("url", redactQuery(h.URL)), zap.String("events", h.Events),
		zap.String("format", h.Format), zap.String("scope", h.Scope), zap.String("by", id.Name))
	return h, nil
}

// List returns the hooks id may see (its own; an admin's: all), without
// their secrets.
func (m *Manager) List(id identity.Identity) ([]store.Hook, error) {
	if !id.CanSubmit() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not read webhooks", apierr.Q(id.Name), id.Role)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Hook
	for _, h := range m.hooks {
		if id.IsAdmin() || h.Owner == id.Name {
			c := *h
			c.Secret = ""
			out = append(out, c)
		}
	}
	return out, nil
}

// hook returns hook hookID if id may manage it.
func (m *Manager) hook(id identity.Identity, hookID string) (*store.Hook, error) {
	if !id.CanSubmit() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not manage webhooks", apierr.Q(id.Name), id.Role)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range m.hooks {
		if h.ID == hookID {
			if !id.IsAdmin() && h.Owner != id.Name {
				break // someone else's hook is not named to id
			}
			return h, nil
		}
	}
	return nil, apierr.New(apierr.NotFound, apierr.ReasonBadInput, "webhook %s: no such webhook of yours (arbiter hook list)", apierr.Q(hookID))
}

// Remove removes a hook of id's (an admin's: any) and its deliveries.
func (m *Manager) Remove(ctx context.Context, id identity.Identity, hookID string) error {
	h, err := m.hook(id, hookID)
	if err != nil {
		return err
	}
	if err := m.cfg.Store.DeleteHook(ctx, h.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return apierr.Store(err)
	}
	m.mu.Lock()
	m.hooks = slices.DeleteFunc(m.hooks, func(x *store.Hook) bool { return x.ID == h.ID })
	m.mu.Unlock()
	m.log.Info("webhook removed", zap.String("hook", h.ID), zap.String("by", id.Name))
	return nil
}

// Deliveries returns up to limit deliveries, newest first, of hook hookID
// ("" for every hook id may see), without payloads.
func (m *Manager) Deliveries(ctx context.Context, id identity.Identity, hookID string, limit int) ([]*store.Delivery, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	if hookID != "" {
		if _, err := m.hook(id, hookID); err != nil {
			return nil, err
		}
	} else if !id.CanSubmit() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not read webhooks", apierr.Q(id.Name), id.Role)
	}
	list, err := m.cfg.Store.Deliveries(ctx, hookID, limit)
	if err != nil {
		return nil, apierr.Store(err)
	}
	visible := map[string]bool{}
	hooks, _ := m.List(id)
	for _, h := range hooks {
		visible[h.ID] = true
	}
	out := list[:0]
	for _, d := range list {
		if visible[d.HookID] {
			d.Payload = ""
			out = append(out, d)
		}
	}
	return out, nil
}

// Run scans for events and starts their deliveries every Interval until
// ctx ends, then waits for the attempts in progress (which ctx ends too).
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	defer m.wait()
	for {
		m.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick records the deliveries of new events, sends those due and waits
// for the attempts it started.
func (m *Manager) Tick(ctx context.Context) {
	m.pass(ctx)
	m.wait()
}

// pass records the deliveries of new events and starts those due.
func (m *Manager) pass(ctx context.Context) {
	if err := m.scan(ctx); err != nil && ctx.Err() == nil {
		m.log.Warn("webhook scan", zap.Error(err))
	}
	m.deliverDue(ctx)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// redactQuery drops a URL's query (Discord and Slack put their tokens in
// the path, others in the query): logs show where, not with what.
func redactQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	u.RawQuery = ""
	if u.Host == "discord.com" || u.Host == "hooks.slack.com" || strings.HasSuffix(u.Host, ".discord.com") {
		u.Path = "/…"
	}
	return u.String()
}

// Sign is a body's signature with secret: what X-Arbiter-Signature-256
// carries after "sha256=".
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a received body against its X-Arbiter-Signature-256
// header, in constant time: what a receiver does first.
func Verify(secret string, body []byte, header string) bool {
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	want := Sign(secret, body)
	return hmac.Equal([]byte(got), []byte(want))
}

// withToken calls the in-process API as the coordinator.
func (m *Manager) withToken(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+m.cfg.Token)
}
