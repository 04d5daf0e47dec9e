package grpcapi

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/grpcerr"
	"github.com/arbiter-chess/arbiter/internal/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Who may call a method. The handlers and the core check again (with the
// object's owner); this table exists so that the role is checked in the
// tap handle, from the headers, before grpc-go reads the body: a valid
// credential of the wrong role must cost the coordinator no more than a
// missing one.
type role int

const (
	worker role = iota + 1 // identity.CanWork
	client                 // identity.CanSubmit
	admin                  // identity.IsAdmin
)

func (r role) allows(id identity.Identity) bool {
	switch r {
	case anyRole:
		return true
	case worker:
		return id.CanWork()
	case client:
		return id.CanSubmit()
	case admin:
		return id.IsAdmin()
	}
	return false
}

func (r role) String() string {
	return map[role]string{worker: "worker", client: "client", admin: "admin"}[r]
}

// Per-method request limits. grpc-go has one receive limit per server
// (grpc.MaxRecvMsgSize), checked against a message's length prefix before
// it allocates; there is no per-method one on the server side, and the
// unary request is decoded before any interceptor runs. So the server's
// limit is the largest any method needs (MaxRecvMsgBytes), and:
//   - the role is checked in the tap handle before the body, so only the
//     methods a caller may call can make it read their bodies at all;
//   - each identity's calls in progress are counted in the tap handle
//     (quota.Limits.Calls), which bounds what one identity can make the
//     coordinator hold to Calls × MaxRecvMsgBytes;
//   - each method's own limit, below, is checked on the decoded message
//     and refused with RESOURCE_EXHAUSTED naming the method and limit
//     before the handler sees it, so nothing a handler keeps comes from
//     an oversized request.
//
// The limits are what each method needs with room: a submit carries its
// opening book inline (gamepair.MaxOpenings), a batch result its PGNs,
// an upload chunk artifacts.ChunkBytes, a heartbeat up to
// core.MaxHeldLeases lease ids, a verify report 64 positions of up to
// 64 KiB each (internal/verifyclient); everything else is a few ids and
// small specs.
const (
	smallMsgBytes        = 256 << 10
	mediumMsgBytes       = 1 << 20
	uploadMsgBytes       = artifacts.ChunkBytes + 64<<10
	verifyReportMsgBytes = 5 << 20
)

type methodRule struct {
	role     role
	maxBytes int
}

// methodRules lists every method of the built-in services; a method no
// service serves is refused at the tap (TestEveryMethodHasARule keeps the
// table complete).
var methodRules = map[string]methodRule{
	arbiterv1.WorkerService_Register_FullMethodName:  {worker, smallMsgBytes},
	arbiterv1.WorkerService_Lease_FullMethodName:     {worker, smallMsgBytes},
	arbiterv1.WorkerService_Heartbeat_FullMethodName: {worker, mediumMsgBytes},
	arbiterv1.WorkerService_Submit_FullMethodName:    {worker, MaxRecvMsgBytes},
	arbiterv1.WorkerService_Release_FullMethodName:   {worker, smallMsgBytes},

	arbiterv1.JobService_SubmitPerft_FullMethodName:   {client, mediumMsgBytes},
	arbiterv1.JobService_SubmitMatch_FullMethodName:   {client, MaxRecvMsgBytes},
	arbiterv1.JobService_SubmitSpsa_FullMethodName:    {client, MaxRecvMsgBytes},
	arbiterv1.JobService_SubmitJob_FullMethodName:     {client, MaxRecvMsgBytes},
	arbiterv1.JobService_GetJob_FullMethodName:        {client, smallMsgBytes},
	arbiterv1.JobService_ListJobs_FullMethodName:      {client, smallMsgBytes},
	arbiterv1.JobService_WatchJob_FullMethodName:      {client, smallMsgBytes},
	arbiterv1.JobService_CancelJob_FullMethodName:     {client, smallMsgBytes},
	arbiterv1.JobService_DownloadPGN_FullMethodName:   {client, smallMsgBytes},
	arbiterv1.JobService_ModifyJob_FullMethodName:     {client, smallMsgBytes},
	arbiterv1.JobService_ResumeJob_FullMethodName:     {client, smallMsgBytes},
	arbiterv1.JobService_RescheduleJob_FullMethodName: {client, smallMsgBytes},

	arbiterv1.VerifyService_RunVerifyUnit_FullMethodName:       {client, mediumMsgBytes},
	arbiterv1.VerifyService_CloseVerifySession_FullMethodName:  {client, smallMsgBytes},
	arbiterv1.VerifyService_ReportVerifySession_FullMethodName: {client, verifyReportMsgBytes},

	arbiterv1.AdminService_CreateCredential_FullMethodName: {admin, smallMsgBytes},
	arbiterv1.AdminService_ListCredentials_FullMethodName:  {admin, smallMsgBytes},
	arbiterv1.AdminService_RevokeCredential_FullMethodName: {admin, smallMsgBytes},
	arbiterv1.AdminService_ListWorkers_FullMethodName:      {client, smallMsgBytes},
	arbiterv1.AdminService_Backup_FullMethodName:           {admin, smallMsgBytes},
	arbiterv1.AdminService_BlockWorker_FullMethodName:      {admin, smallMsgBytes},
	arbiterv1.AdminService_ListBlocked_FullMethodName:      {client, smallMsgBytes},

	arbiterv1.ArtifactService_BeginUpload_FullMethodName:    {client, smallMsgBytes},
	arbiterv1.ArtifactService_Upload_FullMethodName:         {client, uploadMsgBytes},
	arbiterv1.ArtifactService_GetArtifact_FullMethodName:    {client, smallMsgBytes},
	arbiterv1.ArtifactService_ListArtifacts_FullMethodName:  {client, smallMsgBytes},
	arbiterv1.ArtifactService_DeleteArtifact_FullMethodName: {client, smallMsgBytes},
	arbiterv1.ArtifactService_Download_FullMethodName:       {worker, smallMsgBytes},
	arbiterv1.ArtifactService_ReportArtifact_FullMethodName: {worker, smallMsgBytes},
	arbiterv1.ArtifactService_SetDefaultNet_FullMethodName:  {client, smallMsgBytes},
}

