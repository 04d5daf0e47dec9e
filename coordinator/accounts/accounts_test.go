package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newService(t *testing.T, cfg Config) (*Service, *store.Store, *clock) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &clock{t: time.Unix(1700000000, 0)}
	cfg.Store, cfg.Now = st, clk.now
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, st, clk
}

const pw = "correct horse battery"

// TestSignUpApproveSignIn: a sign-up waits; only the right password learns
// that; once approved it signs in to a session that expires, ends at
// sign-out, and ends when the account is disabled.
func TestSignUpApproveSignIn(t *testing.T) {
	ctx := context.Background()
	s, st, clk := newService(t, Config{SignUp: true, SessionTTL: time.Hour})
	if err := s.SignUp(ctx, "10.0.0.1", "alice", pw, pw); err != nil {
		t.Fatal(err)
	}
	u, err := st.User(ctx, "alice")
	if err != nil || u.State != store.UserPending || !strings.HasPrefix(u.Password, "$argon2id$") || strings.Contains(u.Password, pw) {
		t.Fatalf("stored account: %+v, %v", u, err)
	}
	if _, _, err := s.SignIn(ctx, "10.0.0.1", "alice", "wrong password!"); !errors.Is(err, ErrSignIn) {
		t.Fatalf("wrong password of a pending account: %v", err)
	}
	if _, _, err := s.SignIn(ctx, "10.0.0.1", "alice", pw); err == nil || !strings.Contains(err.Error(), "waits for an admin") {
		t.Fatalf("right password of a pending account: %v", err)
	}
	if err := s.Change(ctx, identity.Bootstrap, "alice", User, store.UserActive); err != nil {
		t.Fatal(err)
	}
	tok, a, err := s.SignIn(ctx, "10.0.0.1", "alice", pw)
	if err != nil || a.Name != "alice" || a.Role != User {
		t.Fatalf("sign-in: %+v, %v", a, err)
	}
	if got, ok := s.Resolve(ctx, tok); !ok || got.Name != "alice" {
		t.Fatalf("resolve: %+v %v", got, ok)
	}
	clk.t = clk.t.Add(2 * time.Hour)
	if _, ok := s.Resolve(ctx, tok); ok {
		t.Fatal("an expired session resolved")
	}
	tok, _, err = s.SignIn(ctx, "10.0.0.1", "alice", pw)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Resolve(ctx, tok); ok {
		t.Fatal("a signed-out session resolved")
	}
	tok, _, _ = s.SignIn(ctx, "10.0.0.1", "alice", pw)
	if err := s.Change(ctx, identity.Bootstrap, "alice", User, store.UserDisabled); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Resolve(ctx, tok); ok {
		t.Fatal("a disabled account's session resolved")
	}
	if _, _, err := s.SignIn(ctx, "10.0.0.1", "alice", pw); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("disabled account signs in: %v", err)
	}
	log, _ := st.AuditLog(ctx, store.AuditFilter{})
	var acts []string
	for _, e := range log {
		acts = append(acts, e.Action)
	}
	if got := strings.Join(acts, " "); got != "user.disable user.approve user.signup" {
		t.Fatalf("audit: %s", got)
	}
}

// TestNoEnumeration: an unknown name and a wrong password get the same
// error, and both cost a hash.
func TestNoEnumeration(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t, Config{})
	if err := s.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		t.Fatal(err)
	}
	_, _, e1 := s.SignIn(ctx, "a", "bob", "not the password")
	_, _, e2 := s.SignIn(ctx, "b", "nobody", "not the password")
	if !errors.Is(e1, ErrSignIn) || e1.Error() != e2.Error() {
		t.Fatalf("wrong password: %v; unknown name: %v", e1, e2)
	}
}

// TestSignInRateLimit: past the burst, attempts from one address (or at
// one name) are refused without checking the password, and allowed again
// as time passes.
func TestSignInRateLimit(t *testing.T) {
	ctx := context.Background()
	s, _, clk := newService(t, Config{AttemptsPerAddress: 3, AttemptsPerName: 5, AttemptEvery: time.Minute})
	if err := s.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := s.SignIn(ctx, "1.2.3.4", "bob", "guess"); !errors.Is(err, ErrSignIn) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if _, _, err := s.SignIn(ctx, "1.2.3.4", "bob", pw); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("4th attempt, right password: %v, want rate limited", err)
	}
	// Another address may still try, up to the name's own limit.
	for i := range 2 {
		if _, _, err := s.SignIn(ctx, "5.6.7.8", "bob", "guess"); !errors.Is(err, ErrSignIn) {
			t.Fatalf("other address attempt %d: %v", i, err)
		}
	}
	if _, _, err := s.SignIn(ctx, "9.9.9.9", "bob", pw); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("name over its limit: %v", err)
	}
	clk.t = clk.t.Add(time.Minute)
	if _, _, err := s.SignIn(ctx, "1.2.3.4", "bob", pw); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}

