// Package grpcapi is the coordinator's gRPC face: it authenticates every
// call, translates requests into calls on the core and its workloads, and
// their domain errors (package apierr) into statuses with ErrorInfo
// reasons. It decides nothing itself.
//
// Invariants:
//   - A credential, the role it needs for the method (the admission
//     table), a reservation of the method's byte limit from the admission
//     byte budget and the identity's connection and call limits are
//     checked from the request headers before the message body is read
//     (a tap handle), so a caller without a valid credential, or with one
//     of the wrong role or over its limits, costs the coordinator no body
//     allocation, and right-role callers together hold at most the
//     budget's bytes in requests (methods.go).
//   - Every call runs under panic recovery: a bug answers Internal and is
//     logged; it never takes the coordinator down.
//   - The server bounds concurrent streams per connection, message sizes
//     and client keepalive pings.
package grpcapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	creds "github.com/arbiter-chess/arbiter/coordinator/credentials"
	"github.com/arbiter-chess/arbiter/coordinator/forward"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Limits on what one connection or call may take.
const (
	// MaxRecvMsgBytes bounds a request: a game-pair batch result with its
	// PGNs is the largest (batches are capped so it fits).
	MaxRecvMsgBytes = admission.MaxGRPCMessageBytes
	// MaxSendMsgBytes bounds a response (a perft unit of 4096 FENs is
	// about 400 KB; job lists are paginated).
	MaxSendMsgBytes = 16 << 20
	// MaxConcurrentStreams per connection.
	MaxConcurrentStreams = 64
)

// Config is what the gRPC face serves.
type Config struct {
	Core *core.Core
	// Workloads are the workloads of the kinds registered with package
	// workload, by kind: SubmitJob creates the jobs of those with a spec,
	// those with a service of their own (workload.Servicer) are served,
	// and the services of the built-in kinds (tests' PGNs) find their
	// workload here by its kind.
	Workloads   map[string]core.Workload
	Credentials *creds.Manager
	Store       *store.Store
	// Artifacts, when set, serves the engine artifact store.
	Artifacts  *artifacts.Store
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	// TLS, when set, serves TLS. With ClientCAs set in it, a worker may
	// present a client certificate instead of a token: its identity is the
	// certificate's common name with the worker role.
	TLS *tls.Config
	// Gate, when set, bounds each identity's connections and calls in
	// progress (checked before the body is read).
	Gate *quota.Gate
	// Admission is the coordinator's route table and byte budget (nil: a
	// default one of this server's own).
	Admission *admission.Admission
	// Forwarded, when set, checks the origin a following coordinator
	// signs on the calls it relays (package forward): a call with a valid
	// one is served as if from the caller the follower saw (its address
	// as the call's peer, its verified client certificate as its own).
	// Without it, or with a signature not valid, the header is ignored.
	Forwarded *forward.Signer
}

// Server holds the services and their metrics.
type Server struct {
	cfg      Config
	gate     *quota.Gate
	log      *zap.Logger
	grpcm    *grpcprom.ServerMetrics
	unauthN  prometheus.Counter
	refusedN *prometheus.CounterVec
	// rules are the admission table's rules of the methods served
	// (rulesFor), fixed before the server serves.
	rules map[string]admission.Rule
	adm   *admission.Admission
}

// HealthMethods need no credential: the gRPC health service reveals nothing
// and changes nothing, and load balancers and Kubernetes probes cannot send
// metadata.
var HealthMethods = map[string]bool{
	"/grpc.health.v1.Health/Check": true,
	"/grpc.health.v1.Health/Watch": true,
	"/grpc.health.v1.Health/List":  true,
}

