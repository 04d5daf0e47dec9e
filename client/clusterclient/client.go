// Package clusterclient is the one client of a coordinator, used by the
// worker and every CLI command: it dials (address with a default port,
// bearer credential, TLS or mutual TLS, keepalives), puts a deadline on
// every unary call, retries with one policy (retry.go), follows a job
// through coordinator restarts (watch.go), and turns failures into errors
// that name the coordinator and map to exit statuses (errors.go).
package clusterclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/auth"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Deadlines of one attempt of each kind of unary call (CallTimeout).
const (
	// ShortTimeout: calls that only read or touch state (GetJob, ListJobs,
	// CancelJob, Register, Heartbeat, Release, CloseVerifySession).
	ShortTimeout = 10 * time.Second
	// SubmitTimeout: calls that carry much (a worker's result with its
	// PGNs, a test with its opening book).
	SubmitTimeout = time.Minute
	// SplitTimeout: SubmitPerft, which the coordinator answers only once
	// it has expanded the root to the split ply (up to ply 6: millions of
	// positions). Keepalive still notices a dead connection within a minute.
	SplitTimeout = 10 * time.Minute
	// LongPollMargin is added to a long poll's own wait (Lease,
	// RunVerifyUnit) for the round trip and a busy coordinator.
	LongPollMargin = 10 * time.Second
)

// Keepalive: a connection that carries a call but has been silent for
// KeepaliveTime is pinged, and closed if the ping is not answered within
// KeepaliveTimeout, so that calls on a half-open connection (a peer that
// vanished without closing) fail as Unavailable and are retried instead
// of hanging. Idle connections are not pinged (servers punish that).
const (
	KeepaliveTime    = 30 * time.Second
	KeepaliveTimeout = 10 * time.Second
)

// maxRecvMsgSize bounds an answer (a job's divide, a list of jobs).
const maxRecvMsgSize = 16 << 20

// connectTimeout bounds one connection attempt, TCP and TLS handshakes
// and the coordinator's first HTTP/2 settings: a coordinator that accepts
// but sends nothing for this long is reported as not answering.
const connectTimeout = 5 * time.Second

// CallTimeout is the default deadline of one unary call of method (a full
// gRPC method name) with request req.
func CallTimeout(method string, req any) time.Duration {
	if w, ok := req.(interface{ GetWait() *durationpb.Duration }); ok {
		return w.GetWait().AsDuration() + LongPollMargin
	}
	name := method[strings.LastIndexByte(method, '/')+1:]
	switch name {
	case "Submit", "SubmitMatch":
		return SubmitTimeout
	case "SubmitPerft":
		return SplitTimeout
	}
	return ShortTimeout
}

// Client is a connection to one coordinator with its service stubs.
type Client struct {
	addr string
	conn *grpc.ClientConn
	rec  *dialRecorder

	Jobs    arbiterv1.JobServiceClient
	Workers arbiterv1.WorkerServiceClient
	Verify  arbiterv1.VerifyServiceClient
	Admin   arbiterv1.AdminServiceClient
}

// Connect checks o and returns a client. It does not wait for the
// coordinator: the connection (re)connects in the background with backoff,
// and calls fail with Unavailable while the coordinator is away.
func Connect(o Options) (*Client, error) {
	addr, err := NormalizeAddresses(o.Address)
	if err != nil {
		return nil, fmt.Errorf("coordinator %w", err)
	}
	if o.Token == "" && o.CertFile == "" {
		return nil, fmt.Errorf("no credential: pass --token or --token-file, or set %s", auth.EnvToken)
	}
	rec := &dialRecorder{addrs: strings.Split(addr, ","), resolver: o.Resolver}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if o.secure() {
		cfg, err := tlsConfig(o)
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	bc := backoff.DefaultConfig
	bc.MaxDelay = 3 * time.Second
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(recordingCreds{TransportCredentials: creds, rec: rec, serverName: o.ServerName != ""}),
		// Our own dialer, so that the cause of a failed connection
		// (refused, DNS, timeout) is kept as a typed error for messages.
		grpc.WithContextDialer(rec.dial),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bc, MinConnectTimeout: connectTimeout}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: KeepaliveTime, Timeout: KeepaliveTimeout, PermitWithoutStream: false}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsgSize)),
		grpc.WithChainUnaryInterceptor(defaultDeadline),
	}
	if o.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(auth.Token{Value: o.Token, Secure: o.secure()}))
	}
	// passthrough: the address goes to our dialer as is, which resolves it
	// on every connection attempt (a restarted coordinator may have moved).
	conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", addr, err)
	}
	return &Client{addr: addr, conn: conn, rec: rec,
		Jobs: arbiterv1.NewJobServiceClient(conn), Workers: arbiterv1.NewWorkerServiceClient(conn),
		Verify: arbiterv1.NewVerifyServiceClient(conn), Admin: arbiterv1.NewAdminServiceClient(conn)}, nil
}

// Dial is Connect for callers that only need the connection (for their
// own stubs): o's Address is replaced by addr.
func Dial(addr string, o Options) (*grpc.ClientConn, error) {
	o.Address = addr
	c, err := Connect(o)
	if err != nil {
		return nil, err
	}
	return c.conn, nil
}