// anyRole admits every authenticated identity: for methods of plugged-in
// kinds' own services that methodRules does not list, which check the
// role themselves (workload.Servicer).
const anyRole role = -1

// rulesFor is methodRules, the rules the plugged-in kinds give their
// services' methods, and a rule for every other method srv serves: any
// role at the tap, the server's receive limit.
func rulesFor(srv *grpc.Server, plugged []workload.Method) map[string]methodRule {
	rules := make(map[string]methodRule, len(methodRules)+len(plugged))
	for m, r := range methodRules {
		rules[m] = r
	}
	for _, m := range plugged {
		r := methodRule{anyRole, min(max(m.MaxBytes, 1), MaxRecvMsgBytes)}
		switch m.Role {
		case identity.Worker:
			r.role = worker
		case identity.Client:
			r.role = client
		case identity.Admin:
			r.role = admin
		}
		rules[m.FullName] = r
	}
	for name, info := range srv.GetServiceInfo() {
		for _, m := range info.Methods {
			full := "/" + name + "/" + m.Name
			if _, ok := rules[full]; !ok {
				rules[full] = methodRule{anyRole, MaxRecvMsgBytes}
			}
		}
	}
	return rules
}

// admit checks id's role for method from the headers alone.
func admit(rules map[string]methodRule, id identity.Identity, method string) error {
	r, ok := rules[method]
	if !ok {
		return grpcerr.Status(codes.Unimplemented, apierr.ReasonBadInput,
			fmt.Sprintf("method %s: not served by this coordinator", apierr.Q(method))).Err()
	}
	if !r.role.allows(id) {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s; %s needs the %s role", apierr.Q(id.Name), id.Role, method, r.role)
	}
	return nil
}

func tooLarge(method string, size, limit int) error {
	return apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
		"%s: a request of %d bytes, this method takes at most %d", method, size, limit)
}

func checkSize(rules map[string]methodRule, method string, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil
	}
	limit := MaxRecvMsgBytes
	if r, ok := rules[method]; ok {
		limit = r.maxBytes
	}
	if n := proto.Size(pm); n > limit {
		return tooLarge(method, n, limit)
	}
	return nil
}

// limitUnary refuses a decoded request over its method's limit.
func (s *Server) limitUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := checkSize(s.rules, info.FullMethod, req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// limitStream refuses every received message over its method's limit.
func (s *Server) limitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &limitedStream{ServerStream: ss, method: info.FullMethod, rules: s.rules})
}

type limitedStream struct {
	grpc.ServerStream
	method string
	rules  map[string]methodRule
}

func (l *limitedStream) RecvMsg(m any) error {
	if err := l.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return checkSize(l.rules, l.method, m)
}

// connState is one connection's binding to the identity that first
// called on it: a connection counts once against that identity's
// connection limit, until it closes.
type connState struct {
	mu     sync.Mutex
	closed bool
	names  map[string]func()
}

type connKey struct{}

// connTracker is a stats.Handler that gives each connection a connState
// (found by the tap handle in the stream's context) and releases its
// identities' connection counts when it closes.
type connTracker struct{}

func (connTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &connState{names: map[string]func(){}})
}

func (connTracker) HandleConn(ctx context.Context, st stats.ConnStats) {
	if _, ok := st.(*stats.ConnEnd); !ok {
		return
	}
	if c, ok := ctx.Value(connKey{}).(*connState); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.closed = true
		for name, release := range c.names {
			release()
			delete(c.names, name)
		}
	}
}

func (connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connTracker) HandleRPC(context.Context, stats.RPCStats)                       {}

// countConn counts ctx's connection against id once. A connection over
// the limit is not counted, and its calls are refused until one of the
// identity's other connections closes.
func (s *Server) countConn(ctx context.Context, id identity.Identity) error {
	c, ok := ctx.Value(connKey{}).(*connState)
	if !ok || s.gate == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.names[id.Name]; ok || c.closed {
		return nil
	}
	release, err := s.gate.AddConn(id)
	if err != nil {
		return err
	}
	c.names[id.Name] = release
	return nil
}
