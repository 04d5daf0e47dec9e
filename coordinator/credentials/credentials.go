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
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/identity"
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
}

// New loads the stored credentials. bootstrap is the admin token given on
// the command line ("" for none).
func New(ctx context.Context, st *store.Store, bootstrap string, now func() time.Time) (*Manager, error) {
	if now == nil {
		now = time.Now
	}
	m := &Manager{store: st, now: now, byHash: map[[32]byte]identity.Identity{}, all: map[string]store.Credential{}}
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
	m.byHash[[32]byte(c.Hash)] = identity.Identity{Name: c.Name, Role: role}
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
	defer m.mu.RUnlock()
	id, ok := m.byHash[sum]
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
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	c := store.Credential{Name: name, Role: string(role), Hash: sum[:], CreatedAt: m.now(), CreatedBy: caller.Name}
	if err := m.store.AddCredential(ctx, c); err != nil {
		if errors.Is(err, store.ErrExists) {
			return "", apierr.New(apierr.AlreadyExists, apierr.ReasonBadInput, "credential %s exists (names are never reused)", apierr.Q(name))
		}
		return "", apierr.Store(err)
	}
	m.mu.Lock()
	m.index(c)
	m.mu.Unlock()
	return token, nil
}

// View is a credential without its hash.
type View struct {
	Name      string
	Role      string
	CreatedAt time.Time
	CreatedBy string
	RevokedAt time.Time
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
		out = append(out, View{Name: c.Name, Role: c.Role, CreatedAt: c.CreatedAt, CreatedBy: c.CreatedBy, RevokedAt: c.RevokedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Revoke ends a credential at once.
func (m *Manager) Revoke(ctx context.Context, caller identity.Identity, name string) error {
	if !caller.IsAdmin() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only an admin may revoke credentials")
	}
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
	}
	c.RevokedAt = m.now()
	m.all[name] = c
	m.mu.Unlock()
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
	return token, nil
}
