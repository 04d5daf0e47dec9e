package datagen

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// service is DatagenService: a dataset's shards for `arbiter datagen pull`.
type service struct {
	arbiterv1.UnimplementedDatagenServiceServer
	w      *Workload
	caller func(context.Context) identity.Identity
}

// RegisterGRPC implements workload.Servicer: clients read datasets, with
// requests of a few ids.
func (w *Workload) RegisterGRPC(reg grpc.ServiceRegistrar, caller func(context.Context) identity.Identity) ([]string, []workload.Method) {
	arbiterv1.RegisterDatagenServiceServer(reg, &service{w: w, caller: caller})
	return []string{arbiterv1.DatagenService_ServiceDesc.ServiceName},
		[]workload.Method{{FullName: arbiterv1.DatagenService_DownloadShards_FullMethodName, Role: identity.Client, MaxBytes: 64 << 10}}
}

// DownloadShards streams a dataset's shards from index From on, each with
// what of it counts (dropped duplicates, the cut of the last).
func (s *service) DownloadShards(req *arbiterv1.DownloadShardsRequest, stream arbiterv1.DatagenService_DownloadShardsServer) error {
	ctx := stream.Context()
	if id := s.caller(ctx); !id.CanSubmit() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s has role %s, which may not read datasets",
			apierr.Q(id.Name), id.Role)
	}
	w := s.w
	w.mu.Lock()
	j := w.jobs[req.GetJobId()]
	var total int64
	if j != nil {
		total = j.shardSeq
	}
	w.mu.Unlock()
	if j == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "dataset %s: no such job", apierr.Q(req.GetJobId()))
	}
	w.mu.Lock()
	expired := j.expired
	w.mu.Unlock()
	if !expired.IsZero() {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "dataset %s: its shards were deleted on %s by the coordinator's retention (--pgn-retention); its counts stay",
			j.rec.ID, expired.UTC().Format(time.RFC3339))
	}
	if req.GetFrom() > uint64(total) {
		return apierr.Invalid("from: %d: the dataset has %d shards", req.GetFrom(), total)
	}
	// Rows are read a page at a time so that a large dataset is not held
	// in memory at once.
	const page = 64
	for from := int64(req.GetFrom()); from < total; from += page {
		rows, err := loadShards(ctx, w.store, j.rec.ID, from, page)
		if err != nil {
			return apierr.Store(err)
		}
		for i := range rows {
			r := &rows[i]
			if r.Seq >= total {
				return nil
			}
			data, err := w.readShard(r.SHA256)
			if err != nil {
				return apierr.Store(fmt.Errorf("shard %d: %w", r.Seq, err))
			}
			if err := stream.Send(&arbiterv1.DownloadShardsResponse{Index: uint64(r.Seq), Sha256: r.SHA256, Data: data,
				Positions: r.Positions, Take: r.Take, Shards: uint64(total), Dropped: r.Dropped}); err != nil {
				return err
			}
		}
	}
	return nil
}