// New builds a gRPC server with every service, the credential check on
// every call, and TLS when configured. The returned health server is
// SERVING; set it to NOT_SERVING before stopping.
func New(cfg Config) (*grpc.Server, *health.Server, error) {
	if cfg.Core == nil || cfg.Credentials == nil {
		return nil, nil, fmt.Errorf("grpcapi: core and credentials are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Admission == nil {
		var err error
		if cfg.Admission, err = admission.New(admission.Config{}, nil); err != nil {
			return nil, nil, err
		}
	}
	s := &Server{cfg: cfg, gate: cfg.Gate, log: cfg.Logger, adm: cfg.Admission,
		grpcm: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram()),
		unauthN: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_requests_unauthenticated_total",
			Help: "Calls refused before their body was read: missing, unknown or revoked credential."}),
		refusedN: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_requests_refused_before_body_total",
			Help: "Calls of a valid credential refused before their body was read, by reason (WRONG_ROLE, QUOTA, BUSY)."}, []string{"reason"}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.grpcm, s.unauthN, s.refusedN)
	}
	opts := []grpc.ServerOption{
		grpc.InTapHandle(s.authenticate),
		grpc.StatsHandler(connTracker{}),
		grpc.ChainUnaryInterceptor(s.grpcm.UnaryServerInterceptor(), s.recoverUnary, s.limitUnary),
		grpc.ChainStreamInterceptor(s.grpcm.StreamServerInterceptor(), s.recoverStream, s.limitStream),
		grpc.MaxRecvMsgSize(MaxRecvMsgBytes),
		grpc.MaxSendMsgSize(MaxSendMsgBytes),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 60 * time.Second, Timeout: 20 * time.Second}),
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	srv := grpc.NewServer(opts...)
	arbiterv1.RegisterWorkerServiceServer(srv, &workerService{s: s, core: cfg.Core})
	games, _ := cfg.Workloads[testview.Kind].(testview.Tests)
	arbiterv1.RegisterJobServiceServer(srv, &jobService{s: s, core: cfg.Core, games: games, started: cfg.Core.Now(),
		arts: cfg.Artifacts, workloads: cfg.Workloads, needers: inOrder(cfg.Workloads)})
	arbiterv1.RegisterAdminServiceServer(srv, &adminService{s: s, core: cfg.Core, creds: cfg.Credentials, store: cfg.Store})
	services := []string{arbiterv1.WorkerService_ServiceDesc.ServiceName, arbiterv1.JobService_ServiceDesc.ServiceName,
		arbiterv1.AdminService_ServiceDesc.ServiceName}
	var plugged []workload.Method
	for _, k := range workload.Kinds() {
		if sv, ok := cfg.Workloads[k.Name].(workload.Servicer); ok {
			names, methods := sv.RegisterGRPC(srv, caller)
			services = append(services, names...)
			plugged = append(plugged, methods...)
		}
	}
	if cfg.Artifacts != nil {
		arbiterv1.RegisterArtifactServiceServer(srv, &artifactService{s: s, core: cfg.Core, arts: cfg.Artifacts})
		services = append(services, arbiterv1.ArtifactService_ServiceDesc.ServiceName)
	}
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	for _, name := range services {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	var err error
	if s.rules, err = rulesFor(srv, cfg.Admission.Table, plugged); err != nil {
		return nil, nil, err
	}
	s.grpcm.InitializeMetrics(srv) // every method × code series from the start
	return srv, hs, nil
}

// inOrder lists the workloads of wls in the order of their kinds
// (workload.Kinds).
func inOrder(wls map[string]core.Workload) []core.Workload {
	var out []core.Workload
	for _, k := range workload.Kinds() {
		if wl, ok := wls[k.Name]; ok {
			out = append(out, wl)
		}
	}
	return out
}

type identityKey struct{}

// authenticate runs on the request headers, before the body is read: it
// resolves the bearer token (or the client certificate of a TLS
// connection) to an identity, or refuses the call.
func (s *Server) authenticate(ctx context.Context, info *tap.Info) (context.Context, error) {
	ctx = s.forwardedFrom(ctx, info.Header)
	if HealthMethods[info.FullMethodName] {
		return ctx, nil
	}
	if id, ok := s.resolve(ctx, info.Header); ok {
		return s.admit(ctx, id, info.FullMethodName)
	}
	s.unauthN.Inc()
	s.adm.Refused(admission.GRPC, apierr.ReasonBadCredential)
	if info.FullMethodName == arbiterv1.WorkerService_Submit_FullMethodName {
		s.cfg.Core.Reject(core.RejectUnauthenticated)
	}
	return nil, grpcerr.Status(codes.Unauthenticated, apierr.ReasonBadCredential,
		"missing, unknown or revoked credential (send \"authorization: Bearer <token>\")").Err()
}

