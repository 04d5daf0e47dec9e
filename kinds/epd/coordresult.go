package epd

import (
	"context"

	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// MaxResultBytes bounds a batch's result as a worker sends it: a full
// batch (MaxBatchPositions) of results with an error text each fits.
const MaxResultBytes = MaxBatchPositions * (maxErrorBytes + 128)

// Result implements core.Workload.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	jobID, idx, ok := parseUnit(rc.Lease.UnitID)
	if !ok {
		return core.Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonUnknownUnit, "unit %s is not an EPD batch", apierr.Q(rc.Lease.UnitID))
	}
	res, err := epdResultOf(rc.Result)
	if err != nil {
		return core.Outcome{}, err
	}
	if res.GetBatch() != idx {
		return core.Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonImplausibleResult,
			"result for batch %d under the lease of batch %d", res.GetBatch(), idx)
	}
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	j := w.jobs[jobID]
	switch {
	case j == nil:
		w.mu.Unlock()
		return core.Outcome{}, apierr.New(apierr.NotFound, apierr.ReasonUnknownUnit, "unit %s: no such EPD job", apierr.Q(rc.Lease.UnitID))
	case !j.isRunning():
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}, nil
	case j.merger.Merged(int(idx)):
		j.Release(idx, rc.Worker.ID)
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Duplicate, EndUnitLeases: true}, nil
	}
	checked, err := j.merger.Check(res)
	merged, total := j.merger.Progress()
	w.mu.Unlock()
	if err != nil {
		w.log.Warn("epd batch refused", zap.String(logging.JobID, jobID), zap.String(logging.WorkerID, rc.Worker.ID),
			zap.Uint32("batch", idx), zap.Error(err))
		return core.Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonImplausibleResult, "%v", err)
	}
	var done *store.JobChange
	if merged+1 == total {
		done = &store.JobChange{State: store.StateDone, FinishedAt: w.deps.Now()}
	}
	row := resultRow{JobID: jobID, Batch: idx, WorkerID: rc.Worker.ID, ElapsedMS: rc.Elapsed.Milliseconds(), At: w.deps.Now(), Result: checked}
	if err := commitResultRow(ctx, w.store, &row, done); err != nil {
		return core.Outcome{}, apierr.Store(err)
	}
	w.mu.Lock()
	if _, err := j.merger.Add(checked); err != nil {
		// Checked above under commitMu, which no one released since.
		w.log.Error("epd batch stored but not merged", zap.String(logging.JobID, jobID), zap.Uint32("batch", idx), zap.Error(err))
	}
	delete(j.Open, idx)
	j.DropRetry(idx)
	if done != nil {
		w.finish(j, done)
	}
	w.mu.Unlock()
	if w.host != nil {
		w.host.JobChanged(jobID)
		w.host.WorkAvailable()
	}
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: done != nil}, nil
}

// epdResultOf unpacks a worker's result, capped in bytes before it is
// decoded.
func epdResultOf(r any) (*arbiterv1.EpdResult, error) {
	a, ok := r.(*anypb.Any)
	if !ok || a == nil {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "an EPD batch needs an EpdResult")
	}
	if len(a.GetValue()) > MaxResultBytes {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "EPD result of %d bytes: at most %d", len(a.GetValue()), MaxResultBytes)
	}
	res := &arbiterv1.EpdResult{}
	if err := a.UnmarshalTo(res); err != nil {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "an EPD batch needs an EpdResult: %v", err)
	}
	return res, nil
}

// Snapshot implements core.Workload.
func (w *Workload) Snapshot(jobID string, full bool) (any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if j := w.jobs[jobID]; j != nil {
		return j.snapshot(full), true
	}
	return nil, false
}

// snapshot renders j. Caller holds mu.
func (j *farmJob) snapshot(full bool) *arbiterv1.Job {
	merged, total := j.merger.Progress()
	out := &arbiterv1.Job{JobId: j.rec.ID, State: jobproto.State(j.rec.State), Kind: Kind, Error: j.rec.Error,
		Submitter: j.rec.Submitter, CreatedAt: timestamppb.New(j.rec.CreatedAt),
		Progress: &arbiterv1.JobProgress{UnitsDone: uint64(merged), UnitsTotal: uint64(total), ActiveWorkers: uint32(j.ActiveWorkers())}}
	if at := j.rec.FinishedAt; !at.IsZero() {
		out.FinishedAt = timestamppb.New(at)
	}
	if j.isRunning() && len(j.Excluded) > 0 && len(j.Open) == 0 && merged == 0 {
		for _, why := range j.Excluded {
			out.Progress.Blocked = "the workers that tried cannot run an engine: " + why
			break
		}
	}
	detail := &arbiterv1.EpdJob{Batches: uint32(total), BatchesDone: uint32(merged), BatchesLeased: uint32(len(j.Open))}
	detail.Searched, detail.Solved = j.counts()
	if full {
		detail.Spec = j.spec
		detail.Results = j.merger.MergedResults()
	} else {
		detail.Spec = &arbiterv1.EpdSpec{Engines: j.spec.Engines, Limit: j.spec.Limit, Name: j.spec.Name,
			BatchPositions: j.spec.BatchPositions, Priority: j.spec.Priority, Throughput: j.spec.Throughput}
	}
	if a, err := anypb.New(detail); err == nil {
		out.Detail = a
	}
	return out
}

// counts are the positions searched and solved per engine so far.
func (j *farmJob) counts() (searched, solved []uint32) {
	searched, solved = make([]uint32, len(j.spec.Engines)), make([]uint32, len(j.spec.Engines))
	for _, r := range j.merger.MergedResults() {
		for _, p := range r.Positions {
			searched[r.Engine]++
			if p.Solved {
				solved[r.Engine]++
			}
		}
	}
	return searched, solved
}

// Stats implements core.Workload.
func (w *Workload) Stats() core.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := workload.JobStats(Kind, w.jobs, func(j *farmJob) string { return j.rec.State })
	for _, j := range w.running {
		merged, total := j.merger.Progress()
		st.Units["leased"] += len(j.Open)
		st.Units["done"] += merged
		st.Units["queued"] += total - merged - len(j.Open)
	}
	return st
}
