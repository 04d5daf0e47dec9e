package coordinator

import (
	"context"
	"errors"
	"math"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/coordinator/perftsplit"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// JobServer is the coordinator's JobService.
type JobServer struct {
	arbiterv1.UnimplementedJobServiceServer
	c *Coordinator
}

// JobServer returns the JobService implementation.
func (c *Coordinator) JobServer() *JobServer { return &JobServer{c: c} }

// SubmitPerft implements JobService.
func (s *JobServer) SubmitPerft(ctx context.Context, req *arbiterv1.SubmitPerftRequest) (*arbiterv1.SubmitPerftResponse, error) {
	j, err := s.c.SubmitPerft(ctx, req.GetSpec())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitPerftResponse{Job: j}, nil
}

// SubmitPerft validates, splits and stores a perft job.
func (c *Coordinator) SubmitPerft(ctx context.Context, spec *arbiterv1.PerftSpec) (*arbiterv1.Job, error) {
	if spec == nil {
		return nil, status.Error(codes.InvalidArgument, "spec missing")
	}
	fen := spec.GetFen()
	if fen == "" {
		fen = engine.StartFEN
	}
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "invalid FEN %q: %v", fen, err)
	}
	if spec.GetChess960() {
		pos.SetChess960(true)
	}
	depth := int(spec.GetDepth())
	if depth > perftsplit.MaxDepth {
		return nil, status.Errorf(codes.InvalidArgument, "depth %d out of range 0..%d", depth, perftsplit.MaxDepth)
	}
	verify := spec.GetVerifyFraction()
	if verify == 0 {
		verify = c.cfg.VerifyDefault
	}
	if math.IsNaN(verify) || verify < 0 || verify > 1 {
		return nil, status.Errorf(codes.InvalidArgument, "verify fraction %v out of range 0..1", spec.GetVerifyFraction())
	}
	split := int(spec.GetSplitPly())
	if split == 0 {
		split = perftsplit.ChooseSplitPly(depth)
	} else if depth == 0 || split > depth || split > perftsplit.MaxSplitPly {
		return nil, status.Errorf(codes.InvalidArgument, "split ply %d out of range 1..%d for depth %d",
			split, min(depth, perftsplit.MaxSplitPly), depth)
	}

	id := "p" + randomHex(6)
	now := c.cfg.Now()
	rec := &store.Job{
		ID: id, Kind: "perft", FEN: pos.FEN(), Depth: depth, SplitPly: split, Verify: verify,
		Chess960: pos.IsChess960(), State: store.StateRunning, CreatedAt: now, RootMoves: []string{},
	}
	var positions []store.Position
	var units []store.Unit
	if depth == 0 {
		rec.State, rec.FinishedAt, rec.Total, rec.Divide = store.StateDone, now, "1", []string{}
	} else {
		plan, err := perftsplit.Split(pos, depth, split)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%v", err)
		}
		rec.RootMoves = plan.RootMoves
		target := c.cfg.TargetUnitDuration.Seconds() * c.cfg.NominalNodesPerSecond
		for _, p := range plan.Positions {
			m := make([]store.RootMult, len(p.Mult))
			for i, r := range p.Mult {
				m[i] = store.RootMult{Root: r.Root, N: r.N}
			}
			positions = append(positions, store.Position{FEN: p.FEN, Mult: m})
		}
		for i, r := range plan.Batch(target, c.cfg.MinUnits, c.cfg.MaxPositionsPerUnit) {
			uid := unitID(id, i)
			units = append(units, store.Unit{ID: uid, JobID: id, Idx: i, First: r.First, End: r.End, Verify: verifyUnit(i, verify)})
		}
		rec.UnitsTotal, rec.Positions = len(units), len(positions)
		if len(units) == 0 {
			// Every line ends (mate or stalemate) before the split ply.
			rec.State, rec.FinishedAt, rec.Total = store.StateDone, now, "0"
			rec.Divide = make([]string, len(rec.RootMoves))
			for i := range rec.Divide {
				rec.Divide[i] = "0"
			}
		}
	}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	if err := c.store.CreateJob(ctx, rec, positions, units); err != nil {
		return nil, status.Errorf(codes.Unavailable, "store: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	j := &jobState{rec: rec, positions: positions, changed: make(chan struct{}), started: now}
	j.divide = newDivide(len(rec.RootMoves))
	for _, ur := range units {
		u := &unitState{job: j, rec: ur, queued: true}
		u.v = judge(nil, c.required(u), c.cfg.MaxRuns)
		j.units = append(j.units, u)
		j.queue = append(j.queue, u)
		c.units[ur.ID] = u
	}
	c.jobs[id] = j
	c.order = append(c.order, j)
	c.signalWork()
	c.log.Info("job submitted", zap.String(logging.JobID, id), zap.String("fen", rec.FEN), zap.Int("depth", depth),
		zap.Int("split_ply", split), zap.Int("positions", len(positions)), zap.Int("units", len(units)),
		zap.Float64("verify", verify), zap.Bool("chess960", rec.Chess960))
	return c.jobProto(j, true), nil
}

func unitID(jobID string, i int) string {
	return jobID + "." + itoa(i)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = digits[i%10]
		i /= 10
	}
	return string(b[n:])
}

