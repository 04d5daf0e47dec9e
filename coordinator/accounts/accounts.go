// Package accounts keeps the web pages' accounts: people who sign up with
// a name and a password, wait for an admin's approval, then sign in to a
// session; their roles (user, approver, admin); and the approval rule for
// tests and tunes they submit.
//
// Roles map onto the credential roles the core knows: a user and an
// approver act as a client identity, an admin as an admin identity. What an
// approver adds (approving other people's tests) is checked here, by Gate,
// for the core.
//
// Invariants:
//   - A password is kept only as its argon2id hash, a session only as the
//     SHA-256 of its token; neither is logged.
//   - Signing in gives the same answer, after the same work (one argon2id
//     hash), for an unknown account and for a wrong password, so the page
//     does not tell which names exist. Only the holder of the right
//     password learns that an account waits for approval or is disabled.
//   - Sign-in attempts are rate limited per client address, per account
//     name and in all, sign-ups per client address and in all; the token
//     is taken before the hash, so concurrent attempts cannot overdraw,
//     and a refused attempt costs no hashing.
//   - Every password hash runs in the admission hashing pool (a few at
//     once, a bounded queue, the rest refused BUSY), so a burst of
//     sign-ins holds a bounded amount of memory.
//   - Signing up answers the same whether the name is free or taken (the
//     same work, the same page), so sign-up does not tell which names
//     exist either.
//   - Every account change is in the audit log with who made it.
package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Role is an account's role.
type Role string

// The account roles.
const (
	// User submits tests and tunes; with approvals on, they wait for an
	// approver.
	User Role = "user"
	// Approver also approves or refuses other people's pending tests.
	Approver Role = "approver"
	// Admin also manages accounts and credentials.
	Admin Role = "admin"
)

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case User, Approver, Admin:
		return Role(s), nil
	}
	return "", fmt.Errorf("role %q: want user, approver or admin", s)
}

// Identity is the credential role an account acts with.
func (r Role) Identity() identity.Role {
	if r == Admin {
		return identity.Admin
	}
	return identity.Client
}

// MayApprove reports whether the role approves tests.
func (r Role) MayApprove() bool { return r == Approver || r == Admin }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// FieldError is bad input in one field of a form: the pages show it next
// to the field, the CLI as "field: message".
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ErrSignIn is the one answer to a sign-in with an unknown name or a wrong
// password.
var ErrSignIn = errors.New("unknown account or wrong password")

// ErrRateLimited refuses a sign-in attempt over the limit.
var ErrRateLimited = errors.New("too many sign-in attempts: wait a minute and try again")

// Config tunes a Service.
type Config struct {
	Store  *store.Store
	Now    func() time.Time
	Logger *zap.Logger
	// SessionTTL is how long a session lasts from sign-in (7 days).
	SessionTTL time.Duration
	// Approval: tests and tunes of accounts that are not approvers wait
	// for an approver.
	Approval bool
	// CrossApproval: nobody approves their own test (OpenBench's rule),
	// admins included.
	CrossApproval bool
	// SignUp opens the sign-up page (accounts then wait for an admin).
	// Without it only admins add accounts.
	SignUp bool
	// AttemptsPerAddress and AttemptsPerName bound sign-in attempts: a
	// burst of that many, then one per AttemptEvery (10, 10, 30s);
	// AttemptsInAll bounds the wrong ones from everywhere together (100,
	// then one a second).
	AttemptsPerAddress, AttemptsPerName, AttemptsInAll int
	AttemptEvery                                       time.Duration
	// SignUpsPerAddress bound sign-ups from one client address (3, then
	// one every 10 minutes) and SignUpsInAll from everywhere (30, then
	// one a minute).
	SignUpsPerAddress, SignUpsInAll int
	// Hashing is the pool password hashes run in (nil: one of
	// admission.DefaultHashWorkers and DefaultHashQueue of its own).
	Hashing *admission.Pool
}

