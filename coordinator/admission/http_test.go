package admission

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// countingBody records whether anything read it.
type countingBody struct {
	io.Reader
	reads int
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.reads++
	return b.Reader.Read(p)
}

func (b *countingBody) Close() error { return nil }

// TestHTTPDoorRefusesBeforeReading: a wrong or missing credential, a
// missing CSRF token, a declared length over the limit and a spent byte
// budget are each refused without a read of the body; a route without a
// rule cannot be registered. Control: the right caller's body reaches the
// handler, cut at the route's limit when its length is not declared.
func TestHTTPDoorRefusesBeforeReading(t *testing.T) {
	a, err := New(Config{MaxBytes: 40 << 20, MaxBytesPerIdentity: 33 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]identity.Identity{"c": {Name: "carol", Role: identity.Client}, "w": {Name: "wendy", Role: identity.Worker}}
	d := &HTTPDoor{Door: API, A: a,
		Identify: func(r *http.Request) (identity.Identity, bool) {
			id, ok := users[r.Header.Get("Authorization")]
			return id, ok
		},
		CSRF: func(r *http.Request) error {
			if r.URL.Query().Get("csrf") != "ok" {
				return errors.New("no CSRF token")
			}
			return nil
		},
		Refuse: func(w http.ResponseWriter, r *http.Request, err error) {
			code := http.StatusForbidden
			switch {
			case apierr.ReasonOf(err) == apierr.ReasonTooLarge:
				code = http.StatusRequestEntityTooLarge
			case apierr.ReasonOf(err) == apierr.ReasonBusy:
				code = http.StatusTooManyRequests
			case apierr.ReasonOf(err) == apierr.ReasonBadCredential:
				code = http.StatusUnauthorized
			}
			http.Error(w, err.Error(), code)
		}}
	mux := http.NewServeMux()
	var got int
	d.HandleFunc(mux, "POST /api/v1/tests", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		got = len(b)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		}
	})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a route without a rule was registered")
			}
		}()
		d.HandleFunc(mux, "POST /api/v1/unruled", func(http.ResponseWriter, *http.Request) {})
	}()
	// Someone holds most of carol's share.
	held, err := a.Budget.Reserve("carol", false, 30<<20)
	if err != nil {
		t.Fatal(err)
	}
	do := func(user, query string, declared int64, size int) (int, int) {
		body := &countingBody{Reader: strings.NewReader(strings.Repeat("x", size))}
		req := httptest.NewRequest("POST", "/api/v1/tests"+query, nil)
		req.Body, req.ContentLength = body, declared
		if user != "" {
			req.Header.Set("Authorization", user)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, body.reads
	}
	for _, c := range []struct {
		what, user, query string
		declared          int64
		want              int
	}{
		{"no CSRF token", "c", "", 10, http.StatusForbidden},
		{"no credential", "", "?csrf=ok", 10, http.StatusUnauthorized},
		{"another role", "w", "?csrf=ok", 10, http.StatusForbidden},
		{"over the limit", "c", "?csrf=ok", APISpecBytes + 1, http.StatusRequestEntityTooLarge},
		{"over the caller's share", "c", "?csrf=ok", 4 << 20, http.StatusTooManyRequests},
	} {
		if code, reads := do(c.user, c.query, c.declared, 10); code != c.want || reads != 0 {
			t.Errorf("%s: %d after %d reads of the body, want %d after none", c.what, code, reads, c.want)
		}
	}
	held.Release()
	// Control: carol's body is read; undeclared, it stops at the limit.
	if code, _ := do("c", "?csrf=ok", 10, 10); code != http.StatusOK || got != 10 {
		t.Errorf("carol's 10 bytes: %d, handler read %d", code, got)
	}
	if code, _ := do("c", "?csrf=ok", -1, APISpecBytes+10); code != http.StatusRequestEntityTooLarge || got != APISpecBytes {
		t.Errorf("an undeclared body over the limit: %d, handler read %d, want 413 after %d", code, got, APISpecBytes)
	}
	if used := a.Budget.Used(); used != 0 {
		t.Errorf("%d bytes still reserved after every request ended", used)
	}
}