// jobProto renders a snapshot. Caller holds mu.
func (c *Coordinator) jobProto(j *jobState, withDivide bool) *arbiterv1.Job {
	r := j.rec
	out := &arbiterv1.Job{
		JobId: r.ID,
		State: stateProto(r.State),
		Perft: &arbiterv1.PerftSpec{Fen: r.FEN, Depth: uint32(r.Depth), SplitPly: uint32(r.SplitPly),
			VerifyFraction: r.Verify, Chess960: r.Chess960},
		Error:     r.Error,
		CreatedAt: timestamppb.New(r.CreatedAt),
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	p := &arbiterv1.JobProgress{
		UnitsTotal: uint64(r.UnitsTotal), Positions: uint64(r.Positions),
		UnitsDone: uint64(j.settled), UnitsVerified: uint64(j.verified),
		Mismatches: uint64(j.disputed), MismatchesSettled: uint64(j.resolved),
		NodesDone: j.nodesDone.String(),
	}
	if r.State == store.StateDone {
		p.UnitsDone, p.NodesDone = uint64(r.UnitsTotal), r.Total
		out.Nodes = r.Total
		if withDivide {
			for i, m := range r.RootMoves {
				d := "0"
				if i < len(r.Divide) {
					d = r.Divide[i]
				}
				out.Divide = append(out.Divide, &arbiterv1.DivideEntry{Move: m, Nodes: d})
			}
		}
	}
	if r.State == store.StateRunning {
		seen := make(map[string]bool)
		for _, u := range j.units {
			for _, l := range c.leases.ForUnit(u.rec.ID) {
				seen[l.WorkerID] = true
			}
		}
		p.ActiveWorkers = uint32(len(seen))
	}
	out.Progress = p
	if j.test != nil {
		c.testProto(j, out)
	}
	return out
}

func stateProto(s string) arbiterv1.JobState {
	switch s {
	case store.StateRunning:
		return arbiterv1.JobState_JOB_STATE_RUNNING
	case store.StateDone:
		return arbiterv1.JobState_JOB_STATE_DONE
	case store.StateFailed:
		return arbiterv1.JobState_JOB_STATE_FAILED
	case store.StateCancelled:
		return arbiterv1.JobState_JOB_STATE_CANCELLED
	}
	return arbiterv1.JobState_JOB_STATE_UNSPECIFIED
}

func (c *Coordinator) job(id string) (*jobState, error) {
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "job id missing")
	}
	j := c.jobs[id]
	if j == nil {
		return nil, status.Errorf(codes.NotFound, "unknown job %q", id)
	}
	return j, nil
}

// GetJob implements JobService.
func (s *JobServer) GetJob(ctx context.Context, req *arbiterv1.GetJobRequest) (*arbiterv1.GetJobResponse, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	j, err := c.job(req.GetJobId())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.GetJobResponse{Job: c.jobProto(j, true)}, nil
}

// ListJobs implements JobService.
func (s *JobServer) ListJobs(ctx context.Context, req *arbiterv1.ListJobsRequest) (*arbiterv1.ListJobsResponse, error) {
	c := s.c
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = 100
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &arbiterv1.ListJobsResponse{}
	for i := len(c.order) - 1; i >= 0 && len(resp.Jobs) < limit; i-- {
		resp.Jobs = append(resp.Jobs, c.jobProto(c.order[i], false))
	}
	return resp, nil
}

// watchInterval is the shortest time between two snapshots of a watch.
const watchInterval = 200 * time.Millisecond

// WatchJob implements JobService.
func (s *JobServer) WatchJob(req *arbiterv1.WatchJobRequest, stream arbiterv1.JobService_WatchJobServer) error {
	c := s.c
	ctx := stream.Context()
	for {
		c.mu.Lock()
		j, err := c.job(req.GetJobId())
		if err != nil {
			c.mu.Unlock()
			return err
		}
		snap := c.jobProto(j, true)
		ch := j.changed
		closed := c.closed
		c.mu.Unlock()
		if err := stream.Send(&arbiterv1.WatchJobResponse{Job: snap}); err != nil {
			return err
		}
		if snap.State != arbiterv1.JobState_JOB_STATE_RUNNING {
			return nil
		}
		if closed {
			return status.Error(codes.Unavailable, "coordinator shutting down")
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-ch:
		case <-time.After(5 * time.Second): // keep-alive snapshot
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-time.After(watchInterval):
		}
	}
}

// CancelJob implements JobService.
func (s *JobServer) CancelJob(ctx context.Context, req *arbiterv1.CancelJobRequest) (*arbiterv1.CancelJobResponse, error) {
	c := s.c
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	j, err := c.job(req.GetJobId())
	if err != nil {
		return nil, err
	}
	if j.rec.State != store.StateRunning {
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is already %s", j.rec.ID, j.rec.State)
	}
	if err := c.finish(ctx, j, store.StateCancelled, "cancelled by client"); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, status.Errorf(codes.NotFound, "unknown job %q", j.rec.ID)
		}
		return nil, status.Errorf(codes.Unavailable, "store: %v", err)
	}
	return &arbiterv1.CancelJobResponse{Job: c.jobProto(j, true)}, nil
}