// Service manages accounts and sessions. Safe for concurrent use.
type Service struct {
	cfg    Config
	st     *store.Store
	log    *zap.Logger
	byAddr *limiter
	byName *limiter
	inAll  *limiter
	// signUpByAddr and signUpInAll bound sign-ups (every one spends).
	signUpByAddr, signUpInAll *limiter
	hashing                   *admission.Pool
	// dummy is a hash no password matches, checked when the account is
	// unknown so that the answer takes as long as for a wrong password.
	dummy string

	activeMu sync.Mutex
	active   map[string]activeAt // Active's answers, for activeTTL
}

type activeAt struct {
	ok bool
	at time.Time
}

// activeTTL is how long Active trusts its last look at the store: a change
// made in the store by another process (arbiter user disable) holds within
// it.
const activeTTL = 2 * time.Second

// Active reports whether account name may act now (it exists and is
// active), for the tokens it made: looked up in the store at most every
// activeTTL per account. A failed lookup answers no.
func (s *Service) Active(name string) bool {
	now := time.Now()
	s.activeMu.Lock()
	a, ok := s.active[name]
	s.activeMu.Unlock()
	if ok && now.Sub(a.at) < activeTTL && now.Sub(a.at) >= 0 {
		return a.ok
	}
	u, err := s.st.User(context.Background(), name)
	a = activeAt{ok: err == nil && u.State == store.UserActive, at: now}
	s.activeMu.Lock()
	if len(s.active) > 100000 {
		s.active = map[string]activeAt{}
	}
	s.active[name] = a
	s.activeMu.Unlock()
	return a.ok
}

// New returns a Service on cfg.Store.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("accounts: a store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 7 * 24 * time.Hour
	}
	if cfg.AttemptsPerAddress <= 0 {
		cfg.AttemptsPerAddress = 10
	}
	if cfg.AttemptsPerName <= 0 {
		cfg.AttemptsPerName = 10
	}
	if cfg.AttemptEvery <= 0 {
		cfg.AttemptEvery = 30 * time.Second
	}
	if cfg.AttemptsInAll <= 0 {
		cfg.AttemptsInAll = 100
	}
	if cfg.SignUpsPerAddress <= 0 {
		cfg.SignUpsPerAddress = 3
	}
	if cfg.SignUpsInAll <= 0 {
		cfg.SignUpsInAll = 30
	}
	if cfg.Hashing == nil {
		cfg.Hashing = admission.NewPool(admission.DefaultHashWorkers, admission.DefaultHashQueue)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	dummy, err := HashPassword(base64.RawURLEncoding.EncodeToString(raw))
	if err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, st: cfg.Store, log: cfg.Logger.Named("accounts"), dummy: dummy, active: map[string]activeAt{},
		byAddr: newLimiter(cfg.AttemptsPerAddress, cfg.AttemptEvery), byName: newLimiter(cfg.AttemptsPerName, cfg.AttemptEvery),
		inAll:        newLimiter(cfg.AttemptsInAll, time.Second),
		signUpByAddr: newLimiter(cfg.SignUpsPerAddress, 10*time.Minute), signUpInAll: newLimiter(cfg.SignUpsInAll, time.Minute),
		hashing: cfg.Hashing}, nil
}

// SessionTTL is how long a session lasts.
func (s *Service) SessionTTL() time.Duration { return s.cfg.SessionTTL }

// SignUpOpen reports whether anyone may sign up.
func (s *Service) SignUpOpen() bool { return s.cfg.SignUp }

// Approval reports whether tests of users wait for an approver.
func (s *Service) Approval() bool { return s.cfg.Approval }

// CheckName validates an account name.
func CheckName(name string) error {
	if name == "" {
		return fieldErr("name", "missing")
	}
	if !nameRE.MatchString(name) {
		return fieldErr("name", "%s: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", apierr.Q(name))
	}
	if name == identity.Bootstrap.Name {
		return fieldErr("name", "%q is the bootstrap admin's", name)
	}
	return nil
}

