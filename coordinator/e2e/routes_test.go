//go:build unix

package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/identity"
	coord "github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/web"
)

// walkDoors is a coordinator serving every door on loopback TCP: its gRPC
// server and its pages and JSON API, as `arbiter coordinator` assembles
// them, with a credential of each role.
type walkDoors struct {
	c                     *coord.Coordinator
	grpcAddr              string
	grpcSrv               *grpc.Server
	httpBase              string
	pages                 *web.Server
	api                   *httpapi.Handler
	admin, client, worker string
}

func serveDoors(t *testing.T) *walkDoors {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := coord.New(ctx, coord.Config{Store: st, Token: token, LeaseDuration: time.Second, TargetUnitDuration: 100 * time.Millisecond,
		Accounts: coord.AccountsConfig{SignUp: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	d := &walkDoors{c: c, admin: token}
	if d.grpcSrv, _, err = c.NewGRPCServer(nil); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go d.grpcSrv.Serve(lis)
	t.Cleanup(d.grpcSrv.Stop)
	d.grpcAddr = lis.Addr().String()
	if d.pages, err = web.New(ctx, web.Config{Core: c.Core, Games: c.Games(),
		Credentials: c.Credentials, Accounts: c.Accounts, Store: st, Hooks: c.Hooks, Follows: c.Hooks, Admission: c.Admission}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.pages.Close)
	d.api = httpapi.ForCoordinator(c, zap.NewNop()).(*httpapi.Handler)
	mux := http.NewServeMux()
	mux.Handle(httpapi.Prefix+"/", d.api)
	mux.Handle("/", d.pages)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	d.httpBase = hs.URL
	for role, tok := range map[identity.Role]*string{identity.Client: &d.client, identity.Worker: &d.worker} {
		if *tok, err = c.Credentials.Create(ctx, identity.Bootstrap, "walk-"+string(role), role); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// tokenOf is a credential of role (an admin's for Anyone).
func (d *walkDoors) tokenOf(r admission.Role) string {
	switch r {
	case admission.Worker:
		return d.worker
	case admission.Client:
		return d.client
	}
	return d.admin
}

// wrongTokenOf is a valid credential of a role r does not admit ("" when
// every role is admitted).
func (d *walkDoors) wrongTokenOf(r admission.Role) string {
	switch r {
	case admission.Worker, admission.Admin:
		return d.client
	case admission.Client:
		return d.worker
	}
	return ""
}

// rawCodec sends a request's bytes as they are, so that the walk can send
// any method a message of any size.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(*[]byte); ok {
		return *b, nil
	}
	return nil, fmt.Errorf("rawCodec: %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	if b, ok := v.(*[]byte); ok {
		*b = append((*b)[:0], data...)
		return nil
	}
	return fmt.Errorf("rawCodec: %T", v)
}

func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

// protoOfSize is a valid protobuf message of n bytes for any request
// type: one unknown length-delimited field (number 4095), which decoding
// keeps and proto.Size counts.
func protoOfSize(n int) []byte {
	tag := binary.AppendUvarint(nil, 4095<<3|2)
	payload := n - len(tag) - 1
	for payload > 0 && len(tag)+len(binary.AppendUvarint(nil, uint64(payload)))+payload > n {
		payload--
	}
	b := append(tag, binary.AppendUvarint(nil, uint64(payload))...)
	return append(b, make([]byte, payload)...)
}

// call opens method as a bidirectional stream with tok ("": none), sends
// msg unless it is nil, and returns the status of the first answer. With
// msg nil, no byte of a body is ever sent: an answer proves the call was
// decided from the headers.
func (d *walkDoors) call(t *testing.T, conn *grpc.ClientConn, method, tok string, msg []byte) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	if msg != nil {
		if err := st.SendMsg(&msg); err != nil && err != io.EOF {
			return err
		}
		st.CloseSend()
	}
	var out []byte
	err = st.RecvMsg(&out)
	if err == io.EOF {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("no answer in 20 s (the server waits for a body): %w", err)
	}
	return err
}

// TestEveryRouteAdmittedBeforeBody walks every route of every door: every
// method of every gRPC service the coordinator serves (plugged-in kinds'
// included), every route of the JSON API and every one of the web pages
// (forms, sign-in, sign-up, sign-out). Each must have a rule in the
// admission table (a route added without one fails here: the HTTP doors
// refuse to start, the gRPC tap answers Unimplemented); a missing or
// wrong credential is refused before any body is sent; a body over the
// route's limit is refused: from its declared length on HTTP, before a
// byte is read, and on gRPC by grpc-go from the length prefix for the
// methods at the server's limit, by admission on the decoded message,
// before the handler, for the others. Control: the right credential with
// a small body is admitted on every route.
func TestEveryRouteAdmittedBeforeBody(t *testing.T) {
	d := serveDoors(t)
	t.Run("grpc", func(t *testing.T) { walkGRPC(t, d) })
	t.Run("api", func(t *testing.T) { walkHTTP(t, d, admission.API, d.api.Door()) })
	t.Run("web", func(t *testing.T) { walkHTTP(t, d, admission.Web, d.pages.Door()) })
}

func walkGRPC(t *testing.T, d *walkDoors) {
	conn, err := grpc.NewClient(d.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var methods []string
	for svc, info := range d.grpcSrv.GetServiceInfo() {
		if strings.HasPrefix(svc, "grpc.health.") {
			continue // open to probes by design, reads no body of note
		}
		for _, m := range info.Methods {
			methods = append(methods, "/"+svc+"/"+m.Name)
		}
	}
	sort.Strings(methods)
	if len(methods) < 30 {
		t.Fatalf("only %d methods served: %v", len(methods), methods)
	}
	for _, m := range methods {
		rule, ok := d.c.Admission.Table.Rule(admission.GRPC, m)
		if !ok {
			t.Errorf("%s: no rule in the admission table", m)
			continue
		}
		if err := d.call(t, conn, m, "", nil); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without a credential, no body sent: %v, want Unauthenticated", m, err)
		}
		if err := d.call(t, conn, m, "arb_madeup", nil); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s with a made-up credential, no body sent: %v, want Unauthenticated", m, err)
		}
		if wrong := d.wrongTokenOf(rule.Role); wrong != "" {
			if err := d.call(t, conn, m, wrong, nil); status.Code(err) != codes.PermissionDenied {
				t.Errorf("%s with a credential of another role, no body sent: %v, want PermissionDenied", m, err)
			}
		}
		err := d.call(t, conn, m, d.tokenOf(rule.Role), protoOfSize(int(rule.MaxBytes)+1))
		if status.Code(err) != codes.ResourceExhausted || rule.MaxBytes < admission.MaxGRPCMessageBytes && grpcerr.Reason(err) != "TOO_LARGE" {
			t.Errorf("%s with the right credential, %d bytes (limit %d): %v, want ResourceExhausted (TOO_LARGE)", m, rule.MaxBytes+1, rule.MaxBytes, err)
		}
		// Control: admitted (whatever the handler then says of an empty
		// request).
		err = d.call(t, conn, m, d.tokenOf(rule.Role), []byte{})
		if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied && grpcerr.Reason(err) == "WRONG_ROLE" ||
			grpcerr.Reason(err) == "TOO_LARGE" || grpcerr.Reason(err) == "BUSY" || c == codes.Unimplemented {
			t.Errorf("%s with the right credential and an empty request: %v, want it admitted", m, err)
		}
	}
}

// untouchedBody is a request body that never yields a byte: a request
// answered while it waits was decided without reading the body (a
// handler that reads it would wait for ever).
type untouchedBody struct {
	done  chan struct{}
	reads atomic.Int64
}

func (b *untouchedBody) Read([]byte) (int, error) {
	b.reads.Add(1)
	<-b.done
	return 0, io.ErrUnexpectedEOF
}

var patternParam = regexp.MustCompile(`\{[^}]*\}`)

// routeOf is the method and a concrete path of a mux pattern.
func routeOf(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "POST", pattern
	}
	path = patternParam.ReplaceAllString(path, "x")
	if strings.HasSuffix(path, "/") {
		path += "nothing-here"
	}
	return method, path
}

