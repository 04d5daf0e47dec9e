package admission

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// HTTPDoor admits the requests of one HTTP door (the JSON API, the web
// pages): every route is registered through Handle, which finds its rule
// and wraps the handler so that, before the handler runs and so before
// any of the body is read,
//
//  1. a request that may change state (not GET or HEAD) passes the
//     door's CSRF check, when the door authenticates by cookie;
//  2. the caller, resolved from the headers by Identify, has the route's
//     role (401 when anonymous, 403 when of another role);
//  3. a declared Content-Length is within the route's limit (413);
//  4. the body's bytes (its declared length, else the route's limit) are
//     reserved from the byte budget, per identity (per client address
//     when anonymous) and in all (429);
//
// and the body is then read through http.MaxBytesReader at the route's
// limit, so a body without a declared length stops there too.
type HTTPDoor struct {
	Door Door
	A    *Admission
	// Identify resolves the caller from the request's headers (a bearer
	// token, a session cookie); signed false: anonymous.
	Identify func(r *http.Request) (id identity.Identity, signed bool)
	// CSRF, when set, checks a state-changing request's CSRF token and
	// origin from its headers and query, never its body.
	CSRF func(r *http.Request) error
	// Refuse writes a refusal (an *apierr.Error) in the door's format.
	Refuse func(w http.ResponseWriter, r *http.Request, err error)

	mu       sync.Mutex
	patterns []string
}

// Handle registers pattern on mux behind the admission check. A pattern
// without a rule in the table is a programming error: it panics at
// start, so no route is ever served unchecked.
func (d *HTTPDoor) Handle(mux *http.ServeMux, pattern string, h http.Handler) {
	if _, ok := d.A.Table.Rule(d.Door, pattern); !ok {
		panic(fmt.Sprintf("admission: %s route %q has no rule in the admission table (coordinator/admission/routes.go)", d.Door, pattern))
	}
	d.mu.Lock()
	d.patterns = append(d.patterns, pattern)
	d.mu.Unlock()
	mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, _ := d.A.Table.Rule(d.Door, pattern)
		res, err := d.admit(r, rule)
		if err != nil {
			reason := apierr.ReasonOf(err)
			if reason == "" {
				reason = "CSRF" // the door's own check, not an apierr
			}
			d.A.Refused(d.Door, reason)
			if apierr.ReasonOf(err) == apierr.ReasonBusy {
				w.Header().Set("Retry-After", "5")
			}
			// The body is not read: tell the client the connection ends
			// rather than have the server drain it.
			w.Header().Set("Connection", "close")
			d.Refuse(w, r, err)
			return
		}
		defer res.Release()
		r.Body = http.MaxBytesReader(w, r.Body, max(rule.MaxBytes, 0))
		h.ServeHTTP(w, r)
	}))
}

// HandleFunc is Handle for a function.
func (d *HTTPDoor) HandleFunc(mux *http.ServeMux, pattern string, h func(http.ResponseWriter, *http.Request)) {
	d.Handle(mux, pattern, http.HandlerFunc(h))
}

// Patterns lists the routes registered, for the tests that walk a door.
func (d *HTTPDoor) Patterns() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.patterns)
}

// mayChange reports whether r's method may change state (and so carry a
// body a CSRF check must precede).
func mayChange(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
}

func (d *HTTPDoor) admit(r *http.Request, rule Rule) (*Reservation, error) {
	if d.CSRF != nil && mayChange(r) {
		if err := d.CSRF(r); err != nil {
			return nil, err
		}
	}
	id, signed := d.Identify(r)
	if !rule.Role.Allows(id, signed) {
		if !signed {
			return nil, apierr.New(apierr.Unauthenticated, apierr.ReasonBadCredential,
				"%s %s: missing, unknown or revoked credential; this route needs the %s role", r.Method, r.URL.Path, rule.Role)
		}
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"%s %s: credential %s has role %s; this route needs the %s role", r.Method, r.URL.Path, apierr.Q(id.Name), id.Role, rule.Role)
	}
	if r.ContentLength > rule.MaxBytes || (rule.MaxBytes == 0 && r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody && mayChange(r)) {
		declared := "of undeclared length"
		if r.ContentLength >= 0 {
			declared = "of " + strconv.FormatInt(r.ContentLength, 10) + " bytes"
		}
		return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
			"%s %s: a body %s; this route takes at most %d bytes", r.Method, r.URL.Path, declared, rule.MaxBytes)
	}
	n := rule.MaxBytes
	if r.ContentLength >= 0 {
		n = r.ContentLength
	}
	if n == 0 {
		return nil, nil
	}
	key := id.Name
	if !signed {
		key = "address " + d.A.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
	}
	return d.A.Budget.Reserve(key, signed && id.IsAdmin(), n)
}