func tlsConfig(o Options) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca %s: no PEM certificate in the file", apierr.Q(o.CAFile))
		}
		cfg.RootCAs = pool
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate %s / key %s: %w", apierr.Q(o.CertFile), apierr.Q(o.KeyFile), err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Addr is the coordinator's address (with its port).
func (c *Client) Addr() string { return c.addr }

// Conn is the underlying connection (for stubs of other services).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Err describes err of operation op (e.g. "submit") as an *Error naming
// this coordinator; nil stays nil.
func (c *Client) Err(op string, err error) error {
	if err == nil {
		return nil
	}
	return c.Describe(op, err)
}

// Describe is Err as the concrete type (nil for nil).
func (c *Client) Describe(op string, err error) *Error {
	if err == nil {
		return nil
	}
	return describe(c.addr, op, err, c.rec.last())
}

// Away is a one-line notice for a retryable failure, for people watching
// a retry: "coordinator unavailable at ADDR (connection refused)".
func (c *Client) Away(err error) string {
	return fmt.Sprintf("coordinator unavailable at %s (%s)", c.addr, c.Describe("", err).Detail)
}

// defaultDeadline gives a unary call CallTimeout when its context has no
// deadline, so that no call waits forever on a coordinator that stopped
// answering.
func defaultDeadline(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CallTimeout(method, req))
		defer cancel()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// dialRecorder dials the coordinator's addresses and keeps the outcome
// of the latest connection attempt.
type dialRecorder struct {
	addrs    []string // one or more, normalized
	resolver *net.Resolver
	mu       sync.Mutex
	err      error // nil after a successful handshake
	next     int   // the address to try first: the last one that accepted
}

func (r *dialRecorder) set(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

func (r *dialRecorder) last() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// dial connects to the first address that accepts, starting from the
// one that accepted last: several coordinators share a cluster and only
// the leader listens, so a refused or dead address passes to the next.
// Each address gets an equal share of what is left of the attempt's
// deadline (a host name with several addresses is tried address by
// address by the dialer itself).
func (r *dialRecorder) dial(ctx context.Context, _ string) (net.Conn, error) {
	r.mu.Lock()
	first := r.next
	r.mu.Unlock()
	var lastErr error
	for i := range r.addrs {
		k := (first + i) % len(r.addrs)
		actx, cancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok && len(r.addrs) > 1 {
			share := time.Until(dl) / time.Duration(len(r.addrs)-i)
			actx, cancel = context.WithTimeout(ctx, max(share, 200*time.Millisecond))
		}
		// A name with several addresses (DNS records) is tried address
		// by address by the dialer itself, within this share.
		d := net.Dialer{Resolver: r.resolver}
		conn, err := d.DialContext(actx, "tcp", r.addrs[k])
		cancel()
		if err == nil {
			r.mu.Lock()
			r.next = k
			r.mu.Unlock()
			return dialedConn{Conn: conn, addr: r.addrs[k]}, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	r.set(lastErr)
	return nil, lastErr
}

// dialedConn remembers which address of the list it reached, for TLS to
// check that host's certificate.
type dialedConn struct {
	net.Conn
	addr string
}

// recordingCreds records the outcome of each client handshake.
type recordingCreds struct {
	credentials.TransportCredentials
	rec *dialRecorder
	// serverName: the name to check is set (--server-name), not the
	// address dialed.
	serverName bool
}

func (c recordingCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if dc, ok := conn.(dialedConn); ok && !c.serverName {
		// The target is the whole list; the certificate to check is the
		// one of the host reached (unless --server-name says otherwise).
		authority = dc.addr
	}
	nc, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, conn)
	if err != nil {
		if silent(err) {
			// A TLS coordinator that accepted the connection and sent no
			// handshake in the connect timeout is frozen, not misconfigured.
			c.rec.set(&notAnswering{err})
		} else {
			c.rec.set(&handshakeError{err})
		}
		return nc, info, err
	}
	if info.AuthType() == "insecure" {
		// A plaintext client talking to a TLS coordinator sees only a
		// reset connection; watch the first read to say why. A plaintext
		// "handshake" proves nothing of the peer, so the outcome of the
		// previous attempt (a coordinator not answering, say) stands until
		// the coordinator speaks: a retry in flight when the call's
		// deadline passes does not erase why the last one failed.
		return &firstReadConn{Conn: nc, rec: c.rec}, info, err
	}
	c.rec.set(nil)
	return nc, info, err
}

// firstReadConn records a plaintext connection whose first read fails
// before the coordinator sent anything, or whose first bytes are a TLS
// record: both what a TLS coordinator does to an HTTP/2 preface in clear.
type firstReadConn struct {
	net.Conn
	rec  *dialRecorder
	once sync.Once
}

func (f *firstReadConn) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	f.once.Do(func() {
		switch {
		case n == 0 && silent(err):
			// gRPC closed the connection itself when the coordinator sent
			// nothing (not even its settings) within the connect timeout:
			// a coordinator that accepts but does not answer.
			f.rec.set(&notAnswering{err})
		case n == 0 && err != nil || n >= 2 && (p[0] == 0x15 || p[0] == 0x16) && p[1] == 0x03:
			f.rec.set(&plaintextToTLS{err})
		case n > 0:
			f.rec.set(nil)
		}
	})
	return n, err
}

func (c recordingCreds) Clone() credentials.TransportCredentials {
	return recordingCreds{TransportCredentials: c.TransportCredentials.Clone(), rec: c.rec, serverName: c.serverName}
}
