package clusterclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

const testToken = "test-token"

// scriptedWorkers is a WorkerService whose Register answers with the
// scripted errors in turn (then succeeds), optionally after a delay, and
// which reports the deadline each call arrived with.
type scriptedWorkers struct {
	arbiterv1.UnimplementedWorkerServiceServer
	mu        sync.Mutex
	calls     int
	errs      []error
	delays    []time.Duration
	deadlines []time.Duration // remaining time at arrival; -1: none
}

func (s *scriptedWorkers) next(ctx context.Context) error {
	s.mu.Lock()
	i := s.calls
	s.calls++
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	s.deadlines = append(s.deadlines, left)
	var delay time.Duration
	if i < len(s.delays) {
		delay = s.delays[i]
	}
	var err error
	if i < len(s.errs) {
		err = s.errs[i]
	}
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

func (s *scriptedWorkers) Register(ctx context.Context, _ *arbiterv1.RegisterRequest) (*arbiterv1.RegisterResponse, error) {
	if err := s.next(ctx); err != nil {
		return nil, err
	}
	return &arbiterv1.RegisterResponse{WorkerId: "w-1"}, nil
}

func (s *scriptedWorkers) Lease(ctx context.Context, _ *arbiterv1.LeaseRequest) (*arbiterv1.LeaseResponse, error) {
	return &arbiterv1.LeaseResponse{}, s.next(ctx)
}

func (s *scriptedWorkers) Heartbeat(ctx context.Context, _ *arbiterv1.HeartbeatRequest) (*arbiterv1.HeartbeatResponse, error) {
	return &arbiterv1.HeartbeatResponse{}, s.next(ctx)
}

func (s *scriptedWorkers) Submit(ctx context.Context, _ *arbiterv1.SubmitRequest) (*arbiterv1.SubmitResponse, error) {
	return &arbiterv1.SubmitResponse{}, s.next(ctx)
}

func (s *scriptedWorkers) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// serve starts a gRPC server with the token check on addr ("127.0.0.1:0"
// for a free port) and returns it and its address.
func serve(t *testing.T, addr string, tlsCfg *tls.Config, register func(*grpc.Server)) (*grpc.Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	chk := auth.NewChecker(testToken, nil)
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(chk.Unary), grpc.StreamInterceptor(chk.Stream)}
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	srv := grpc.NewServer(opts...)
	register(srv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return srv, lis.Addr().String()
}

func connectT(t *testing.T, o Options) *Client {
	t.Helper()
	if o.Token == "" {
		o.Token = testToken
	}
	c, err := Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func withReason(code codes.Code, reason string) error {
	return grpcerr.Status(code, reason, "scripted "+reason).Err()
}

// TestRetryClasses drives Do against a real server that fails with each
// code and reason: only the retryable ones are asked again.
func TestRetryClasses(t *testing.T) {
	cases := []struct {
		err   error
		retry bool
	}{
		{status.Error(codes.Unavailable, "away"), true},
		{status.Error(codes.Aborted, "conflict"), true},
		{withReason(codes.Unavailable, apierr.ReasonStore), true},
		{withReason(codes.Unavailable, apierr.ReasonShuttingDown), true},
		{withReason(codes.Internal, apierr.ReasonStore), true}, // the reason decides
		{status.Error(codes.InvalidArgument, "bad"), false},
		{status.Error(codes.PermissionDenied, "no"), false},
		{status.Error(codes.Unauthenticated, "who"), false},
		{status.Error(codes.NotFound, "unknown worker"), false},
		{status.Error(codes.FailedPrecondition, "finished"), false},
		{status.Error(codes.ResourceExhausted, "too big"), false},
		{status.Error(codes.Internal, "bug"), false},
		{status.Error(codes.Unknown, "what"), false},
		{withReason(codes.Unavailable, apierr.ReasonBadInput), false}, // the reason decides
	}
	for _, c := range cases {
		fake := &scriptedWorkers{errs: []error{c.err, c.err, c.err}}
		_, addr := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fake) })
		cl := connectT(t, Options{Address: addr})
		p := Policy{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 3}
		err := Do(context.Background(), p, func(ctx context.Context) error {
			_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
			return err
		})
		want := 1
		if c.retry {
			want = 3
		}
		if got := fake.Calls(); got != want || Code(err) != status.Code(c.err) {
			t.Errorf("%v: %d calls, error %v; want %d calls and the scripted error", c.err, got, err, want)
		}
		if Retryable(c.err) != c.retry {
			t.Errorf("Retryable(%v) = %v", c.err, !c.retry)
		}
	}
}