// admit checks, still before the body, that id's role may call method,
// reserves the method's byte limit from the admission budget, and checks
// that id is within its connection and call limits; the call's slot and
// what is left of its reservation are released when its stream ends (its
// context is cancelled then, whichever way it ends).
func (s *Server) admit(ctx context.Context, id identity.Identity, method string) (context.Context, error) {
	if err := admit(s.rules, id, method); err != nil {
		s.refusedN.WithLabelValues(refusalReason(err)).Inc()
		s.adm.Refused(admission.GRPC, refusalReason(err))
		return nil, grpcerr.To(err)
	}
	shares := 1
	if id.Role == identity.Worker {
		shares = s.cfg.Core.WorkersOf(id.Name)
	}
	res, err := s.adm.Budget.ReserveShares(id.Name, id.IsAdmin(), int64(shares), s.rules[method].MaxBytes)
	if err != nil {
		s.refusedN.WithLabelValues(apierr.ReasonBusy).Inc()
		s.adm.Refused(admission.GRPC, apierr.ReasonBusy)
		return nil, grpcerr.To(err)
	}
	if s.gate != nil {
		if err := s.countConn(ctx, id); err != nil {
			res.Release()
			s.refusedN.WithLabelValues(apierr.ReasonQuota).Inc()
			return nil, grpcerr.To(err)
		}
		release, err := s.gate.AddCall(id)
		if err != nil {
			res.Release()
			s.refusedN.WithLabelValues(apierr.ReasonQuota).Inc()
			return nil, grpcerr.To(err)
		}
		// The handler's interceptor frees the slot as it returns, before
		// the answer is sent: a client that waits for its answers never
		// finds its finished calls still counted. The context's end is
		// the backstop for calls no handler ran for.
		context.AfterFunc(ctx, release)
		ctx = context.WithValue(ctx, callSlotKey{}, release)
	}
	context.AfterFunc(ctx, res.Release)
	ctx = context.WithValue(ctx, reservationKey{}, res)
	return context.WithValue(ctx, identityKey{}, id), nil
}

func refusalReason(err error) string {
	if r := apierr.ReasonOf(err); r != "" {
		return r
	}
	return "UNKNOWN_METHOD"
}

func (s *Server) resolve(ctx context.Context, md metadata.MD) (identity.Identity, bool) {
	if vals := md.Get("authorization"); len(vals) > 0 {
		tok, ok := strings.CutPrefix(vals[0], "Bearer ")
		if !ok {
			return identity.Identity{}, false
		}
		return s.cfg.Credentials.Resolve(tok)
	}
	// A verified client certificate identifies a worker (mTLS), here or
	// at the follower that relayed the call.
	if o, ok := ctx.Value(forwardedKey{}).(forward.Origin); ok {
		if o.CertCN != "" {
			return identity.Identity{Name: "cert:" + o.CertCN, Role: identity.Worker}, true
		}
		return identity.Identity{}, false
	}
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 {
			cn := ti.State.VerifiedChains[0][0].Subject.CommonName
			if cn != "" {
				return identity.Identity{Name: "cert:" + cn, Role: identity.Worker}, true
			}
		}
	}
	return identity.Identity{}, false
}

// forwardedFrom makes a call relayed by a following coordinator, with a
// valid signature, look as if it came from the caller the follower saw:
// the peer (address, and a TLS client certificate's verified name) is
// replaced by the signed origin. Anything else is left as it came.
func (s *Server) forwardedFrom(ctx context.Context, md metadata.MD) context.Context {
	vals := md.Get(forward.Header)
	if len(vals) == 0 {
		return ctx
	}
	o, ok := s.cfg.Forwarded.Verify(vals[0])
	if !ok {
		s.log.Debug("forwarded origin not believed (no valid signature)", zap.Int("len", len(vals[0])))
		return ctx
	}
	p := &peer.Peer{Addr: o.NetAddr()}
	if prev, ok := peer.FromContext(ctx); ok {
		p.LocalAddr = prev.LocalAddr
	}
	ctx = peer.NewContext(ctx, p)
	return context.WithValue(ctx, forwardedKey{}, o)
}

type forwardedKey struct{}

// caller is the identity authenticate attached to ctx.
func caller(ctx context.Context) identity.Identity {
	id, _ := ctx.Value(identityKey{}).(identity.Identity)
	return id
}

func (s *Server) recovered(method string, r any) error {
	s.log.Error("panic in RPC handler", zap.String("method", method), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
	return status.Error(codes.Internal, "internal error (logged by the coordinator)")
}

func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, s.recovered(info.FullMethod, r)
		}
	}()
	resp, err = h(ctx, req)
	return resp, grpcerr.To(err)
}

func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.recovered(info.FullMethod, r)
		}
	}()
	return grpcerr.To(h(srv, ss))
}
