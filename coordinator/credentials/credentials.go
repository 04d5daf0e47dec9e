// Package credentials keeps the coordinator's per-identity credentials: a
// bearer token per identity, with a role (admin, client, worker), stored
// hashed (SHA-256: tokens are 256 random bits, so a fast hash is enough and
// a stolen store reveals no token). The coordinator's own --token is the
// bootstrap admin credential and is never stored.
//
// Invariants: a revoked credential resolves to nothing from the moment
// Revoke returns; names are unique forever (a revoked name is not reused,
// so incidents and submissions recorded under it stay unambiguous).
package credentials

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// TokenPrefix starts every token this package makes, so a leaked one is
// recognisable (secret scanners) and a typo'd one is told apart.
const TokenPrefix = "arb_"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Manager resolves and manages credentials. Safe for concurrent use.
type Manager struct {
	store     *store.Store
	now       func() time.Time
	bootstrap [32]byte

	mu     sync.RWMutex
	byHash map[[32]byte]identity.Identity
	all    map[string]store.Credential
	// owned are the hashes of tokens an account made (they act as it);
	// ownerActive, when set, says whether that account may act now.
	owned       map[[32]byte]bool
	ownerActive func(owner string) bool
	// ephemeral are the names of in-memory credentials (Ephemeral).
	ephemeral map[string]bool
	// minters are the accounts that made tokens (their identities are
	// never vouched for, whatever credential shares their name).
	minters map[string]bool
}

// SetOwnerCheck makes the tokens accounts made valid only while active
// says their account is (an account disabled from the command line, in the
// store, then stops its tokens too). Call it before serving.
func (m *Manager) SetOwnerCheck(active func(owner string) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ownerActive = active
}

// New loads the stored credentials. bootstrap is the admin token given on
// the command line ("" for none).
func New(ctx context.Context, st *store.Store, bootstrap string, now func() time.Time) (*Manager, error) {
	if now == nil {
		now = time.Now
	}
	m := &Manager{store: st, now: now, byHash: map[[32]byte]identity.Identity{}, all: map[string]store.Credential{}, owned: map[[32]byte]bool{}}
	if bootstrap != "" {
		m.bootstrap = sha256.Sum256([]byte(bootstrap))
	}
	if st != nil {
		creds, err := st.Credentials(ctx)
		if err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
		for _, c := range creds {
			m.index(c)
		}
	}
	return m, nil
}

func (m *Manager) index(c store.Credential) {
	m.all[c.Name] = c
	if !c.RevokedAt.IsZero() || len(c.Hash) != sha256.Size {
		return
	}
	role, err := identity.ParseRole(c.Role)
	if err != nil {
		return
	}
	name := c.Name
	if c.Owner != "" {
		// A token an account made on its page acts as that account.
		name = c.Owner
		m.owned[[32]byte(c.Hash)] = true
		if m.minters == nil {
			m.minters = map[string]bool{}
		}
		m.minters[c.Owner] = true
	}
	m.byHash[[32]byte(c.Hash)] = identity.Identity{Name: name, Role: role}
}

// Resolve returns the identity of a token.
func (m *Manager) Resolve(token string) (identity.Identity, bool) {
	if token == "" {
		return identity.Identity{}, false
	}
	sum := sha256.Sum256([]byte(token))
	var zero [32]byte
	if m.bootstrap != zero && subtle.ConstantTimeCompare(sum[:], m.bootstrap[:]) == 1 {
		return identity.Bootstrap, true
	}
	m.mu.RLock()
	id, ok := m.byHash[sum]
	owned, active := m.owned[sum], m.ownerActive
	m.mu.RUnlock()
	if ok && owned && active != nil && !active(id.Name) {
		return identity.Identity{}, false
	}
	return id, ok
}

// Create makes a credential for name with role on behalf of caller (an
// admin) and returns its token, shown once.
func (m *Manager) Create(ctx context.Context, caller identity.Identity, name string, role identity.Role) (string, error) {
	if !caller.IsAdmin() {
		return "", apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only an admin may create credentials")
	}
	if !nameRE.MatchString(name) {
		return "", apierr.Invalid("credential name %s: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", apierr.Q(name))
	}
	if name == identity.Bootstrap.Name {
		return "", apierr.Invalid("credential name %q is the bootstrap admin's", name)
	}
	if _, err := identity.ParseRole(string(role)); err != nil {
		return "", apierr.Invalid("%v", err)
	}
	return m.create(ctx, caller, name, role, "")
}

// CreateOwn makes a token for a script or worker of account owner, named
// owner.label, that acts as owner with role client or worker; its token is
// shown once.
func (m *Manager) CreateOwn(ctx context.Context, owner identity.Identity, label string, role identity.Role) (string, error) {
	if !owner.CanSubmit() {
		return "", apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only a signed-in account may make its tokens")
	}
	if !labelRE.MatchString(label) {
		return "", apierr.Invalid("token name %s: 1 to 32 letters, digits, '_' or '-'", apierr.Q(label))
	}
	if role != identity.Client && role != identity.Worker {
		return "", apierr.Invalid("token role %s: want client or worker", apierr.Q(string(role)))
	}
	name := owner.Name + "." + label
	if !nameRE.MatchString(name) {
		return "", apierr.Invalid("token name %s: longer than 64 bytes with the account's name", apierr.Q(name))
	}
	return m.create(ctx, owner, name, role, owner.Name)
}

var labelRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (m *Manager) create(ctx context.Context, caller identity.Identity, name string, role identity.Role, owner string) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	c := store.Credential{Name: name, Role: string(role), Hash: sum[:], CreatedAt: m.now(), CreatedBy: caller.Name, Owner: owner}
	if err := m.store.AddCredential(ctx, c); err != nil {
		if errors.Is(err, store.ErrExists) {
			return "", apierr.New(apierr.AlreadyExists, apierr.ReasonBadInput, "credential %s exists (names are never reused)", apierr.Q(name))
		}
		return "", apierr.Store(err)
	}
	m.mu.Lock()
	m.index(c)
	m.mu.Unlock()
	m.audit(ctx, caller.Name, "credential.create", name, "role "+string(role))
	return token, nil
}

// audit records a credential action; the action is done by then, so a
// failure to record it is only reported through the store's own errors.
func (m *Manager) audit(ctx context.Context, actor, action, target, detail string) {
	if m.store != nil {
		_ = m.store.Audit(ctx, store.AuditEntry{At: m.now(), Actor: actor, Action: action, Target: target, Detail: detail})
	}
}

// Owned returns the tokens of account owner, revoked ones included.
func (m *Manager) Owned(owner string) []View {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []View
	for _, c := range m.all {
		if c.Owner == owner {
			out = append(out, viewOf(c))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RevokeOwn ends one of the tokens of account owner.
func (m *Manager) RevokeOwn(ctx context.Context, owner identity.Identity, name string) error {
	m.mu.RLock()
	c, ok := m.all[name]
	m.mu.RUnlock()
	if !ok || c.Owner == "" || c.Owner != owner.Name {
		return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "you have no token named %s", apierr.Q(name))
	}
	return m.revoke(ctx, owner, name)
}

// RevokeOwnedBy ends every token of account owner (a disabled account), on
// behalf of an admin.
func (m *Manager) RevokeOwnedBy(ctx context.Context, caller identity.Identity, owner string) error {
	for _, v := range m.Owned(owner) {
		if v.RevokedAt.IsZero() {
			if err := m.Revoke(ctx, caller, v.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func viewOf(c store.Credential) View {
	return View{Name: c.Name, Role: c.Role, CreatedAt: c.CreatedAt, CreatedBy: c.CreatedBy, RevokedAt: c.RevokedAt, Owner: c.Owner}
}

// View is a credential without its hash.
type View struct {
	Name      string
	Role      string
	CreatedAt time.Time
	CreatedBy string
	RevokedAt time.Time
	Owner     string // the account it acts for ("" for none)
}

// List returns every credential, for an admin.
func (m *Manager) List(caller identity.Identity) ([]View, error) {
	if !caller.IsAdmin() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only an admin may list credentials")
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]View, 0, len(m.all))
	for _, c := range m.all {
		out = append(out, viewOf(c))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Revoke ends a credential at once.
func (m *Manager) Revoke(ctx context.Context, caller identity.Identity, name string) error {
	if !caller.IsAdmin() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only an admin may revoke credentials")
	}
	return m.revoke(ctx, caller, name)
}

func (m *Manager) revoke(ctx context.Context, caller identity.Identity, name string) error {
	if err := m.store.RevokeCredential(ctx, name, m.now()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			// A name that is not there is bad input (exit 2), not a refused credential.
			return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "no valid credential named %s", apierr.Q(name))
		}
		return apierr.Store(err)
	}
	m.mu.Lock()
	c := m.all[name]
	if len(c.Hash) == sha256.Size {
		delete(m.byHash, [32]byte(c.Hash))
		delete(m.owned, [32]byte(c.Hash))
	}
	c.RevokedAt = m.now()
	m.all[name] = c
	m.mu.Unlock()
	m.audit(ctx, caller.Name, "credential.revoke", name, "")
	return nil
}

// Ephemeral makes a credential that lives in memory only, for the
// in-process workers of `arbiter up`: each gets its own identity (so they
// verify one another's perft units) without leaving tokens in the store.
// The same name gets a new token each time; the old one stops working.
func (m *Manager) Ephemeral(name string, role identity.Role) (string, error) {
	if !nameRE.MatchString(name) {
		return "", apierr.Invalid("credential name %s: 1 to 64 letters, digits, '.', '_' or '-'", apierr.Q(name))
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, stored := m.all[name]; stored {
		return "", apierr.Invalid("credential name %s is a stored credential's", apierr.Q(name))
	}
	for h, id := range m.byHash {
		if id.Name == name {
			delete(m.byHash, h)
		}
	}
	m.byHash[sum] = identity.Identity{Name: name, Role: role}
	if m.ephemeral == nil {
		m.ephemeral = map[string]bool{}
	}
	m.ephemeral[name] = true
	return token, nil
}

// Vouched reports whether identity name is one the operator made: the
// bootstrap admin, a credential an admin created, an in-process worker's,
// or a client certificate the operator's CA signed (identity "cert:CN",
// grpcapi; no credential or account name has a colon). An account acting
// through a token it minted on its page is not (gamepair/trust.go: such
// an identity earns trust by replays).
func (m *Manager) Vouched(name string) bool {
	if name == identity.Bootstrap.Name || strings.HasPrefix(name, "cert:") {
		return true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.minters[name] {
		return false // an account acting through its tokens
	}
	if c, ok := m.all[name]; ok {
		return c.Owner == "" && c.RevokedAt.IsZero()
	}
	return m.ephemeral[name]
}