// CheckPassword validates a new password (field names the form field).
func CheckPassword(field, password, repeat string) error {
	switch n := utf8.RuneCountInString(password); {
	case password == "":
		return fieldErr(field, "missing")
	case n < MinPasswordLen:
		return fieldErr(field, "%d characters; at least %d", n, MinPasswordLen)
	case len(password) > MaxPasswordLen:
		return fieldErr(field, "longer than %d bytes", MaxPasswordLen)
	case !utf8.ValidString(password):
		return fieldErr(field, "not valid UTF-8")
	case password != repeat:
		return fieldErr(field+"_repeat", "does not match the password")
	}
	return nil
}

// ErrSignUpRateLimited refuses a sign-up over the limits.
var ErrSignUpRateLimited = apierr.New(apierr.ResourceExhausted, apierr.ReasonQuota,
	"too many sign-ups from this address or in all: try again in a few minutes")

// SignUp makes a pending account, which an admin approves, for a caller
// at client address addr. Bad input is a *FieldError and stores nothing.
// A name already taken gets the same answer (nil) after the same work as
// a free one, and nothing is stored: the page does not tell which names
// exist.
func (s *Service) SignUp(ctx context.Context, addr, name, password, repeat string) error {
	if !s.cfg.SignUp {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "sign-up is closed on this coordinator: ask an admin for an account")
	}
	if err := CheckName(name); err != nil {
		return err
	}
	if err := CheckPassword("password", password, repeat); err != nil {
		return err
	}
	now := s.cfg.Now()
	if !(budget{{s.signUpByAddr, addr}, {s.signUpInAll, ""}}).take(now) {
		return ErrSignUpRateLimited
	}
	err := s.add(ctx, name, password, User, store.UserPending, name, "user.signup")
	if errors.Is(err, errNameTaken) {
		s.log.Info("sign-up for a name already taken", zap.String("account", name))
		return nil
	}
	return err
}

// errNameTaken is add's refusal of a name in use.
var errNameTaken = errors.New("name taken")

// Add makes an account on behalf of an admin, active at once.
func (s *Service) Add(ctx context.Context, actor identity.Identity, name, password string, role Role) error {
	if !actor.IsAdmin() {
		return notAdmin("add accounts")
	}
	if err := CheckName(name); err != nil {
		return err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return fieldErr("role", "%v", err)
	}
	if err := CheckPassword("password", password, password); err != nil {
		return err
	}
	return s.add(ctx, name, password, role, store.UserActive, actor.Name, "user.add")
}

func (s *Service) add(ctx context.Context, name, password string, role Role, state, actor, action string) error {
	hash, err := s.hash(ctx, password)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	u := store.User{Name: name, Password: hash, Role: string(role), State: state, CreatedAt: now}
	if state == store.UserActive {
		u.DecidedBy, u.DecidedAt = actor, now
	}
	if err := s.st.AddUser(ctx, u); err != nil {
		if errors.Is(err, store.ErrExists) {
			if action == "user.signup" {
				return errNameTaken
			}
			return fieldErr("name", "%s is taken", apierr.Q(name))
		}
		return apierr.Store(err)
	}
	s.log.Info("account added", zap.String("account", name), zap.String("role", string(role)), zap.String("state", state), zap.String("by", actor))
	return s.audit(ctx, actor, action, name, "role "+string(role)+", "+state)
}

func (s *Service) audit(ctx context.Context, actor, action, target, detail string) error {
	if err := s.st.Audit(ctx, store.AuditEntry{At: s.cfg.Now(), Actor: actor, Action: action, Target: target, Detail: detail}); err != nil {
		return apierr.Store(err)
	}
	return nil
}

func notAdmin(what string) error {
	return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only an admin may %s", what)
}

// Account is an account as pages and the CLI show it (no hash).
type Account struct {
	Name      string
	Role      Role
	State     string
	CreatedAt time.Time
	DecidedBy string
	DecidedAt time.Time
}

