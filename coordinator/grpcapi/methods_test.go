package grpcapi

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/grpcerr"
	"github.com/arbiter-chess/arbiter/internal/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestEveryMethodHasARule keeps methodRules complete: a method added to a
// service without a rule would be refused at the tap handle.
func TestEveryMethodHasARule(t *testing.T) {
	served := map[string]bool{}
	for _, sd := range []grpc.ServiceDesc{arbiterv1.WorkerService_ServiceDesc, arbiterv1.JobService_ServiceDesc,
		arbiterv1.VerifyService_ServiceDesc, arbiterv1.AdminService_ServiceDesc, arbiterv1.ArtifactService_ServiceDesc} {
		for _, m := range sd.Methods {
			served["/"+sd.ServiceName+"/"+m.MethodName] = true
		}
		for _, s := range sd.Streams {
			served["/"+sd.ServiceName+"/"+s.StreamName] = true
		}
	}
	for m := range served {
		if _, ok := methodRules[m]; !ok {
			t.Errorf("method %s has no rule in methodRules", m)
		}
	}
	for m, r := range methodRules {
		if !served[m] {
			t.Errorf("methodRules lists %s, which no service serves", m)
		}
		if r.maxBytes <= 0 || r.maxBytes > MaxRecvMsgBytes {
			t.Errorf("%s: limit %d outside (0, MaxRecvMsgBytes]", m, r.maxBytes)
		}
	}
}

// TestPluggedMethodRules: a plugged-in kind's rule for its method is the
// one admitted at the tap (its role, its limit within the server's), and a
// method it does not describe admits any credential.
func TestPluggedMethodRules(t *testing.T) {
	srv := grpc.NewServer()
	arbiterv1.RegisterDatagenServiceServer(srv, arbiterv1.UnimplementedDatagenServiceServer{})
	rules := rulesFor(srv, []workload.Method{{FullName: arbiterv1.DatagenService_DownloadShards_FullMethodName, Role: identity.Client, MaxBytes: 1 << 40}})
	r := rules[arbiterv1.DatagenService_DownloadShards_FullMethodName]
	if r.role != client || r.maxBytes != MaxRecvMsgBytes {
		t.Errorf("declared rule: %+v, want the client role and the server's limit", r)
	}
	w := identity.Identity{Name: "w", Role: identity.Worker}
	if err := admit(rules, w, arbiterv1.DatagenService_DownloadShards_FullMethodName); err == nil {
		t.Error("a worker credential admitted to a client method of a plugged-in service")
	}
	if r := rulesFor(srv, nil)[arbiterv1.DatagenService_DownloadShards_FullMethodName]; r.role != anyRole {
		t.Errorf("undescribed method: %+v, want any role", r)
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
		err := admit(methodRules, tc.id, tc.method)
		if (err == nil) != tc.ok {
			t.Errorf("%s calling %s: %v, want allowed=%v", tc.id.Role, tc.method, err, tc.ok)
		}
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonWrongRole {
			t.Errorf("%s calling %s: reason %q, want WRONG_ROLE", tc.id.Role, tc.method, apierr.ReasonOf(err))
		}
	}
	if err := admit(methodRules, a, "/arbiter.v1.JobService/Nope"); grpcerr.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v, want Unimplemented", err)
	}
}
