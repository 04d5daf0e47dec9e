package forward

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
)

// DefaultMaxWait is how long a call waits for a leader to relay to (a
// takeover loading the store, a follower that has not yet read the new
// leader's address) before it is refused.
const DefaultMaxWait = 10 * time.Second

// DefaultMaxCalls is how many calls (gRPC calls and HTTP requests) one
// follower relays at once unless told otherwise: workers hold a long poll
// or two each, so this is some hundreds of workers per follower.
const DefaultMaxCalls = 1024

// Leader is where calls go now: the leader's advertised gRPC and HTTP
// addresses ("" while none serves) and its term.
type Leader struct {
	GRPC, HTTP string
	Term       int64
}

// Config is what a Forwarder relays, to where, within what limits.
type Config struct {
	// Leader tells where the leader serves now (read on every call, so it
	// must not wait: leader.Elector.Status is what it reads).
	Leader func() Leader
	// Signer signs each call's origin for the leader.
	Signer *Signer
	// TLS, when set, is the client side of the connections to the leader
	// (the coordinators serve TLS); nil: plaintext. Its ServerName is set
	// to the leader's host for each connection unless it names one.
	TLS *tls.Config
	// MaxCalls caps the calls relayed at once (0: DefaultMaxCalls); a
	// call past it is refused Unavailable, which clients retry.
	MaxCalls int
	// MaxWait bounds how long a call waits for a leader that answers
	// (0: DefaultMaxWait); the caller's deadline bounds it too. Nothing
	// has reached a leader while a call waits, so one refused after it
	// was not served anywhere.
	MaxWait time.Duration
	// MaxRecvMsgBytes and MaxSendMsgBytes are the leader's own limits on
	// a request and a response; MaxConcurrentStreams its limit of calls
	// per connection, which the follower's connections to it respect too.
	MaxRecvMsgBytes, MaxSendMsgBytes int
	MaxConcurrentStreams             int
	Logger                           *zap.Logger
	// Admission, when set, bounds what a follower reads before relaying:
	// each call reserves its method's byte limit from the byte budget
	// before its body is read (a follower cannot check credentials; the
	// leader does), and its trusted proxies are those whose X-Forwarded-*
	// headers a follower passes on (nil: none).
	Admission *admission.Admission
	// Registerer receives the forwarding metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Forwarder relays calls to the leader. Its connections to the leader are
// a pool, each carrying at most MaxConcurrentStreams calls (the leader
// refuses more on one connection), replaced as a whole when the leader
// changes.
type Forwarder struct {
	cfg   Config
	log   *zap.Logger
	slots chan struct{}
	m     metrics

	stop chan struct{} // closed by Close: ends watch

	mu     sync.Mutex
	up     *upstream // to the current leader (nil: none yet)
	closed bool
}

// upstream is the connections to one leader (one address, one term).
type upstream struct {
	leader Leader
	mu     sync.Mutex
	conns  []*pooledConn
	stale  bool // the leader changed: its calls end Unavailable
}

type pooledConn struct {
	cc     *grpc.ClientConn
	active int
}

// New makes a Forwarder; NewServer serves it.
func New(cfg Config) *Forwarder {
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.MaxConcurrentStreams <= 0 {
		cfg.MaxConcurrentStreams = 100
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	f := &Forwarder{cfg: cfg, log: cfg.Logger, slots: make(chan struct{}, cfg.MaxCalls), m: newMetrics(cfg.Registerer), stop: make(chan struct{})}
	go f.watch()
	return f
}

// NewServer is a gRPC server that relays every call it receives to the
// leader; serverTLS, when set, serves TLS (with the client CA, if it has
// one, verifying workers' certificates, whose names are passed on signed).
// Its limits are the leader's: message sizes, calls per connection,
// keepalive.
func (f *Forwarder) NewServer(serverTLS *tls.Config) *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.InTapHandle(f.admit),
		grpc.UnknownServiceHandler(f.handle),
		grpc.ForceServerCodec(rawCodec{}),
		grpc.MaxConcurrentStreams(uint32(f.cfg.MaxConcurrentStreams)),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 60 * time.Second, Timeout: 20 * time.Second}),
	}
	if f.cfg.MaxRecvMsgBytes > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(f.cfg.MaxRecvMsgBytes))
	}
	if f.cfg.MaxSendMsgBytes > 0 {
		opts = append(opts, grpc.MaxSendMsgSize(f.cfg.MaxSendMsgBytes))
	}
	if serverTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(serverTLS)))
	}
	return grpc.NewServer(opts...)
}

