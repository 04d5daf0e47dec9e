package grpcapi

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestEveryMethodHasARule keeps the admission table complete for the
// built-in services: a method added to a service without a rule would be
// refused at the tap handle; a rule for a method no service serves is
// dead.
func TestEveryMethodHasARule(t *testing.T) {
	served := map[string]bool{}
	for _, sd := range []grpc.ServiceDesc{arbiterv1.WorkerService_ServiceDesc, arbiterv1.JobService_ServiceDesc,
		arbiterv1.AdminService_ServiceDesc, arbiterv1.ArtifactService_ServiceDesc} {
		for _, m := range sd.Methods {
			served["/"+sd.ServiceName+"/"+m.MethodName] = true
		}
		for _, s := range sd.Streams {
			served["/"+sd.ServiceName+"/"+s.StreamName] = true
		}
	}
	table := admission.NewTable()
	for m := range served {
		if _, ok := table.Rule(admission.GRPC, m); !ok {
			t.Errorf("method %s has no rule in the admission table", m)
		}
	}
	for _, m := range table.Routes(admission.GRPC) {
		r, _ := table.Rule(admission.GRPC, m)
		if !served[m] {
			t.Errorf("the admission table lists %s, which no built-in service serves", m)
		}
		if r.MaxBytes <= 0 || r.MaxBytes > MaxRecvMsgBytes {
			t.Errorf("%s: limit %d outside (0, MaxRecvMsgBytes]", m, r.MaxBytes)
		}
	}
	if r, _ := table.Rule(admission.GRPC, arbiterv1.ArtifactService_Upload_FullMethodName); r.MaxBytes < artifacts.ChunkBytes+1024 {
		t.Errorf("Upload's limit %d does not fit a chunk of %d bytes", r.MaxBytes, artifacts.ChunkBytes)
	}
}

// TestPluggedMethodRules: a plugged-in kind's rule for its method is the
// one admitted at the tap (its role, its limit within the server's), and
// a method it does not describe is not served.
func TestPluggedMethodRules(t *testing.T) {
	srv := grpc.NewServer()
	arbiterv1.RegisterDatagenServiceServer(srv, arbiterv1.UnimplementedDatagenServiceServer{})
	rules, err := rulesFor(srv, admission.NewTable(), []workload.Method{{FullName: arbiterv1.DatagenService_DownloadShards_FullMethodName, Role: identity.Client, MaxBytes: 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	r := rules[arbiterv1.DatagenService_DownloadShards_FullMethodName]
	if r.Role != admission.Client || r.MaxBytes != MaxRecvMsgBytes {
		t.Errorf("declared rule: %+v, want the client role and the server's limit", r)
	}
	w := identity.Identity{Name: "w", Role: identity.Worker}
	if err := admit(rules, w, arbiterv1.DatagenService_DownloadShards_FullMethodName); err == nil {
		t.Error("a worker credential admitted to a client method of a plugged-in service")
	}
	undescribed, err := rulesFor(srv, admission.NewTable(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := admit(undescribed, w, arbiterv1.DatagenService_DownloadShards_FullMethodName); grpcerr.Code(err) != codes.Unimplemented {
		t.Errorf("a method without a rule: %v, want Unimplemented (not served)", err)
	}
}

func TestAdmitByRole(t *testing.T) {
	w := identity.Identity{Name: "w", Role: identity.Worker}
	c := identity.Identity{Name: "c", Role: identity.Client}
	a := identity.Identity{Name: "a", Role: identity.Admin}
	for _, tc := range []struct {
		id     identity.Identity
		method string
		ok     bool
	}{
		{w, arbiterv1.WorkerService_Submit_FullMethodName, true},
		{w, arbiterv1.JobService_SubmitMatch_FullMethodName, false},
		{w, arbiterv1.ArtifactService_Upload_FullMethodName, false},
		{c, arbiterv1.WorkerService_Submit_FullMethodName, false},
		{c, arbiterv1.JobService_SubmitMatch_FullMethodName, true},
		{c, arbiterv1.AdminService_CreateCredential_FullMethodName, false},
		{a, arbiterv1.AdminService_CreateCredential_FullMethodName, true},
		{a, arbiterv1.WorkerService_Submit_FullMethodName, true},
		{a, arbiterv1.JobService_SubmitMatch_FullMethodName, true},
	} {
		err := admit(builtinRules(), tc.id, tc.method)
		if (err == nil) != tc.ok {
			t.Errorf("%s calling %s: %v, want allowed=%v", tc.id.Role, tc.method, err, tc.ok)
		}
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonWrongRole {
			t.Errorf("%s calling %s: reason %q, want WRONG_ROLE", tc.id.Role, tc.method, apierr.ReasonOf(err))
		}
	}
	if err := admit(builtinRules(), a, "/arbiter.v1.JobService/Nope"); grpcerr.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v, want Unimplemented", err)
	}
}

func builtinRules() map[string]admission.Rule {
	t := admission.NewTable()
	out := map[string]admission.Rule{}
	for _, m := range t.Routes(admission.GRPC) {
		out[m], _ = t.Rule(admission.GRPC, m)
	}
	return out
}

// TestCallSlotFreedBeforeTheAnswer: a unary call's slot among its
// identity's calls in progress is free once its handler's interceptor
// returns, before the answer is sent and the call's context ends; so a
// client that waits for each answer is never refused for calls it has
// finished (a burst at the limit's edge was, when only the context's end
// freed the slot).
func TestCallSlotFreedBeforeTheAnswer(t *testing.T) {
	adm, err := admission.New(admission.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{gate: quota.NewGate(quota.Limits{Calls: 1}, nil), rules: builtinRules(), adm: adm,
		refusedN: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused"}, []string{"reason"})}
	client := identity.Identity{Name: "c", Role: identity.Client}
	method := arbiterv1.JobService_SubmitPerft_FullMethodName
	callCtx, endCall := context.WithCancel(context.Background())
	defer endCall()
	ctx, err := s.admit(callCtx, client, method)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.admit(context.Background(), client, method); grpcerr.Reason(err) != apierr.ReasonQuota {
		t.Fatalf("a second call during the first: %v, want refused by the quota of 1", err)
	}
	answer, err := s.limitUnary(ctx, &arbiterv1.SubmitPerftRequest{}, &grpc.UnaryServerInfo{FullMethod: method},
		func(context.Context, any) (any, error) { return &arbiterv1.SubmitPerftResponse{}, nil })
	if err != nil || answer == nil {
		t.Fatalf("handler: %v, %v", answer, err)
	}
	next, err := s.admit(context.Background(), client, method)
	if err != nil {
		t.Fatalf("the next call, after the first's handler returned and before its context ended: %v", err)
	}
	releaseCallSlot(next)
}
