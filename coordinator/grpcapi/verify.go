package grpcapi

import (
	"context"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/verifyjob"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

type verifyService struct {
	arbiterv1.UnimplementedVerifyServiceServer
	s      *Server
	core   *core.Core
	verify *verifyjob.Workload
}

func (vs *verifyService) RunVerifyUnit(ctx context.Context, req *arbiterv1.RunVerifyUnitRequest) (*arbiterv1.RunVerifyUnitResponse, error) {
	if err := vs.core.Ready(); err != nil {
		return nil, err
	}
	ans, err := vs.verify.RunUnit(ctx, caller(ctx), req.GetSessionId(), req.GetKey(), req.GetUnit(), req.GetWait().AsDuration())
	for _, jobID := range ans.Dropped {
		vs.core.EndJobLeases(jobID)
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

func (vs *verifyService) CloseVerifySession(ctx context.Context, req *arbiterv1.CloseVerifySessionRequest) (*arbiterv1.CloseVerifySessionResponse, error) {
	n, err := vs.verify.CloseSession(caller(ctx), req.GetSessionId())
	if err != nil {
		return nil, err
	}
	vs.core.EndJobLeases(verifyjob.Prefix + req.GetSessionId())
	return &arbiterv1.CloseVerifySessionResponse{Dropped: uint32(n)}, nil
}

func (vs *verifyService) ReportVerifySession(ctx context.Context, req *arbiterv1.ReportVerifySessionRequest) (*arbiterv1.ReportVerifySessionResponse, error) {
	if err := vs.core.Ready(); err != nil {
		return nil, err
	}
	n, err := vs.verify.Report(ctx, caller(ctx), req.GetSessionId(), req.GetSummary(), req.GetFirstIndex(), req.GetPositions())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportVerifySessionResponse{Stored: uint32(n)}, nil
}