// admit reserves, before a relayed call's body is read, its method's
// byte limit (the admission table's; the server's receive limit for a
// method the table does not know) from the whole byte budget, until the
// call ends. A follower relays callers before any credential is checked
// (the leader checks them), so this, not --forward-max-calls × the
// message limit, bounds the request bytes it holds.
func (f *Forwarder) admit(ctx context.Context, info *tap.Info) (context.Context, error) {
	if f.cfg.Admission == nil {
		return ctx, nil
	}
	n := int64(f.cfg.MaxRecvMsgBytes)
	if r, ok := f.cfg.Admission.Table.Rule(admission.GRPC, info.FullMethodName); ok {
		n = r.MaxBytes
	}
	res, err := f.cfg.Admission.Budget.Reserve("relayed calls", true, n)
	if err != nil {
		f.cfg.Admission.Refused(admission.GRPC, apierr.ReasonBusy)
		return nil, grpcerr.To(err)
	}
	context.AfterFunc(ctx, res.Release)
	return ctx, nil
}

// proxies are the trusted proxies (nil: none).
func (f *Forwarder) proxies() *admission.Proxies {
	if f.cfg.Admission == nil {
		return nil
	}
	return f.cfg.Admission.Proxies
}

// Close ends the connections to the leader: calls still relayed end
// Unavailable.
func (f *Forwarder) Close() {
	f.mu.Lock()
	up := f.up
	wasClosed := f.closed
	f.up, f.closed = nil, true
	f.mu.Unlock()
	if !wasClosed {
		close(f.stop)
	}
	if up != nil {
		up.close()
	}
}

// streamDesc lets one handler relay every kind of call: on the wire a
// unary call is a stream of one message each way.
var streamDesc = grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

// handle relays one call: metadata (the caller's token among it) and
// messages one by one each way, then the leader's headers, trailers and
// status.
func (f *Forwarder) handle(_ any, ss grpc.ServerStream) (err error) {
	ctx := ss.Context()
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "forward: no method")
	}
	defer func() { f.m.calls.WithLabelValues("grpc", status.Code(err).String()).Inc() }()
	in, _ := metadata.FromIncomingContext(ctx)
	if _, ok := f.cfg.Signer.Verify(first(in.Get(Header))); ok {
		return status.Error(codes.Unavailable, "this coordinator does not lead: the call was forwarded to it by another coordinator whose view of the leader is stale; retry")
	}
	release, err := f.acquire()
	if err != nil {
		return err
	}
	defer release()
	up, conn, done, err := f.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Errorf(codes.Unavailable, "this coordinator follows and forwards to the leader: %v; retry", err)
	}
	defer done()

	md := outgoing(in)
	md.Set(Header, f.cfg.Signer.Sign(originOf(ctx)))
	cctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, md))
	defer cancel()
	cs, err := conn.NewStream(cctx, &streamDesc, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return f.upstreamErr(ctx, up, err)
	}
	// The caller's messages, relayed as they come; the leader's answer
	// is read below. Each side's RecvMsg and SendMsg run in their own
	// goroutine, which gRPC allows.
	go func() {
		for {
			var fr frame
			if err := ss.RecvMsg(&fr); err != nil {
				if errors.Is(err, io.EOF) {
					cs.CloseSend()
				} else {
					cancel()
				}
				return
			}
			if err := cs.SendMsg(&fr); err != nil {
				// io.EOF: the leader ended the call; its status is
				// read below.
				return
			}
		}
	}()
	if h, err := cs.Header(); err == nil && h != nil {
		if err := ss.SendHeader(h); err != nil {
			return err
		}
	}
	for {
		var fr frame
		if err := cs.RecvMsg(&fr); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return f.upstreamErr(ctx, up, err)
		}
		if err := ss.SendMsg(&fr); err != nil {
			return err
		}
	}
}