func walkHTTP(t *testing.T, d *walkDoors, door admission.Door, hd *admission.HTTPDoor) {
	patterns := hd.Patterns()
	if len(patterns) < 10 {
		t.Fatalf("only %d routes registered: %v", len(patterns), patterns)
	}
	csrfCookie, csrfToken := webCSRF(t, d.httpBase)
	// ask sends method path with a body that is never read, declared as n
	// bytes, and a credential: a bearer token on the API, a session
	// cookie (with the CSRF token) on the pages.
	ask := func(method, path, tok string, n int64) (int, string) {
		body := &untouchedBody{done: make(chan struct{})}
		defer close(body.done)
		u := d.httpBase + path
		h := map[string]string{}
		switch door {
		case admission.API:
			if tok != "" {
				h["Authorization"] = "Bearer " + tok
			}
		case admission.Web:
			u += "?csrf=" + csrfToken
			h["Cookie"] = csrfCookie
			if tok != "" {
				h["Cookie"] += "; __Host-arbiter-session=" + tok
			}
		}
		var rd io.Reader
		if n > 0 {
			rd = body
		}
		r := sendWithin(20*time.Second, method, u, rd, n, h)
		if r.err != nil {
			return -1, r.err.Error()
		}
		return r.status, r.body
	}
	for _, p := range patterns {
		rule, ok := d.c.Admission.Table.Rule(door, p)
		if !ok {
			t.Errorf("%s %q: no rule in the admission table", door, p)
			continue
		}
		method, path := routeOf(p)
		hasBody := method != "GET" && method != "HEAD"
		declared := int64(30 << 20)
		if !hasBody {
			declared = 0
		}
		if rule.Role != admission.Anyone {
			if st, b := ask(method, path, "", declared); st != http.StatusUnauthorized {
				t.Errorf("%s %s without a credential: %d %.200s, want 401 before the body", door, p, st, b)
			}
			if st, b := ask(method, path, "arb_madeup", declared); st != http.StatusUnauthorized {
				t.Errorf("%s %s with a made-up credential: %d %.200s, want 401 before the body", door, p, st, b)
			}
			want := http.StatusForbidden
			if door == admission.Web && rule.Role == admission.Client {
				want = http.StatusUnauthorized // a worker's token signs no one in on the pages
			}
			if st, b := ask(method, path, d.wrongTokenOf(rule.Role), declared); st != want {
				t.Errorf("%s %s with a credential of another role: %d %.200s, want %d before the body", door, p, st, b, want)
			}
		}
		if st, b := ask(method, path, d.tokenOf(rule.Role), rule.MaxBytes+1); st != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with the right credential and %d bytes declared (limit %d): %d %.200s, want 413 before the body", door, p, rule.MaxBytes+1, rule.MaxBytes, st, b)
		}
		// Control: the right credential and no body is admitted.
		r := send(method, d.httpBase+path+map[admission.Door]string{admission.Web: "?csrf=" + csrfToken}[door], nil, 0,
			controlHeaders(door, d.tokenOf(rule.Role), csrfCookie))
		// (A handler may still refuse: the account pages want a session
		// of an account, not a token; what must not answer is admission.)
		if r.err != nil || r.status == http.StatusRequestEntityTooLarge || strings.Contains(r.body, "this route needs the") ||
			strings.Contains(r.body, "No credential: sign in") || strings.Contains(r.body, "CSRF") {
			t.Errorf("%s %s with the right credential: %v %d %.200s, want it admitted", door, p, r.err, r.status, r.body)
		}
	}
}

func controlHeaders(door admission.Door, tok, csrfCookie string) map[string]string {
	if door == admission.API {
		return map[string]string{"Authorization": "Bearer " + tok}
	}
	return map[string]string{"Cookie": csrfCookie + "; __Host-arbiter-session=" + tok, "Content-Type": "application/x-www-form-urlencoded"}
}

// webCSRF is a browser's CSRF cookie ("name=value") and its form token.
func webCSRF(t *testing.T, base string) (string, string) {
	t.Helper()
	s := newWebSession(t, base)
	return s.cookieHeader(), s.csrf
}