func TestDoSucceedsAfterRetries(t *testing.T) {
	fake := &scriptedWorkers{errs: []error{status.Error(codes.Unavailable, "a"), withReason(codes.Unavailable, apierr.ReasonStore)}}
	_, addr := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fake) })
	cl := connectT(t, Options{Address: addr})
	var retries []int
	p := Persistent.WithOnRetry(func(attempt int, err error, d time.Duration) { retries = append(retries, attempt) })
	var id string
	err := Do(context.Background(), p, func(ctx context.Context) error {
		resp, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		id = resp.GetWorkerId()
		return err
	})
	if err != nil || id != "w-1" || fake.Calls() != 3 || len(retries) != 2 || retries[1] != 1 {
		t.Fatalf("err %v, id %q, %d calls, retries %v", err, id, fake.Calls(), retries)
	}
}

// TestPerAttemptDeadline: attempts that outlive their own deadline are
// retried; the caller's deadline ends it all.
func TestPerAttemptDeadline(t *testing.T) {
	fake := &scriptedWorkers{delays: []time.Duration{time.Second, time.Second}}
	_, addr := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fake) })
	cl := connectT(t, Options{Address: addr})
	start := time.Now()
	p := Policy{Base: time.Millisecond, Cap: time.Millisecond, AttemptTimeout: 100 * time.Millisecond}
	err := Do(context.Background(), p, func(ctx context.Context) error {
		_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		return err
	})
	if err != nil || fake.Calls() != 3 {
		t.Fatalf("err %v after %d calls", err, fake.Calls())
	}
	if el := time.Since(start); el < 200*time.Millisecond || el > 900*time.Millisecond {
		t.Errorf("took %v; two attempts should time out at 100 ms each", el)
	}
	for i, left := range fake.deadlines {
		if left < 0 || left > 100*time.Millisecond {
			t.Errorf("attempt %d arrived with %v left, want at most 100ms", i, left)
		}
	}

	// The caller's own deadline: no retry after it.
	fake2 := &scriptedWorkers{delays: []time.Duration{time.Second, time.Second, time.Second}}
	_, addr2 := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fake2) })
	cl2 := connectT(t, Options{Address: addr2})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err = Do(ctx, Persistent, func(ctx context.Context) error {
		_, err := cl2.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		return err
	})
	if Code(err) != codes.DeadlineExceeded || fake2.Calls() != 1 {
		t.Fatalf("caller's deadline: err %v after %d calls, want DeadlineExceeded after 1", err, fake2.Calls())
	}
}