// upstreamErr is what the caller gets for a failed relayed call: the
// leader's status unchanged, or Unavailable when the leader changed
// under the call (its connection was closed here) or the caller is gone.
func (f *Forwarder) upstreamErr(ctx context.Context, up *upstream, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if up.isStale() {
		return status.Error(codes.Unavailable, "the leader changed during the call; retry")
	}
	if status.Code(err) == codes.Canceled {
		// Our side of the connection closed (Close, a leader change):
		// not the caller's doing.
		return status.Errorf(codes.Unavailable, "forwarding to the leader: %v; retry", status.Convert(err).Message())
	}
	return err
}

// connect is a ready connection to the leader, waiting for one up to
// MaxWait: so that a call is refused only when no leader could have
// served it within that time, not because this follower has not yet read
// the new leader's address or the leader is still loading the store.
// Nothing is sent before it returns, so nothing is done twice by a
// caller's retry.
func (f *Forwarder) connect(ctx context.Context) (*upstream, *grpc.ClientConn, func(), error) {
	wctx, cancel := context.WithTimeout(ctx, f.cfg.MaxWait)
	defer cancel()
	for {
		up, conn, done, err := f.pick()
		if err == nil {
			if err = waitReady(wctx, conn); err == nil {
				return up, conn, done, nil
			}
			done()
		}
		select {
		case <-wctx.Done():
			return nil, nil, nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitReady waits for cc to connect; a connection that failed (the
// leader does not answer) or was closed (the leader changed) is an error
// at once, so that connect looks at the leader row again.
func waitReady(ctx context.Context, cc *grpc.ClientConn) error {
	cc.Connect()
	for {
		switch s := cc.GetState(); s {
		case connectivity.Ready:
			return nil
		case connectivity.Shutdown:
			return errors.New("the leader changed")
		case connectivity.TransientFailure:
			return errors.New("the leader does not answer at its address")
		default:
			if !cc.WaitForStateChange(ctx, s) {
				return fmt.Errorf("the leader does not answer at its address (%v)", s)
			}
		}
	}
}

// Probe checks that the leader answers its health service through this
// forwarder's connections (the follower's /readyz).
func (f *Forwarder) Probe(ctx context.Context) error {
	_, conn, done, err := f.pick()
	if err != nil {
		return err
	}
	defer done()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errors.New("the leader says " + resp.GetStatus().String())
	}
	return nil
}

// acquire takes one of MaxCalls slots.
func (f *Forwarder) acquire() (func(), error) {
	select {
	case f.slots <- struct{}{}:
		f.m.inFlight.Inc()
		return func() { <-f.slots; f.m.inFlight.Dec() }, nil
	default:
		return nil, status.Errorf(codes.Unavailable, "this coordinator already forwards %d calls (--forward-max-calls); retry, or use another coordinator", f.cfg.MaxCalls)
	}
}

// pick is a connection to the current leader with room for one more
// call; done gives the room back.
func (f *Forwarder) pick() (*upstream, *grpc.ClientConn, func(), error) {
	up, err := f.current()
	if err != nil {
		return nil, nil, nil, err
	}
	if up == nil {
		return nil, nil, nil, errNoLeader
	}
	pc, err := up.get(f)
	if err != nil {
		return nil, nil, nil, err
	}
	return up, pc.cc, func() { up.put(pc) }, nil
}

// current is the connections to the leader as Leader names it now (nil:
// none); those to a former leader are closed, so that the calls still
// relayed on them end.
func (f *Forwarder) current() (*upstream, error) {
	l := f.cfg.Leader()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, errors.New("this coordinator is stopping")
	}
	var old *upstream
	if f.up != nil && f.up.leader != l {
		old, f.up = f.up, nil
	}
	if f.up == nil && l.GRPC != "" {
		f.up = &upstream{leader: l}
	}
	up := f.up
	f.mu.Unlock()
	if old != nil {
		f.log.Info("forward: the leader changed; calls in flight to the former one end Unavailable",
			zap.String("from", old.leader.GRPC), zap.Int64("from_term", old.leader.Term), zap.String("to", l.GRPC), zap.Int64("term", l.Term))
		old.close()
	}
	return up, nil
}

// watch notices a change of leader between calls too: a stream relayed
// to a former leader that still holds its connection (paused, cut off
// from the database) ends within watchEvery of the change, not at the
// next call.
func (f *Forwarder) watch() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			f.current()
		}
	}
}

// watchEvery is how often watch reads Leader (a memory read).
const watchEvery = 100 * time.Millisecond

