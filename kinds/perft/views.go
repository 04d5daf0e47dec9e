package perft

import (
	"context"
	"math/big"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// RootCount is one root move's count so far.
type RootCount struct {
	Move string
	// Nodes counted below the move so far (settled units), decimal; the
	// move's final count once Complete.
	Nodes string
	// Complete is set when every position below the move is settled.
	Complete bool
	// Open is the number of positions below the move not settled yet.
	Open int
}

// Progress is what a job's page shows beyond its snapshot.
type Progress struct {
	// Divide per root move in the order of the job's root moves.
	Divide []RootCount
	// NodesPerSecond is the rate of settled nodes since this coordinator
	// began tracking the job (0 when finished or unknown).
	NodesPerSecond float64
}

// Progress returns a job's divide as it completes: each root move's count
// so far and whether it is final. It costs one pass over the unsettled
// units' positions of a running job.
func (w *Workload) Progress(jobID string) (Progress, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return Progress{}, apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	r := j.rec
	out := Progress{Divide: make([]RootCount, len(r.RootMoves))}
	if r.State != store.StateRunning {
		for i, m := range r.RootMoves {
			rc := RootCount{Move: m, Nodes: "0", Complete: r.State == store.StateDone}
			if i < len(r.Divide) {
				rc.Nodes = r.Divide[i]
			}
			out.Divide[i] = rc
		}
		return out, nil
	}
	for _, u := range j.units {
		if u.counted {
			continue
		}
		for i := u.rec.First; i < u.rec.End && i < len(j.positions); i++ {
			for _, rm := range j.positions[i].Mult {
				if rm.Root >= 0 && rm.Root < len(out.Divide) {
					out.Divide[rm.Root].Open++
				}
			}
		}
	}
	for i, m := range r.RootMoves {
		rc := &out.Divide[i]
		rc.Move, rc.Nodes, rc.Complete = m, "0", rc.Open == 0
		if i < len(j.divide) {
			rc.Nodes = j.divide[i].String()
		}
	}
	if el := w.cfg.Now().Sub(j.started); el > time.Second/10 {
		var d big.Int
		d.Sub(&j.nodesDone, &j.baseNodes)
		f, _ := d.Float64()
		out.NodesPerSecond = f / el.Seconds()
	}
	return out, nil
}

// SetPriority implements core.Prioritizer.
func (w *Workload) SetPriority(ctx context.Context, jobID string, priority int32, share float64) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	j, err := w.runningLocked(jobID)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	w.mu.Unlock()
	if err := w.store.SetJobPriority(ctx, jobID, priority, share); err != nil {
		return apierr.Store(err)
	}
	w.mu.Lock()
	j.rec.Priority, j.rec.Throughput = priority, share
	w.mu.Unlock()
	w.log.Info("job priority changed", zap.String(logging.JobID, jobID), zap.Int32("priority", priority), zap.Float64("throughput", share))
	return nil
}

var _ core.Prioritizer = (*Workload)(nil)

// Describe implements core.Describer.
func (w *Workload) Describe(jobID string) (core.JobInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return core.JobInfo{}, false
	}
	return core.JobInfo{ID: jobID, Kind: Kind, State: j.rec.State, Submitter: j.rec.Submitter,
		Started: j.settled > 0 || len(j.holders) > 0}, true
}

var _ core.Describer = (*Workload)(nil)
