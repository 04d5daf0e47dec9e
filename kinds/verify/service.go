package verify

import (
	"context"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// service is VerifyService: `arbiter verify --coordinator` opens a
// session with its first unit, waits on each unit, closes the session and
// reports what it found. The kind registers it (workload.Servicer); the
// methods and their admission rules are those the coordinator served
// before the kind moved here.
type service struct {
	arbiterv1.UnimplementedVerifyServiceServer
	w      *Workload
	caller func(context.Context) identity.Identity
}

// RegisterGRPC implements workload.Servicer: clients run, close and report
// sessions; a unit and a report batch are the largest requests.
func (w *Workload) RegisterGRPC(reg grpc.ServiceRegistrar, caller func(context.Context) identity.Identity) ([]string, []workload.Method) {
	arbiterv1.RegisterVerifyServiceServer(reg, &service{w: w, caller: caller})
	return []string{arbiterv1.VerifyService_ServiceDesc.ServiceName}, []workload.Method{
		{FullName: arbiterv1.VerifyService_RunVerifyUnit_FullMethodName, Role: identity.Client, MaxBytes: admission.MediumMessageBytes},
		{FullName: arbiterv1.VerifyService_CloseVerifySession_FullMethodName, Role: identity.Client, MaxBytes: admission.SmallMessageBytes},
		{FullName: arbiterv1.VerifyService_ReportVerifySession_FullMethodName, Role: identity.Client, MaxBytes: admission.VerifyReportBytes},
	}
}

func (vs *service) RunVerifyUnit(ctx context.Context, req *arbiterv1.RunVerifyUnitRequest) (*arbiterv1.RunVerifyUnitResponse, error) {
	if err := vs.w.ready(); err != nil {
		return nil, err
	}
	ans, err := vs.w.RunUnit(ctx, vs.caller(ctx), req.GetSessionId(), req.GetKey(), req.GetUnit(), req.GetWait().AsDuration())
	for _, jobID := range ans.Dropped {
		vs.w.endJobLeases(jobID)
	}
	if err != nil {
		return nil, err
	}
	resp := &arbiterv1.RunVerifyUnitResponse{UnitId: ans.UnitID, State: arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_PENDING,
		CapableWorkers: uint32(ans.Capable)}
	if ans.Result != nil {
		resp.State, resp.Result, resp.WorkerId = arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_DONE, ans.Result, ans.Worker
	}
	return resp, nil
}

func (vs *service) CloseVerifySession(ctx context.Context, req *arbiterv1.CloseVerifySessionRequest) (*arbiterv1.CloseVerifySessionResponse, error) {
	n, err := vs.w.CloseSession(vs.caller(ctx), req.GetSessionId())
	if err != nil {
		return nil, err
	}
	vs.w.endJobLeases(Prefix + req.GetSessionId())
	return &arbiterv1.CloseVerifySessionResponse{Dropped: uint32(n)}, nil
}

func (vs *service) ReportVerifySession(ctx context.Context, req *arbiterv1.ReportVerifySessionRequest) (*arbiterv1.ReportVerifySessionResponse, error) {
	if err := vs.w.ready(); err != nil {
		return nil, err
	}
	n, err := vs.w.Report(ctx, vs.caller(ctx), req.GetSessionId(), req.GetSummary(), req.GetFirstIndex(), req.GetPositions())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportVerifySessionResponse{Stored: uint32(n)}, nil
}
