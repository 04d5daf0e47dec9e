package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

type workerService struct {
	arbiterv1.UnimplementedWorkerServiceServer
	s    *Server
	core *core.Core
}

// CapsFromProto reads a worker's capabilities.
func CapsFromProto(c *arbiterv1.WorkerCapabilities) core.Caps {
	return core.Caps{Cores: c.GetCores(), HashMB: c.GetHashMb(), EngineVersion: c.GetEngineVersion(), Hostname: c.GetHostname(),
		Tags: c.GetCapabilities(), BenchNPS: c.GetBenchNps(), BenchSig: c.GetBenchSignature(), Platform: c.GetPlatform()}
}

// CapsProto renders a worker's capabilities.
func CapsProto(c core.Caps) *arbiterv1.WorkerCapabilities {
	return &arbiterv1.WorkerCapabilities{Cores: c.Cores, HashMb: c.HashMB, EngineVersion: c.EngineVersion, Hostname: c.Hostname,
		Capabilities: c.Tags, BenchNps: c.BenchNPS, BenchSignature: c.BenchSig, Platform: c.Platform}
}

func (ws *workerService) Register(ctx context.Context, req *arbiterv1.RegisterRequest) (*arbiterv1.RegisterResponse, error) {
	if req.GetCapabilities() == nil {
		return nil, apierr.Invalid("capabilities missing")
	}
	w, err := ws.core.Register(ctx, caller(ctx), req.GetName(), CapsFromProto(req.GetCapabilities()))
	if err != nil {
		return nil, err
	}
	return &arbiterv1.RegisterResponse{
		WorkerId:          w.ID,
		LeaseDuration:     durationpb.New(ws.core.LeaseDuration()),
		HeartbeatInterval: durationpb.New(ws.core.HeartbeatInterval()),
	}, nil
}

func (ws *workerService) Lease(ctx context.Context, req *arbiterv1.LeaseRequest) (*arbiterv1.LeaseResponse, error) {
	g, ok, err := ws.core.Lease(ctx, caller(ctx), req.GetWorkerId(), req.GetWait().AsDuration())
	if err != nil {
		return nil, err
	}
	if !ok {
		retry := core.MaxLeaseWait / 100
		if req.GetWait().AsDuration() <= 0 {
			retry = core.MaxLeaseWait / 10
		}
		return &arbiterv1.LeaseResponse{RetryAfter: durationpb.New(retry)}, nil
	}
	unit, _ := g.Payload.(*arbiterv1.WorkUnit)
	return &arbiterv1.LeaseResponse{Lease: &arbiterv1.Lease{
		LeaseId: g.Lease.ID, Deadline: timestamppb.New(g.Lease.Deadline), Unit: unit,
	}}, nil
}

var heldStates = map[core.HeldState]arbiterv1.LeaseState{
	core.HeldActive:    arbiterv1.LeaseState_LEASE_STATE_ACTIVE,
	core.HeldLost:      arbiterv1.LeaseState_LEASE_STATE_LOST,
	core.HeldCancelled: arbiterv1.LeaseState_LEASE_STATE_CANCELLED,
}

func (ws *workerService) Heartbeat(ctx context.Context, req *arbiterv1.HeartbeatRequest) (*arbiterv1.HeartbeatResponse, error) {
	held := make([]core.Held, 0, min(len(req.GetLeases()), core.MaxHeldLeases+1))
	for i, h := range req.GetLeases() {
		if i > core.MaxHeldLeases {
			break // the core refuses the whole heartbeat
		}
		held = append(held, core.Held{LeaseID: h.GetLeaseId(), UnitID: h.GetUnitId()})
	}
	sts, err := ws.core.Heartbeat(ctx, caller(ctx), req.GetWorkerId(), held)
	if err != nil {
		return nil, err
	}
	resp := &arbiterv1.HeartbeatResponse{Leases: make([]*arbiterv1.LeaseStatus, len(sts))}
	for i, st := range sts {
		ls := &arbiterv1.LeaseStatus{LeaseId: st.LeaseID, State: heldStates[st.State]}
		if st.State == core.HeldActive {
			ls.Deadline = timestamppb.New(st.Deadline)
		}
		resp.Leases[i] = ls
	}
	return resp, nil
}

var verdicts = map[core.Verdict]arbiterv1.SubmitOutcome{
	core.Accepted:  arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED,
	core.Duplicate: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE,
	core.Mismatch:  arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH,
	core.Discarded: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED,
}

func (ws *workerService) Submit(ctx context.Context, req *arbiterv1.SubmitRequest) (*arbiterv1.SubmitResponse, error) {
	var result any
	switch r := req.GetResult().(type) {
	case *arbiterv1.SubmitRequest_Perft:
		result = r.Perft
	case *arbiterv1.SubmitRequest_GamePairs:
		result = r.GamePairs
	case *arbiterv1.SubmitRequest_Verify:
		result = r.Verify
	case *arbiterv1.SubmitRequest_Plugin:
		result = r.Plugin
	default:
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "result missing")
	}
	v, err := ws.core.Submit(ctx, caller(ctx), req.GetWorkerId(), req.GetLeaseId(), req.GetUnitId(), result, req.GetElapsed().AsDuration())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitResponse{Outcome: verdicts[v]}, nil
}

func (ws *workerService) Release(ctx context.Context, req *arbiterv1.ReleaseRequest) (*arbiterv1.ReleaseResponse, error) {
	err := ws.core.Release(ctx, caller(ctx), req.GetWorkerId(), req.GetLeaseId(), req.GetReason(), req.GetCannotRun())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReleaseResponse{}, nil
}