// TestDefaultDeadlines: a call made without a deadline gets its kind's.
func TestDefaultDeadlines(t *testing.T) {
	fake := &scriptedWorkers{}
	_, addr := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fake) })
	cl := connectT(t, Options{Address: addr})
	ctx := context.Background()
	cl.Workers.Heartbeat(ctx, &arbiterv1.HeartbeatRequest{})
	cl.Workers.Lease(ctx, &arbiterv1.LeaseRequest{Wait: durationpb.New(2 * time.Second)})
	cl.Workers.Submit(ctx, &arbiterv1.SubmitRequest{})
	for method, w := range map[string]time.Duration{
		arbiterv1.JobService_SubmitPerft_FullMethodName: SplitTimeout,
		arbiterv1.JobService_SubmitMatch_FullMethodName: SubmitTimeout,
		arbiterv1.JobService_GetJob_FullMethodName:      ShortTimeout,
		arbiterv1.JobService_CancelJob_FullMethodName:   ShortTimeout,
	} {
		if got := CallTimeout(method, nil); got != w {
			t.Errorf("CallTimeout(%s) = %v, want %v", method, got, w)
		}
	}
	if got := CallTimeout(arbiterv1.VerifyService_RunVerifyUnit_FullMethodName, &arbiterv1.RunVerifyUnitRequest{Wait: durationpb.New(time.Second)}); got != time.Second+LongPollMargin {
		t.Errorf("RunVerifyUnit: %v", got)
	}
	want := []time.Duration{ShortTimeout, 2*time.Second + LongPollMargin, SubmitTimeout}
	for i, w := range want {
		left := fake.deadlines[i]
		if left <= w-2*time.Second || left > w {
			t.Errorf("call %d arrived with %v left, want about %v", i, left, w)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Cap: time.Second}
	for attempt, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		if got := p.Delay(attempt); got != want*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", attempt, got, want*time.Millisecond)
		}
	}
	if got := p.Delay(1 << 30); got != time.Second {
		t.Errorf("Delay(huge) = %v, want the cap", got)
	}
	b := NewBackoff(p)
	for i := range 200 {
		d, ok := b.Next()
		hi := p.Delay(i)
		if !ok || d < hi/2 || d > hi {
			t.Fatalf("failure %d: delay %v (ok %v) outside [%v, %v]", i, d, ok, hi/2, hi)
		}
	}
	// Budgets.
	b = NewBackoff(Policy{Base: 10 * time.Millisecond, MaxAttempts: 3})
	if _, ok := b.Next(); !ok {
		t.Fatal("first retry refused")
	}
	if _, ok := b.Next(); !ok {
		t.Fatal("second retry refused")
	}
	if _, ok := b.Next(); ok {
		t.Fatal("MaxAttempts 3 allowed a fourth attempt")
	}
	b = NewBackoff(Policy{Base: 10 * time.Millisecond, MaxElapsed: time.Second})
	b.start = time.Now().Add(-995 * time.Millisecond)
	if _, ok := b.Next(); ok {
		t.Fatal("MaxElapsed exceeded by the next delay but retried")
	}
	b.Reset()
	if _, ok := b.Next(); !ok || b.Attempt() != 1 {
		t.Fatal("Reset did not restore the budget")
	}
}

