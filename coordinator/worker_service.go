package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/coordinator/perftsplit"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// WorkerServer is the coordinator's WorkerService.
type WorkerServer struct {
	arbiterv1.UnimplementedWorkerServiceServer
	c *Coordinator
}

// WorkerServer returns the WorkerService implementation.
func (c *Coordinator) WorkerServer() *WorkerServer { return &WorkerServer{c: c} }

// maxLeaseWait bounds how long a Lease call is held open.
const maxLeaseWait = 10 * time.Second

func errUnknownWorker(id string) error {
	return status.Errorf(codes.NotFound, "unknown worker %q: register again", id)
}

// Register implements WorkerService.
func (s *WorkerServer) Register(ctx context.Context, req *arbiterv1.RegisterRequest) (*arbiterv1.RegisterResponse, error) {
	c := s.c
	caps := req.GetCapabilities()
	if caps == nil {
		return nil, status.Error(codes.InvalidArgument, "capabilities missing")
	}
	if caps.GetCores() == 0 {
		return nil, status.Error(codes.InvalidArgument, "capabilities.cores must be at least 1")
	}
	if len(req.GetName()) > 200 {
		return nil, status.Error(codes.InvalidArgument, "name longer than 200 bytes")
	}
	capsJSON, _ := json.Marshal(map[string]any{
		"cores": caps.GetCores(), "hash_mb": caps.GetHashMb(), "engine_version": caps.GetEngineVersion(),
		"capabilities": caps.GetCapabilities(), "hostname": caps.GetHostname(),
		"bench_nps": caps.GetBenchNps(), "bench_signature": caps.GetBenchSignature(),
	})
	w := store.Worker{ID: "w-" + randomHex(6), Name: req.GetName(), Capabilities: string(capsJSON), RegisteredAt: c.cfg.Now()}
	if err := c.store.PutWorker(ctx, w); err != nil {
		return nil, status.Errorf(codes.Unavailable, "store: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.workers[w.ID] = &workerInfo{id: w.ID, name: w.Name, lastSeen: w.RegisteredAt}
	c.gameRegister(w.ID, w.Name, caps)
	c.verifyRegister(w.ID, caps.GetCapabilities())
	c.log.Info("worker registered", zap.String(logging.WorkerID, w.ID), zap.String("name", w.Name),
		zap.Uint32("cores", caps.GetCores()), zap.Uint32("hash_mb", caps.GetHashMb()),
		zap.String("engine_version", caps.GetEngineVersion()), zap.Strings("capabilities", caps.GetCapabilities()))
	return &arbiterv1.RegisterResponse{
		WorkerId:          w.ID,
		LeaseDuration:     durationpb.New(c.cfg.LeaseDuration),
		HeartbeatInterval: durationpb.New(c.cfg.HeartbeatInterval),
	}, nil
}

// touch marks a worker as seen. Caller holds mu.
func (c *Coordinator) touch(id string) bool {
	w := c.workers[id]
	if w == nil {
		return false
	}
	w.lastSeen = c.cfg.Now()
	return true
}

// Lease implements WorkerService.
func (s *WorkerServer) Lease(ctx context.Context, req *arbiterv1.LeaseRequest) (*arbiterv1.LeaseResponse, error) {
	c := s.c
	wait := min(req.GetWait().AsDuration(), maxLeaseWait)
	var deadline <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		deadline = t.C
	}
	c.verifyLoadCaps(ctx)
	for {
		c.mu.Lock()
		if !c.touch(req.GetWorkerId()) {
			c.mu.Unlock()
			return nil, errUnknownWorker(req.GetWorkerId())
		}
		if c.closed {
			c.mu.Unlock()
			return nil, status.Error(codes.Unavailable, "coordinator shutting down")
		}
		// Verify units first: a client's descent waits on each.
		if _, vl, ok := c.verifyPick(req.GetWorkerId(), c.cfg.Now()); ok {
			c.mu.Unlock()
			return &arbiterv1.LeaseResponse{Lease: vl}, nil
		}
		// Perft units and game-pair batches take turns when both are
		// waiting, so a deep perft job never starves running SPRT tests
		// (nor the reverse); among tests, pickGame applies priorities and
		// throughput shares.
		if c.gamesTurn {
			if gl, ok := c.pickGame(req.GetWorkerId(), c.cfg.Now()); ok {
				c.gamesTurn = false
				c.metrics.leasesGranted.Inc()
				c.mu.Unlock()
				return &arbiterv1.LeaseResponse{Lease: gl}, nil
			}
		}
		u, l, ok := c.pick(req.GetWorkerId(), c.cfg.Now())
		if ok {
			c.gamesTurn = true
			unit := c.unitProto(u)
			c.metrics.leasesGranted.Inc()
			c.log.Debug("lease granted", zap.String(logging.JobID, u.job.rec.ID), zap.String(logging.UnitID, u.rec.ID),
				zap.String(logging.WorkerID, l.WorkerID), zap.String(logging.LeaseID, l.ID))
			c.mu.Unlock()
			return &arbiterv1.LeaseResponse{Lease: &arbiterv1.Lease{
				LeaseId: l.ID, Deadline: timestamppb.New(l.Deadline), Unit: unit,
			}}, nil
		}
		if gl, ok := c.pickGame(req.GetWorkerId(), c.cfg.Now()); ok {
			c.gamesTurn = false
			c.metrics.leasesGranted.Inc()
			c.mu.Unlock()
			return &arbiterv1.LeaseResponse{Lease: gl}, nil
		}
		ch := c.workCh
		c.mu.Unlock()
		if deadline == nil {
			return &arbiterv1.LeaseResponse{RetryAfter: durationpb.New(time.Second)}, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return &arbiterv1.LeaseResponse{RetryAfter: durationpb.New(100 * time.Millisecond)}, nil
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// unitProto renders a unit's payload. Caller holds mu.
func (c *Coordinator) unitProto(u *unitState) *arbiterv1.WorkUnit {
	j := u.job
	fens := make([]string, 0, u.rec.End-u.rec.First)
	for i := u.rec.First; i < u.rec.End; i++ {
		fens = append(fens, j.positions[i].FEN)
	}
	return &arbiterv1.WorkUnit{
		UnitId: u.rec.ID,
		JobId:  j.rec.ID,
		Payload: &arbiterv1.WorkUnit_Perft{Perft: &arbiterv1.PerftBatch{
			Fens: fens, Depth: uint32(j.rec.Depth - j.rec.SplitPly), Chess960: j.rec.Chess960,
		}},
	}
}

// Heartbeat implements WorkerService.
func (s *WorkerServer) Heartbeat(ctx context.Context, req *arbiterv1.HeartbeatRequest) (*arbiterv1.HeartbeatResponse, error) {
	c := s.c
	w := req.GetWorkerId()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.touch(w) {
		return nil, errUnknownWorker(w)
	}
	now := c.cfg.Now()
	resp := &arbiterv1.HeartbeatResponse{}
	for _, h := range req.GetLeases() {
		st := &arbiterv1.LeaseStatus{LeaseId: h.GetLeaseId()}
		resp.Leases = append(resp.Leases, st)
		if l, ok := c.leases.Extend(h.GetLeaseId(), w, now); ok {
			st.State, st.Deadline = arbiterv1.LeaseState_LEASE_STATE_ACTIVE, timestamppb.New(l.Deadline)
			continue
		}
		if isVerifyID(h.GetUnitId()) {
			var dl time.Time
			if st.State, dl = c.verifyHeartbeat(h.GetLeaseId(), h.GetUnitId(), w, now); !dl.IsZero() {
				st.Deadline = timestamppb.New(dl)
			}
			continue
		}
		if gs, dl, ok := c.gameHeartbeat(h.GetLeaseId(), h.GetUnitId(), w, now); ok {
			st.State = gs
			if !dl.IsZero() {
				st.Deadline = timestamppb.New(dl)
			}
			continue
		}
		u := c.units[h.GetUnitId()]
		switch {
		case u == nil || u.job.rec.State != store.StateRunning || u.v.settled || u.v.failed:
			st.State = arbiterv1.LeaseState_LEASE_STATE_CANCELLED
		case c.leaseOf(h.GetLeaseId()) == "" && c.wants(u) && c.eligible(u, w):
			// A lease this coordinator does not know (issued before a
			// restart, or expired a moment ago) for a unit still open:
			// give it back to the worker rather than compute it twice.
			l := c.leases.Adopt(h.GetLeaseId(), u.rec.ID, "", w, now)
			st.State, st.Deadline = arbiterv1.LeaseState_LEASE_STATE_ACTIVE, timestamppb.New(l.Deadline)
			c.log.Info("lease adopted", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, u.rec.ID),
				zap.String(logging.WorkerID, w))
		default:
			st.State = arbiterv1.LeaseState_LEASE_STATE_LOST
		}
	}
	return resp, nil
}

// leaseOf returns the worker holding lease id, or "". Caller holds mu.
func (c *Coordinator) leaseOf(id string) string {
	l, ok := c.leases.Get(id)
	if !ok {
		return ""
	}
	return l.WorkerID
}

// Release implements WorkerService.
func (s *WorkerServer) Release(ctx context.Context, req *arbiterv1.ReleaseRequest) (*arbiterv1.ReleaseResponse, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.touch(req.GetWorkerId()) {
		return nil, errUnknownWorker(req.GetWorkerId())
	}
	l, ok := c.leases.Get(req.GetLeaseId())
	if !ok || l.WorkerID != req.GetWorkerId() {
		// Already gone (expired, submitted, job finished): nothing to do.
		return &arbiterv1.ReleaseResponse{}, nil
	}
	c.leases.End(l.ID)
	c.log.Info("lease released", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, l.UnitID),
		zap.String(logging.WorkerID, l.WorkerID), zap.String("reason", req.GetReason()))
	c.gameReleased(l, req.GetReason(), req.GetCannotRun())
	if u := c.units[l.UnitID]; u != nil {
		c.requeue(u)
	}
	c.verifyRequeue(l.UnitID)
	return &arbiterv1.ReleaseResponse{}, nil
}

func (c *Coordinator) refuse(format string, args ...any) error {
	c.metrics.reject(RejectMalformed)
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// Submit implements WorkerService.
func (s *WorkerServer) Submit(ctx context.Context, req *arbiterv1.SubmitRequest) (*arbiterv1.SubmitResponse, error) {
	c := s.c
	if r, ok := req.GetResult().(*arbiterv1.SubmitRequest_Verify); ok {
		return c.verifySubmit(req, r.Verify)
	}
	if resp, err, ok := c.submitGames(ctx, req); ok {
		return resp, err
	}
	w, unitID := req.GetWorkerId(), req.GetUnitId()
	log := c.log.With(zap.String(logging.UnitID, unitID), zap.String(logging.WorkerID, w), zap.String(logging.LeaseID, req.GetLeaseId()))

	// Phase 1, under the lock: find the unit and copy what the checks need
	// (positions are immutable once a job exists).
	c.mu.Lock()
	if !c.touch(w) {
		c.mu.Unlock()
		return nil, errUnknownWorker(w)
	}
	u := c.units[unitID]
	if u == nil {
		known := false
		for _, j := range c.jobs {
			if j.rec.State != store.StateRunning && len(unitID) > len(j.rec.ID) && unitID[:len(j.rec.ID)+1] == j.rec.ID+"." {
				known = true
			}
		}
		c.mu.Unlock()
		if known {
			c.metrics.results.WithLabelValues("discarded").Inc()
			return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED}, nil
		}
		c.metrics.reject(RejectUnknownUnit)
		return nil, status.Errorf(codes.NotFound, "unknown unit %q", unitID)
	}
	j := u.job
	depth := j.rec.Depth - j.rec.SplitPly
	chess960 := j.rec.Chess960
	fens := make([]string, 0, u.rec.End-u.rec.First)
	for i := u.rec.First; i < u.rec.End; i++ {
		fens = append(fens, j.positions[i].FEN)
	}
	c.mu.Unlock()

	// Phase 2, without the lock: shape and plausibility.
	res, ok := req.GetResult().(*arbiterv1.SubmitRequest_Perft)
	if !ok || res.Perft == nil {
		return nil, c.refuse("unit %s is a perft batch; the result is not a perft result", unitID)
	}
	counts := res.Perft.GetCounts()
	if len(counts) != len(fens) {
		return nil, c.refuse("unit %s has %d positions; the result has %d counts", unitID, len(fens), len(counts))
	}
	for i, fen := range fens {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "stored position %q: %v", fen, err)
		}
		if chess960 {
			p.SetChess960(true)
		}
		if err := perftsplit.Check(&p, depth, counts[i]); err != nil {
			log.Warn("result refused", zap.Int("position", i), zap.String("fen", fen), zap.Error(err))
			return nil, c.refuseAs(RejectImplausible, "unit %s, position %d (%s), depth %d: %v", unitID, i, fen, depth, err)
		}
	}

	// Phase 3: decide under mu, write the store without it (commitMu keeps
	// commits and their decisions in order), then apply under mu. Leases
	// and heartbeats go on meanwhile.
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	if c.units[unitID] != u || j.rec.State != store.StateRunning {
		c.mu.Unlock()
		c.metrics.results.WithLabelValues("discarded").Inc()
		return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED}, nil
	}
	endLeases := func() {
		for _, l := range c.leases.ForUnit(unitID) {
			if l.WorkerID == w {
				c.leases.End(l.ID)
			}
		}
	}
	for _, r := range u.runs {
		if r.WorkerID != w {
			continue
		}
		// The same worker again: a replay. Compare, never add.
		endLeases()
		c.mu.Unlock()
		if slices.Equal(r.Counts, counts) {
			c.metrics.results.WithLabelValues("duplicate").Inc()
			log.Info("duplicate result", zap.String(logging.JobID, j.rec.ID))
			return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE}, nil
		}
		return nil, c.refuseAs(RejectImplausible, "unit %s: worker %s already submitted different counts for this unit", unitID, w)
	}
	if u.v.settled && slices.Equal(u.v.counts, counts) && u.v.agreeing >= c.required(u) {
		// A late copy of a settled result (e.g. the lease had expired and
		// was re-issued): it agrees, so it is not stored again.
		endLeases()
		c.mu.Unlock()
		c.metrics.results.WithLabelValues("duplicate").Inc()
		log.Info("late duplicate result agrees", zap.String(logging.JobID, j.rec.ID))
		return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE}, nil
	}

	run := store.Run{UnitID: unitID, WorkerID: w, Counts: counts, At: c.cfg.Now(), ElapsedMS: req.GetElapsed().AsDuration().Milliseconds()}
	runs := append(slices.Clip(u.runs), run)
	v := judge(runs, c.required(u), c.cfg.MaxRuns)

	var events []store.Event
	outcome := arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED
	if v.disputed && !u.v.disputed {
		outcome = arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH
		events = append(events, store.Event{JobID: j.rec.ID, UnitID: unitID, WorkerID: w, Kind: "mismatch",
			Detail: mismatchDetail(u.runs, run, j.positions[u.rec.First:u.rec.End]), At: run.At})
	} else if v.disputed && !slices.Equal(v.counts, counts) {
		outcome = arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH
	}

	// The unit's contribution changes when it settles, unsettles, or
	// settles on other counts.
	wasCounted, nowCounted := u.counted, v.settled
	oldCounts := u.v.counts
	changed := !slices.Equal(oldCounts, v.counts)
	delta := func(divide []*big.Int, total *big.Int) {
		if wasCounted && (!nowCounted || changed) {
			contribute(u, oldCounts, -1, divide, total)
		}
		if nowCounted && (!wasCounted || changed) {
			contribute(u, v.counts, +1, divide, total)
		}
	}
	settledAfter := j.settled + flip(wasCounted, nowCounted)
	var jobChange *store.JobChange
	switch {
	case v.failed:
		jobChange = c.finalChange(j, store.StateFailed,
			fmt.Sprintf("unit %s: %d runs without a majority", unitID, len(runs)))
	case settledAfter == len(j.units):
		// Final totals on copies: memory changes only after the commit.
		div := make([]*big.Int, len(j.divide))
		for i, d := range j.divide {
			div[i] = new(big.Int).Set(d)
		}
		total := new(big.Int).Set(&j.nodesDone)
		delta(div, total)
		jobChange = c.finalChange(j, store.StateDone, "")
		jobChange.Total = total.String()
		for i, d := range div {
			jobChange.Divide[i] = d.String()
		}
	}
	c.mu.Unlock()

	unitChange := &store.UnitChange{Settled: v.settled, Counts: v.counts}
	err := c.store.Commit(ctx, j.rec.ID, unitID, &run, unitChange, jobChange, events)

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		log.Error("store commit failed", zap.String(logging.JobID, j.rec.ID), zap.Error(err))
		return nil, status.Errorf(codes.Unavailable, "store: %v", err)
	}
	// Committed: now memory.
	endLeases()
	delta(j.divide, &j.nodesDone)
	c.metrics.unitSettled(u, u.v, v, wasCounted)
	j.verified += flip(u.v.settled && u.v.agreeing >= 2, v.settled && v.agreeing >= 2)
	j.disputed += flip(u.v.disputed, v.disputed)
	j.resolved += flip(u.v.disputed && u.v.settled, v.disputed && v.settled)
	prevRuns := u.runs
	u.runs, u.v, u.counted = runs, v, nowCounted
	j.settled = settledAfter
	c.metrics.results.WithLabelValues(outcomeLabel(outcome)).Inc()
	fields := []zap.Field{zap.String(logging.JobID, j.rec.ID), zap.Bool("settled", v.settled),
		zap.Int("runs", len(runs)), zap.Duration("elapsed", req.GetElapsed().AsDuration())}
	if outcome == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH {
		log.Warn("result mismatch", append(fields, zap.String("detail", mismatchDetail(prevRuns, run, j.positions[u.rec.First:u.rec.End])))...)
	} else {
		log.Debug("result accepted", fields...)
	}
	if jobChange != nil {
		c.applyFinal(j, jobChange)
	} else {
		c.requeue(u)
		c.notify(j)
	}
	return &arbiterv1.SubmitResponse{Outcome: outcome}, nil
}

func outcomeLabel(o arbiterv1.SubmitOutcome) string {
	switch o {
	case arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED:
		return "accepted"
	case arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE:
		return "duplicate"
	case arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH:
		return "mismatch"
	default:
		return "discarded"
	}
}

// mismatchDetail names the first position where run differs from earlier
// runs: the position where some worker's engine went wrong.
func mismatchDetail(prev []store.Run, run store.Run, positions []store.Position) string {
	for _, r := range prev {
		for i := range r.Counts {
			if i < len(run.Counts) && r.Counts[i] != run.Counts[i] {
				return fmt.Sprintf("position %d (%s): worker %s counted %d, worker %s counted %d",
					i, positions[i].FEN, r.WorkerID, r.Counts[i], run.WorkerID, run.Counts[i])
			}
		}
	}
	return "counts differ"
}

// flip is +1 when a condition became true, −1 when it became false.
func flip(before, after bool) int {
	switch {
	case after && !before:
		return 1
	case before && !after:
		return -1
	}
	return 0
}