func accountOf(u store.User) Account {
	return Account{Name: u.Name, Role: Role(u.Role), State: u.State, CreatedAt: u.CreatedAt, DecidedBy: u.DecidedBy, DecidedAt: u.DecidedAt}
}

// Identity is the identity an account acts with.
func (a Account) Identity() identity.Identity {
	return identity.Identity{Name: a.Name, Role: a.Role.Identity()}
}

// List returns every account, for an admin.
func (s *Service) List(ctx context.Context, actor identity.Identity) ([]Account, error) {
	if !actor.IsAdmin() {
		return nil, notAdmin("list accounts")
	}
	us, err := s.st.Users(ctx)
	if err != nil {
		return nil, apierr.Store(err)
	}
	out := make([]Account, len(us))
	for i, u := range us {
		out[i] = accountOf(u)
	}
	return out, nil
}

// Get returns one account (NotFound for an unknown name).
func (s *Service) Get(ctx context.Context, name string) (Account, error) {
	u, err := s.st.User(ctx, name)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Account{}, apierr.New(apierr.NotFound, apierr.ReasonBadInput, "no account named %s", apierr.Q(name))
		}
		return Account{}, apierr.Store(err)
	}
	return accountOf(u), nil
}

// Change sets an account's role and state on behalf of an admin: approve a
// pending account (state active), change its role, disable or enable it.
// Disabling ends its sessions; an admin cannot disable or demote their own
// account (a farm must not lose its last admin by a slip).
func (s *Service) Change(ctx context.Context, actor identity.Identity, name string, role Role, state string) error {
	if !actor.IsAdmin() {
		return notAdmin("change accounts")
	}
	if _, err := ParseRole(string(role)); err != nil {
		return fieldErr("role", "%v", err)
	}
	if state != store.UserActive && state != store.UserDisabled {
		return fieldErr("state", "%q: want %s or %s", state, store.UserActive, store.UserDisabled)
	}
	old, err := s.Get(ctx, name)
	if err != nil {
		return err
	}
	if name == actor.Name && (state != store.UserActive || role != Admin) {
		return apierr.Invalid("account %s is yours: another admin must disable or demote it", apierr.Q(name))
	}
	if err := s.st.UpdateUser(ctx, name, string(role), state, actor.Name, s.cfg.Now()); err != nil {
		return apierr.Store(err)
	}
	var action string
	switch {
	case old.State == store.UserPending && state == store.UserActive:
		action = "user.approve"
	case old.State != store.UserDisabled && state == store.UserDisabled:
		action = "user.disable"
	case old.State == store.UserDisabled && state == store.UserActive:
		action = "user.enable"
	default:
		action = "user.role"
	}
	s.log.Info("account changed", zap.String("account", name), zap.String("role", string(role)), zap.String("state", state), zap.String("by", actor.Name))
	return s.audit(ctx, actor.Name, action, name, fmt.Sprintf("role %s → %s, state %s → %s", old.Role, role, old.State, state))
}

// SignIn checks a name and password from client address addr and opens a
// session: its token goes in the browser's cookie, its hash in the store.
func (s *Service) SignIn(ctx context.Context, addr, name, password string) (token string, a Account, err error) {
	now := s.cfg.Now()
	if len(name) > 64 || len(password) > MaxPasswordLen {
		// Not a name or password this service made: refuse without work,
		// and with the answer of a wrong password.
		return "", Account{}, ErrSignIn
	}
	attempt := budget{{s.byAddr, addr}, {s.byName, name}, {s.inAll, ""}}
	if !attempt.take(now) {
		return "", Account{}, ErrRateLimited
	}
	u, uerr := s.st.User(ctx, name)
	if uerr != nil && !errors.Is(uerr, store.ErrNotFound) {
		attempt.refund(now)
		return "", Account{}, apierr.Store(uerr)
	}
	hash := s.dummy
	if uerr == nil {
		hash = u.Password
	}
	right, err := s.check(ctx, hash, password)
	if err != nil {
		attempt.refund(now) // not checked: not an attempt
		return "", Account{}, err
	}
	if !right || uerr != nil {
		return "", Account{}, ErrSignIn
	}
	attempt.refund(now)
	switch u.State {
	case store.UserPending:
		return "", Account{}, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "account %s waits for an admin's approval", apierr.Q(name))
	case store.UserDisabled:
		return "", Account{}, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "account %s is disabled", apierr.Q(name))
	}
	token, err = s.newSession(ctx, u.Name, now)
	if err != nil {
		return "", Account{}, err
	}
	s.log.Info("signed in", zap.String("account", u.Name))
	return token, accountOf(u), nil
}

func sessionHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (s *Service) newSession(ctx context.Context, name string, now time.Time) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := SessionPrefix + base64.RawURLEncoding.EncodeToString(raw)
	if err := s.st.AddSession(ctx, store.Session{Hash: sessionHash(token), User: name, CreatedAt: now, ExpiresAt: now.Add(s.cfg.SessionTTL)}); err != nil {
		return "", apierr.Store(err)
	}
	return token, nil
}

// SessionPrefix starts every session token, telling it apart from a
// credential's token (credentials.TokenPrefix) in the same cookie.
const SessionPrefix = "ses_"

// Resolve returns the active account of a session token.
func (s *Service) Resolve(ctx context.Context, token string) (Account, bool) {
	if len(token) != len(SessionPrefix)+43 {
		return Account{}, false
	}
	_, u, err := s.st.Session(ctx, sessionHash(token), s.cfg.Now())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("session lookup failed", zap.Error(err))
		}
		return Account{}, false
	}
	if u.State != store.UserActive {
		return Account{}, false
	}
	return accountOf(u), true
}

// SignOut ends a session.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if err := s.st.DeleteSession(ctx, sessionHash(token)); err != nil {
		return apierr.Store(err)
	}
	return nil
}

// ChangePassword replaces the password of the account of session token,
// after checking the old one; the account's other sessions end.
func (s *Service) ChangePassword(ctx context.Context, token, old, password, repeat string) error {
	a, ok := s.Resolve(ctx, token)
	if !ok {
		return apierr.New(apierr.Unauthenticated, apierr.ReasonBadInput, "the session ended: sign in again")
	}
	now := s.cfg.Now()
	attempt := budget{{s.byName, a.Name}}
	if !attempt.take(now) {
		return ErrRateLimited
	}
	u, err := s.st.User(ctx, a.Name)
	if err != nil {
		attempt.refund(now)
		return apierr.Store(err)
	}
	right, err := s.check(ctx, u.Password, old)
	if err != nil {
		attempt.refund(now)
		return err
	}
	if !right {
		return fieldErr("old_password", "wrong password")
	}
	attempt.refund(now)
	if err := CheckPassword("password", password, repeat); err != nil {
		return err
	}
	hash, err := s.hash(ctx, password)
	if err != nil {
		return err
	}
	if err := s.st.SetPassword(ctx, a.Name, hash, sessionHash(token)); err != nil {
		return apierr.Store(err)
	}
	return s.audit(ctx, a.Name, "user.password", a.Name, "password changed; other sessions ended")
}

// check reports whether password matches hash, hashed in the pool
// (admission.ErrBusy when the pool is full).
func (s *Service) check(ctx context.Context, hash, password string) (bool, error) {
	var right bool
	err := s.hashing.Do(ctx, func() { right = checkPassword(hash, password) })
	return right, err
}

// hash is HashPassword in the pool.
func (s *Service) hash(ctx context.Context, password string) (string, error) {
	var hash string
	var herr error
	if err := s.hashing.Do(ctx, func() { hash, herr = HashPassword(password) }); err != nil {
		return "", err
	}
	return hash, herr
}

// ExpireSessions removes expired sessions from the store.
func (s *Service) ExpireSessions(ctx context.Context) (int64, error) {
	return s.st.DeleteExpiredSessions(ctx, s.cfg.Now())
}
