package grpcapi

import (
	"context"
	"errors"
	"io"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

type artifactService struct {
	arbiterv1.UnimplementedArtifactServiceServer
	s    *Server
	core *core.Core
	arts *artifacts.Store
}

func (as *artifactService) proto(a *store.Artifact) *arbiterv1.Artifact {
	p := artifacts.Proto(a, as.arts.UsedBy(a.SHA256))
	p.DefaultFor = as.arts.DefaultOf(a.SHA256)
	return p
}

func (as *artifactService) BeginUpload(ctx context.Context, req *arbiterv1.BeginUploadRequest) (*arbiterv1.BeginUploadResponse, error) {
	a, offset, err := as.arts.BeginUpload(caller(ctx), req)
	if err != nil {
		return nil, err
	}
	resp := &arbiterv1.BeginUploadResponse{Offset: uint64(offset), ChunkBytes: artifacts.ChunkBytes}
	if a != nil {
		resp.Artifact = as.proto(a)
	}
	return resp, nil
}

func (as *artifactService) Upload(stream arbiterv1.ArtifactService_UploadServer) error {
	ctx := stream.Context()
	a, have, err := as.arts.Upload(ctx, caller(ctx), func() (string, int64, []byte, error) {
		req, err := stream.Recv()
		if err != nil {
			return "", 0, nil, err
		}
		return req.GetSha256(), int64(req.GetOffset()), req.GetData(), nil
	})
	if err != nil {
		return err
	}
	resp := &arbiterv1.UploadResponse{Offset: uint64(have)}
	if a != nil {
		resp.Artifact = as.proto(a)
	}
	return stream.SendAndClose(resp)
}

func (as *artifactService) GetArtifact(ctx context.Context, req *arbiterv1.GetArtifactRequest) (*arbiterv1.GetArtifactResponse, error) {
	if err := mayRead(caller(ctx)); err != nil {
		return nil, err
	}
	a, err := as.arts.Resolve(req.GetSha256())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.GetArtifactResponse{Artifact: as.proto(a)}, nil
}

func (as *artifactService) ListArtifacts(ctx context.Context, req *arbiterv1.ListArtifactsRequest) (*arbiterv1.ListArtifactsResponse, error) {
	if err := mayRead(caller(ctx)); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = 100
	}
	list, total := as.arts.List(limit, req.GetKind())
	resp := &arbiterv1.ListArtifactsResponse{BytesStored: uint64(total)}
	for _, a := range list {
		resp.Artifacts = append(resp.Artifacts, as.proto(a))
	}
	return resp, nil
}

func (as *artifactService) DeleteArtifact(ctx context.Context, req *arbiterv1.DeleteArtifactRequest) (*arbiterv1.DeleteArtifactResponse, error) {
	if err := as.arts.Delete(ctx, caller(ctx), req.GetSha256()); err != nil {
		return nil, err
	}
	return &arbiterv1.DeleteArtifactResponse{}, nil
}

func (as *artifactService) Download(req *arbiterv1.DownloadRequest, stream arbiterv1.ArtifactService_DownloadServer) error {
	f, a, err := as.arts.Open(caller(stream.Context()), req.GetSha256(), int64(req.GetOffset()))
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, artifacts.ChunkBytes)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if err := stream.Send(&arbiterv1.DownloadResponse{Data: buf[:n], Size: uint64(a.Size)}); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return apierr.New(apierr.Internal, apierr.ReasonStore, "artifact file: %v", err)
		}
	}
}

func (as *artifactService) ReportArtifact(ctx context.Context, req *arbiterv1.ReportArtifactRequest) (*arbiterv1.ReportArtifactResponse, error) {
	id := caller(ctx)
	if !id.CanWork() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not report for workers",
			apierr.Q(id.Name), id.Role)
	}
	w, ok := as.core.Worker(req.GetWorkerId())
	if !ok {
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownWorker, "worker %s is not registered", apierr.Q(req.GetWorkerId()))
	}
	if w.Owner != id.Name && !id.IsAdmin() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "worker %s belongs to another identity", apierr.Q(req.GetWorkerId()))
	}
	if _, ok := as.core.JobRef(req.GetJobId()); !ok {
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "test %s not found", apierr.Q(req.GetJobId()))
	}
	const maxLog = 8 << 10
	log := req.GetLog()
	if len(log) > maxLog {
		log = "…" + log[len(log)-maxLog:]
	}
	for _, f := range []struct{ name, v string }{{"engine", req.GetEngine()}, {"sha256", req.GetSha256()}, {"detail", req.GetDetail()}} {
		if len(f.v) > 2048 {
			return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "%s: over 2048 bytes", f.name)
		}
	}
	err := as.arts.Report(ctx, &store.ArtifactCheck{JobID: req.GetJobId(), WorkerID: w.ID, WorkerName: w.Name, Engine: req.GetEngine(),
		SHA256: req.GetSha256(), State: int32(req.GetState()), Detail: req.GetDetail(), Log: log, Bench: req.GetBench()})
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportArtifactResponse{}, nil
}

func (as *artifactService) SetDefaultNet(ctx context.Context, req *arbiterv1.SetDefaultNetRequest) (*arbiterv1.SetDefaultNetResponse, error) {
	a, err := as.arts.SetDefaultNet(ctx, caller(ctx), req.GetEngine(), req.GetSha256())
	if err != nil {
		return nil, err
	}
	resp := &arbiterv1.SetDefaultNetResponse{}
	if a != nil {
		resp.Artifact = as.proto(a)
	}
	return resp, nil
}