// TestBadInputStoresNothing: each bad field is named, and no account is
// stored.
func TestBadInputStoresNothing(t *testing.T) {
	ctx := context.Background()
	s, st, _ := newService(t, Config{SignUp: true})
	for _, c := range []struct{ name, pw, repeat, field string }{
		{"", pw, pw, "name"},
		{"bad name", pw, pw, "name"},
		{"admin", pw, pw, "name"},
		{"carol", "short", "short", "password"},
		{"carol", pw, pw + "x", "password_repeat"},
		{"carol", strings.Repeat("x", 300), strings.Repeat("x", 300), "password"},
	} {
		err := s.SignUp(ctx, "10.0.0.1", c.name, c.pw, c.repeat)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Fatalf("sign-up %q/%q: %v, want an error on %s", c.name, c.pw, err, c.field)
		}
	}
	if us, _ := st.Users(ctx); len(us) != 0 {
		t.Fatalf("stored %+v", us)
	}
	closed, _, _ := newService(t, Config{})
	if err := closed.SignUp(ctx, "10.0.0.1", "carol", pw, pw); err == nil {
		t.Fatal("sign-up while closed")
	}
}

func TestChangePassword(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t, Config{})
	if err := s.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		t.Fatal(err)
	}
	t1, _, _ := s.SignIn(ctx, "a", "bob", pw)
	t2, _, _ := s.SignIn(ctx, "a", "bob", pw)
	var fe *FieldError
	if err := s.ChangePassword(ctx, t1, "wrong", "a new password!", "a new password!"); !errors.As(err, &fe) || fe.Field != "old_password" {
		t.Fatalf("wrong old password: %v", err)
	}
	if err := s.ChangePassword(ctx, t1, pw, "a new password!", "a new password!"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Resolve(ctx, t1); !ok {
		t.Fatal("the changing session ended")
	}
	if _, ok := s.Resolve(ctx, t2); ok {
		t.Fatal("another session survived the change")
	}
	if _, _, err := s.SignIn(ctx, "a", "bob", "a new password!"); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHashPassword measures one argon2id hash at the stored cost:
// the work of every sign-in (right, wrong or unknown name alike).
func BenchmarkHashPassword(b *testing.B) {
	for b.Loop() {
		if _, err := HashPassword(pw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveSession measures what every page of a signed-in account
// costs: one session and one account read from the store.
func BenchmarkResolveSession(b *testing.B) {
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		b.Fatal(err)
	}
	tok, _, err := s.SignIn(ctx, "a", "bob", pw)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := s.Resolve(ctx, tok); !ok {
			b.Fatal("not resolved")
		}
	}
}

// TestSignInLimitHoldsUnderConcurrency: 50 wrong passwords at once from
// one address for one name are checked at most the burst's 5 times (the
// token is taken before the hash); the rest are refused without
// hashing. With a pool of one hash and no queue, concurrent attempts
// past it are refused BUSY and cost no token. Control: the right
// password from another address, later, signs in.
func TestSignInLimitHoldsUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	s, _, clk := newService(t, Config{AttemptsPerAddress: 5, AttemptsPerName: 5, AttemptEvery: time.Minute,
		Hashing: admission.NewPool(4, 100)})
	if err := s.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		t.Fatal(err)
	}
	var checked, limited atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch _, _, err := s.SignIn(ctx, "1.2.3.4", "bob", fmt.Sprintf("guess %d", i)); {
			case errors.Is(err, ErrSignIn):
				checked.Add(1)
			case errors.Is(err, ErrRateLimited):
				limited.Add(1)
			default:
				t.Errorf("attempt %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if checked.Load() != 5 || limited.Load() != 45 {
		t.Fatalf("50 concurrent wrong passwords: %d checked, %d limited; want 5 and 45", checked.Load(), limited.Load())
	}

	busy, _, _ := newService(t, Config{Hashing: admission.NewPool(1, 0)})
	if err := busy.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int32
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := busy.SignIn(ctx, fmt.Sprintf("10.0.0.%d", i), "nobody", "guess"); admission.IsBusy(err) {
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	if refused.Load() == 0 {
		t.Fatal("20 concurrent sign-ins on a pool of one: none refused BUSY")
	}
	clk.t = clk.t.Add(time.Minute)
	if _, _, err := s.SignIn(ctx, "5.6.7.8", "bob", pw); err != nil {
		t.Fatalf("the right password a minute later: %v", err)
	}
}

// TestSignUpSilentAndLimited: a taken name's sign-up answers as a free
// one's and stores nothing new; past the per-address burst sign-ups are
// refused; another address still signs up.
func TestSignUpSilentAndLimited(t *testing.T) {
	ctx := context.Background()
	s, st, _ := newService(t, Config{SignUp: true, SignUpsPerAddress: 2})
	if err := s.Add(ctx, identity.Bootstrap, "bob", pw, User); err != nil {
		t.Fatal(err)
	}
	if err := s.SignUp(ctx, "1.2.3.4", "bob", pw, pw); err != nil {
		t.Fatalf("sign-up of a taken name: %v, want the answer of a free one", err)
	}
	if err := s.SignUp(ctx, "1.2.3.4", "carol", pw, pw); err != nil {
		t.Fatal(err)
	}
	if err := s.SignUp(ctx, "1.2.3.4", "dave", pw, pw); !errors.Is(err, ErrSignUpRateLimited) {
		t.Fatalf("third sign-up from one address: %v, want rate limited", err)
	}
	if err := s.SignUp(ctx, "5.6.7.8", "erin", pw, pw); err != nil {
		t.Fatalf("another address: %v", err)
	}
	u, err := st.User(ctx, "bob")
	if err != nil || u.State != store.UserActive {
		t.Fatalf("bob after a stranger's sign-up of his name: %+v %v", u, err)
	}
	if us, _ := st.Users(ctx); len(us) != 3 {
		t.Fatalf("%d accounts, want bob, carol and erin", len(us))
	}
}