func (up *upstream) get(f *Forwarder) (*pooledConn, error) {
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.stale {
		return nil, errors.New("the leader changed")
	}
	for _, pc := range up.conns {
		if pc.active < f.cfg.MaxConcurrentStreams {
			pc.active++
			return pc, nil
		}
	}
	cc, err := f.dial(up.leader.GRPC)
	if err != nil {
		return nil, err
	}
	pc := &pooledConn{cc: cc, active: 1}
	up.conns = append(up.conns, pc)
	return pc, nil
}

func (up *upstream) put(pc *pooledConn) {
	up.mu.Lock()
	pc.active--
	up.mu.Unlock()
}

func (up *upstream) isStale() bool {
	up.mu.Lock()
	defer up.mu.Unlock()
	return up.stale
}

func (up *upstream) close() {
	up.mu.Lock()
	up.stale = true
	conns := up.conns
	up.conns = nil
	up.mu.Unlock()
	for _, pc := range conns {
		pc.cc.Close()
	}
}

// dial opens (lazily, as gRPC does) one connection to the leader.
func (f *Forwarder) dial(addr string) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if f.cfg.TLS != nil {
		cfg := f.cfg.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			cfg.ServerName = host
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// The leader allows a ping every 10 s; a dead leader's host is
		// noticed within Time + Timeout.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 20 * time.Second, Timeout: 10 * time.Second, PermitWithoutStream: true}),
		grpc.WithUserAgent("arbiter-forward"),
		// A leader that restarts at its address is found again soon
		// (gRPC's default backoff grows to two minutes).
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: 5 * time.Second}),
	}
	var call []grpc.CallOption
	if f.cfg.MaxRecvMsgBytes > 0 {
		call = append(call, grpc.MaxCallSendMsgSize(f.cfg.MaxRecvMsgBytes))
	}
	if f.cfg.MaxSendMsgBytes > 0 {
		call = append(call, grpc.MaxCallRecvMsgSize(f.cfg.MaxSendMsgBytes))
	}
	if len(call) > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(call...))
	}
	return grpc.NewClient("passthrough:///"+addr, opts...)
}

// outgoing is the metadata passed on: the caller's, without what gRPC
// sets itself (pseudo-headers, content type, user agent) and without a
// Header of the caller's own.
func outgoing(in metadata.MD) metadata.MD {
	md := metadata.MD{}
	for k, v := range in {
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") || k == Header ||
			k == "content-type" || k == "user-agent" || k == "te" {
			continue
		}
		md[k] = v
	}
	return md
}

// originOf is who called: the peer's address and, over TLS, the common
// name of a client certificate the server verified.
func originOf(ctx context.Context) Origin {
	var o Origin
	p, ok := peer.FromContext(ctx)
	if !ok {
		return o
	}
	if p.Addr != nil {
		o.Addr = p.Addr.String()
	}
	if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 && len(ti.State.VerifiedChains[0]) > 0 {
		o.CertCN = ti.State.VerifiedChains[0][0].Subject.CommonName
	}
	return o
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

type metrics struct {
	calls    *prometheus.CounterVec
	inFlight prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_coordinator_forwarded_calls_total",
			Help: "Calls a following coordinator relayed to the leader, by protocol (grpc, http) and outcome (the gRPC code; the HTTP status class)."},
			[]string{"protocol", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arbiter_coordinator_forwarded_in_flight",
			Help: "Calls (gRPC and HTTP) a following coordinator is relaying to the leader now (at most --forward-max-calls)."}),
	}
	// The outcomes worth a graph from the start, at zero.
	for _, c := range []string{"OK", "Unavailable", "Canceled", "DeadlineExceeded"} {
		m.calls.WithLabelValues("grpc", c)
	}
	for _, c := range []string{"2xx", "3xx", "4xx", "5xx", "refused"} {
		m.calls.WithLabelValues("http", c)
	}
	if reg != nil {
		reg.MustRegister(m.calls, m.inFlight)
	}
	return m
}

// httpClass is an HTTP status as its class label ("2xx").
func httpClass(code int) string { return strconv.Itoa(code/100) + "xx" }

// RegisterIdle exports the forwarding series at zero on a coordinator
// that never follows (one on SQLite), so that the dashboards' forwarding
// panels show "nothing relayed" rather than no data.
func RegisterIdle(reg prometheus.Registerer) { newMetrics(reg) }
