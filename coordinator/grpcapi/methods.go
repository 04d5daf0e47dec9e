package grpcapi

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
)

// Per-method rules. The role and byte limit of every method are in the
// one admission table (package admission, routes.go); plugged-in kinds
// add theirs from workload.Method. grpc-go has one receive limit per
// server (grpc.MaxRecvMsgSize), checked against a message's length prefix
// before it allocates, and none per method; a unary request is decoded
// before any interceptor runs. So:
//   - the role is checked in the tap handle before the body, so only the
//     methods a caller may call can make it read their bodies at all;
//   - the tap reserves the method's limit from the admission byte budget
//     (per identity and in all) before grpc-go reads the body, and the
//     call is refused RESOURCE_EXHAUSTED (BUSY, naming the flag) when the
//     budget is spent: what callers can make the coordinator hold in
//     requests is bounded by the budget, not by calls × 16 MiB;
//   - once decoded, the reservation shrinks to the request's size (kept
//     while the handler runs) and is released when the call ends;
//   - each method's own limit is checked on the decoded message and
//     refused with RESOURCE_EXHAUSTED naming the method and limit before
//     the handler sees it, so nothing a handler keeps comes from an
//     oversized request.

// rulesFor is the admission table's rule of every method srv serves,
// with the rules the plugged-in kinds give their services' methods added
// to the table. A served method without a rule has none in the map and
// is refused at the tap (not served): every method is admitted by an
// explicit rule.
func rulesFor(srv *grpc.Server, table *admission.Table, plugged []workload.Method) (map[string]admission.Rule, error) {
	for _, m := range plugged {
		role, err := admission.RoleOf(m.Role)
		if err != nil {
			return nil, fmt.Errorf("grpcapi: method %s: %w", m.FullName, err)
		}
		rule := admission.Rule{Role: role, MaxBytes: int64(min(max(m.MaxBytes, 1), MaxRecvMsgBytes))}
		if err := table.Add(admission.Route{Door: admission.GRPC, Name: m.FullName}, rule); err != nil {
			return nil, fmt.Errorf("grpcapi: %w", err)
		}
	}
	rules := map[string]admission.Rule{}
	for name, info := range srv.GetServiceInfo() {
		for _, m := range info.Methods {
			full := "/" + name + "/" + m.Name
			if r, ok := table.Rule(admission.GRPC, full); ok {
				rules[full] = r
			}
		}
	}
	return rules, nil
}

// admit checks id's role for method from the headers alone.
func admit(rules map[string]admission.Rule, id identity.Identity, method string) error {
	r, ok := rules[method]
	if !ok {
		return grpcerr.Status(codes.Unimplemented, apierr.ReasonBadInput,
			fmt.Sprintf("method %s: not served by this coordinator (no admission rule)", apierr.Q(method))).Err()
	}
	if !r.Role.Allows(id, true) {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s; %s needs the %s role", apierr.Q(id.Name), id.Role, method, r.Role)
	}
	return nil
}

func tooLarge(method string, size, limit int) error {
	return apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
		"%s: a request of %d bytes, this method takes at most %d", method, size, limit)
}

// checkSize refuses a decoded message over its method's limit and
// returns its size.
func checkSize(rules map[string]admission.Rule, method string, m any) (int, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return 0, nil
	}
	limit := MaxRecvMsgBytes
	if r, ok := rules[method]; ok {
		limit = int(r.MaxBytes)
	}
	n := proto.Size(pm)
	if n > limit {
		return n, tooLarge(method, n, limit)
	}
	return n, nil
}

type reservationKey struct{}

// reservation is the byte reservation the tap made for ctx's call (nil
// without one).
func reservation(ctx context.Context) *admission.Reservation {
	r, _ := ctx.Value(reservationKey{}).(*admission.Reservation)
	return r
}

type callSlotKey struct{}

// releaseCallSlot uncounts ctx's call from its identity's calls in
// progress (a no-op without a slot, and after the first time).
func releaseCallSlot(ctx context.Context) {
	if release, ok := ctx.Value(callSlotKey{}).(func()); ok {
		release()
	}
}

// limitUnary refuses a decoded request over its method's limit, and
// keeps of the call's reservation only the decoded request's size while
// the handler runs (a long-polling Lease holds bytes, not 256 KiB).
func (s *Server) limitUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	res := reservation(ctx)
	defer res.Release()
	defer releaseCallSlot(ctx)
	n, err := checkSize(s.rules, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	res.Shrink(int64(n))
	return h(ctx, req)
}

// limitStream refuses every received message over its method's limit. A
// stream that receives one message (server streaming) gives back its
// reservation once that message is decoded; one that receives many
// (uploads) keeps it, since each message is read up to the limit.
func (s *Server) limitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	res := reservation(ss.Context())
	defer res.Release()
	defer releaseCallSlot(ss.Context())
	return h(srv, &limitedStream{ServerStream: ss, method: info.FullMethod, rules: s.rules, res: res, oneMessage: !info.IsClientStream})
}

type limitedStream struct {
	grpc.ServerStream
	method     string
	rules      map[string]admission.Rule
	res        *admission.Reservation
	oneMessage bool
}

func (l *limitedStream) RecvMsg(m any) error {
	if err := l.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	_, err := checkSize(l.rules, l.method, m)
	if l.oneMessage {
		l.res.Release()
	}
	return err
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