func TestNormalizeAddress(t *testing.T) {
	good := map[string]string{
		"127.0.0.1":      "127.0.0.1:7700",
		"coord":          "coord:7700",
		"coord:80":       "coord:80",
		" coord:7701 ":   "coord:7701",
		"::1":            "[::1]:7700",
		"[::1]":          "[::1]:7700",
		"[::1]:9":        "[::1]:9",
		":7702":          "localhost:7702",
		"arbiter.local.": "arbiter.local.:7700",
	}
	for in, want := range good {
		if got, err := NormalizeAddress(in); err != nil || got != want {
			t.Errorf("NormalizeAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "coord:0", "coord:65536", "coord:http", "http://coord:7700", "co ord", "a:b:c", "[::1", strings.Repeat("x", 5000)} {
		_, err := NormalizeAddress(in)
		if err == nil {
			t.Errorf("NormalizeAddress(%q) accepted", in)
			continue
		}
		if len(err.Error()) > 200 {
			t.Errorf("NormalizeAddress: error of %d bytes quotes too much: %.80s...", len(err.Error()), err)
		}
	}
	// The default port is what gets dialled: the error names it.
	c, err := Connect(Options{Address: "127.0.0.1", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Addr() != "127.0.0.1:7700" {
		t.Fatalf("Addr() = %q", c.Addr())
	}
}

func TestResolveToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	os.WriteFile(file, []byte("from-file\nsecond line ignored\n"), 0o600)
	env := func(k string) string {
		if k == auth.EnvToken {
			return "from-env"
		}
		return ""
	}
	noEnv := func(string) string { return "" }
	cases := []struct {
		flag, file string
		getenv     func(string) string
		want       string
	}{
		{"from-flag", file, env, "from-flag"},
		{"", file, env, "from-file"},
		{"", "", env, "from-env"},
		{"", "", noEnv, ""},
	}
	for _, c := range cases {
		if got, err := ResolveToken(c.flag, c.file, c.getenv); err != nil || got != c.want {
			t.Errorf("ResolveToken(%q, %q) = %q, %v; want %q", c.flag, c.file, got, err, c.want)
		}
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for _, f := range []string{empty, filepath.Join(dir, "missing")} {
		if _, err := ResolveToken("", f, env); err == nil || !strings.Contains(err.Error(), "--token-file") {
			t.Errorf("token file %s: error %v, want one naming --token-file", f, err)
		}
	}
	if _, err := Connect(Options{Address: "127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Errorf("Dial without a credential: %v", err)
	}
}

// TestErrors: each failure is described for people, names the
// coordinator, and maps to its exit status.
func TestErrors(t *testing.T) {
	ctx := context.Background()

	// Nothing listening.
	addr := closedAddr(t)
	cl := connectT(t, Options{Address: addr})
	_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
	e := cl.Err("register", err)
	if e.Error() != "coordinator "+addr+" unreachable: connection refused" || ExitCode(e) != ExitUnreachable {
		t.Errorf("refused connection: %q, exit %d", e, ExitCode(e))
	}

	// A name that cannot resolve (.invalid never does).
	cl = connectT(t, Options{Address: "no-such-host.invalid"})
	_, err = cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
	e = cl.Err("register", err)
	if !strings.HasPrefix(e.Error(), "coordinator no-such-host.invalid:7700 unreachable: ") || ExitCode(e) != ExitUnreachable {
		t.Errorf("unresolvable host: %q, exit %d", e, ExitCode(e))
	}

	// The coordinator answers.
	fake := &scriptedWorkers{errs: []error{
		status.Error(codes.InvalidArgument, "capabilities missing"),
		grpcerr.Status(codes.NotFound, apierr.ReasonUnknownJob, `unknown job "x"`).Err(),
		grpcerr.Status(codes.Internal, apierr.ReasonInternal, "bug").Err(),
		grpcerr.Status(codes.PermissionDenied, apierr.ReasonWrongRole, "a client credential cannot register a worker").Err(),
		grpcerr.Status(codes.Unavailable, apierr.ReasonShuttingDown, "coordinator shutting down").Err(),
	}}
	_, addr = serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, fake) })
	cl = connectT(t, Options{Address: addr})
	want := []struct {
		msg  string
		exit int
	}{
		{"register: capabilities missing", ExitBadInput},
		{`register: unknown job "x"`, ExitBadInput},
		{"register: bug", ExitFailure},
		{"coordinator " + addr + " refused the credential: a client credential cannot register a worker", ExitUnreachable},
		{"coordinator " + addr + " unreachable: coordinator shutting down", ExitUnreachable},
	}
	for _, w := range want {
		_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		e := cl.Err("register", err)
		if e.Error() != w.msg || ExitCode(e) != w.exit || ExitCode(err) != w.exit {
			t.Errorf("got %q exit %d (raw %d), want %q exit %d", e, ExitCode(e), ExitCode(err), w.msg, w.exit)
		}
	}

	// A wrong token.
	bad := connectT(t, Options{Address: addr, Token: "wrong"})
	_, err = bad.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
	e = bad.Err("register", err)
	if e.Error() != "coordinator "+addr+" refused the credential: invalid token" || ExitCode(e) != ExitUnreachable {
		t.Errorf("wrong token: %q, exit %d", e, ExitCode(e))
	}
	var typed *Error
	if !errors.As(e, &typed) || typed.Code != codes.Unauthenticated || typed.Kind != Refused {
		t.Errorf("wrong token: %#v", typed)
	}
	if ExitCode(nil) != ExitOK || ExitCode(context.Canceled) != ExitFailure {
		t.Error("exit codes of nil and an interruption")
	}
}

// TestTLS: --ca and --server-name against a TLS server, and a failed
// handshake reported as such.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, caFile := selfSigned(t, dir, "arbiter.test")
	fake := &scriptedWorkers{}
	_, addr := serve(t, "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}}, func(s *grpc.Server) {
		arbiterv1.RegisterWorkerServiceServer(s, fake)
	})
	ctx := context.Background()
	ok := connectT(t, Options{Address: addr, CAFile: caFile, ServerName: "arbiter.test"})
	if _, err := ok.Workers.Register(ctx, &arbiterv1.RegisterRequest{}); err != nil {
		t.Fatalf("TLS with --ca and --server-name: %v", err)
	}
	for _, o := range []Options{
		{Address: addr, TLS: true},      // system roots do not know our CA
		{Address: addr, CAFile: caFile}, // the certificate is not for 127.0.0.1
		{Address: addr, CAFile: caFile, ServerName: "other.test"},
	} {
		cl := connectT(t, o)
		_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		e := cl.Err("register", err)
		if !strings.HasPrefix(e.Error(), "coordinator "+addr+" unreachable: TLS handshake failed: ") || ExitCode(e) != ExitUnreachable {
			t.Errorf("%+v: %q, exit %d", o, e, ExitCode(e))
		}
	}
	if _, err := Connect(Options{Address: addr, Token: "t", CAFile: filepath.Join(dir, "missing.pem")}); err == nil || !strings.Contains(err.Error(), "--ca") {
		t.Errorf("missing CA file: %v", err)
	}
}

