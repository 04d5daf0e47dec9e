package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAccounts: users, sessions, approvals and the audit log keep what they
// were given on both backends, across a reopen, and refuse what they must.
func TestAccounts(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(1700000000, 0)
		u := User{Name: "alice", Password: "$argon2id$hash", Role: "user", State: UserPending, CreatedAt: now}
		if err := s.AddUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := s.AddUser(ctx, u); !errors.Is(err, ErrExists) {
			t.Fatalf("second alice: %v, want ErrExists", err)
		}
		if err := s.AddCredential(ctx, Credential{Name: "alice", Role: "client", Hash: make([]byte, 32), CreatedAt: now}); !errors.Is(err, ErrExists) {
			t.Fatalf("credential named like an account: %v, want ErrExists", err)
		}
		if err := s.AddCredential(ctx, Credential{Name: "farm", Role: "worker", Hash: make([]byte, 32), CreatedAt: now, Owner: "alice"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddUser(ctx, User{Name: "farm", Password: "x", Role: "user", State: UserPending, CreatedAt: now}); !errors.Is(err, ErrExists) {
			t.Fatalf("account named like a credential: %v, want ErrExists", err)
		}
		if err := s.UpdateUser(ctx, "nobody", "user", UserActive, "admin", now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("update of an unknown account: %v", err)
		}
		if err := s.UpdateUser(ctx, "alice", "approver", UserActive, "admin", now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		ss := Session{Hash: "aa", User: "alice", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := s.AddSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSession(ctx, Session{Hash: "bb", User: "alice", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddApproval(ctx, Approval{JobID: "t1", Submitter: "alice", RequestedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddApproval(ctx, Approval{JobID: "t2", Submitter: "alice", RequestedAt: now.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		for i, a := range []string{"user.approve", "test.approve", "test.refuse"} {
			if err := s.Audit(ctx, AuditEntry{At: now.Add(time.Duration(i) * time.Second), Actor: "admin", Action: a, Target: "t1", Detail: "d"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Audit(ctx, AuditEntry{Actor: "admin"}); err == nil {
			t.Fatal("an audit entry without an action was stored")
		}
		s.Close()

		s, err = open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		got, err := s.User(ctx, "alice")
		if err != nil || got.Role != "approver" || got.State != UserActive || got.DecidedBy != "admin" || !got.CreatedAt.Equal(now) {
			t.Fatalf("alice after reopen: %+v, %v", got, err)
		}
		if _, err := s.User(ctx, "bob"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown user: %v", err)
		}
		creds, err := s.Credentials(ctx)
		if err != nil || len(creds) != 1 || creds[0].Owner != "alice" {
			t.Fatalf("credentials: %+v, %v", creds, err)
		}
		if _, u, err := s.Session(ctx, "aa", now.Add(time.Minute)); err != nil || u.Name != "alice" {
			t.Fatalf("session aa: %+v, %v", u, err)
		}
		if _, _, err := s.Session(ctx, "aa", now.Add(2*time.Hour)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("expired session: %v, want ErrNotFound", err)
		}
		if err := s.AddSession(ctx, Session{Hash: "old", User: "alice", CreatedAt: now, ExpiresAt: now.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.DeleteExpiredSessions(ctx, now.Add(30*time.Minute)); err != nil || n != 1 {
			t.Fatalf("expired sessions deleted: %d, %v; want 1", n, err)
		}
		// A password change ends every other session.
		if err := s.SetPassword(ctx, "alice", "$argon2id$new", "aa"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Session(ctx, "bb", now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("other session after a password change: %v", err)
		}
		if _, _, err := s.Session(ctx, "aa", now); err != nil {
			t.Fatalf("the changing session: %v", err)
		}
		// Disabling ends the account's sessions.
		if err := s.UpdateUser(ctx, "alice", "approver", UserDisabled, "admin", now); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Session(ctx, "aa", now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("session of a disabled account: %v", err)
		}
		// An approval is decided once.
		if err := s.DecideApproval(ctx, "t1", ApprovalApproved, "bob", "", now); err != nil {
			t.Fatal(err)
		}
		if err := s.DecideApproval(ctx, "t1", ApprovalRefused, "carol", "late", now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second decision: %v, want ErrNotFound", err)
		}
		pend, err := s.Approvals(ctx, ApprovalPending)
		if err != nil || len(pend) != 1 || pend[0].JobID != "t2" {
			t.Fatalf("pending: %+v, %v", pend, err)
		}
		all, err := s.Approvals(ctx, "")
		if err != nil || len(all) != 2 || all[0].State != ApprovalApproved || all[0].DecidedBy != "bob" {
			t.Fatalf("all approvals: %+v, %v", all, err)
		}
		log, err := s.AuditLog(ctx, AuditFilter{})
		if err != nil || len(log) != 3 || log[0].Action != "test.refuse" || log[2].Action != "user.approve" {
			t.Fatalf("audit: %+v, %v", log, err)
		}
		page, err := s.AuditLog(ctx, AuditFilter{Before: log[0].ID, Limit: 1})
		if err != nil || len(page) != 1 || page[0].Action != "test.approve" {
			t.Fatalf("audit page: %+v, %v", page, err)
		}
		only, err := s.AuditLog(ctx, AuditFilter{Action: "user.approve"})
		if err != nil || len(only) != 1 {
			t.Fatalf("audit by action: %+v, %v", only, err)
		}
	})
}