// TestTLSMismatch: a plaintext client of a TLS coordinator, and a TLS
// client of a plaintext one, are told which way round it is.
func TestTLSMismatch(t *testing.T) {
	cert, caFile := selfSigned(t, t.TempDir(), "arbiter.test")
	register := func(s *grpc.Server) { arbiterv1.RegisterWorkerServiceServer(s, &scriptedWorkers{}) }
	_, tlsAddr := serve(t, "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}}, register)
	_, plainAddr := serve(t, "127.0.0.1:0", nil, register)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Address: tlsAddr}, "if it serves TLS, connect with --ca FILE"},
		{Options{Address: plainAddr, CAFile: caFile, ServerName: "arbiter.test"}, "does not answer in TLS here; connect without --tls"},
	} {
		cl := connectT(t, c.o)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := cl.Workers.Register(ctx, &arbiterv1.RegisterRequest{})
		cancel()
		e := cl.Err("register", err)
		if !strings.Contains(e.Error(), c.want) || ExitCode(e) != ExitUnreachable {
			t.Errorf("%s (TLS %v): %q, exit %d; want it to say %q", c.o.Address, c.o.CAFile != "", e, ExitCode(e), c.want)
		}
	}
}

// selfSigned makes a certificate for name and writes it as a CA file.
func selfSigned(t *testing.T, dir, name string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caFile
}

// TestSilentCoordinator: a peer that accepts TCP connections and never
// sends a byte (what a stopped coordinator's kernel does) is reported as
// not answering, over plaintext and over TLS, within the connect timeout
// and the call's deadline: not as a TLS mismatch or a failed handshake.
func TestSilentCoordinator(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	addr := lis.Addr().String()
	_, caFile := selfSigned(t, t.TempDir(), "arbiter.test")
	for _, o := range []Options{{Address: addr}, {Address: addr, CAFile: caFile, ServerName: "arbiter.test"}} {
		cl := connectT(t, o)
		_, err := cl.Workers.Register(context.Background(), &arbiterv1.RegisterRequest{})
		e := cl.Err("register", err)
		if !strings.HasPrefix(e.Error(), "coordinator "+addr+" unreachable: not answering") || ExitCode(e) != ExitUnreachable {
			t.Errorf("TLS %v: %q, exit %d; want it unreachable: not answering", o.CAFile != "", e, ExitCode(e))
		}
	}
}
