package epd

import (
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Scheduling: which running EPD jobs a worker may work on now
// (Candidates), the next batch of one (Take), and what becomes of a lease
// that ended without a result (Ended) or that the core no longer tracks
// (Adopt). A batch given back is served again before a fresh one. A worker
// takes a job only if it can run every engine of it, so that one refusal
// bars it from the whole job.

// needs is what a worker must offer to search j's batches.
func (j *farmJob) needs() []string {
	caps := []string{CapabilityEPD}
	for _, e := range j.spec.GetEngines() {
		if matchspec.IsBuiltin(e) {
			return append(caps, capability.Builtin)
		}
	}
	return caps
}

// fitsCaps says why a worker with caps cannot run j's engines ("" when it
// can).
func (j *farmJob) fitsCaps(caps core.Caps) string {
	for _, e := range j.spec.GetEngines() {
		if why := gamepair.FitsCaps(e, e, caps); why != "" {
			return why
		}
	}
	return ""
}

// fits says why wk cannot run j ("" when it can). Caller holds mu.
func (j *farmJob) fits(wk *core.Worker) string {
	if c := capability.Missing(j.needs(), wk.Has); c != "" {
		return "the worker does not offer " + capability.Describe(c)
	}
	if why, ok := j.Excluded[wk.ID]; ok {
		return why
	}
	return j.fitsCaps(wk.Caps)
}

// available says whether j has a batch to hand out now. Caller holds mu.
func (j *farmJob) available() bool {
	return len(j.Retry) > 0 || j.freshBatch() >= 0
}

// freshBatch is the first batch never leased and not stored or open, or
// -1. The loop is bounded by the batches of the job.
func (j *farmJob) freshBatch() int {
	n := len(j.merger.Batches())
	for i := int(j.next); i < n; i++ {
		if _, open := j.Open[uint32(i)]; !open && !j.merger.Merged(i) {
			return i
		}
	}
	return -1
}

// Candidates implements core.Workload.
func (w *Workload) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.running {
		out = append(out, core.Candidate{JobID: j.rec.ID, Priority: j.spec.GetPriority(),
			Share: max(float64(j.spec.GetThroughput()), 1), InFlight: len(j.Open),
			Ready: j.fits(wk) == "" && j.available()})
	}
	return out
}

// Take implements core.Workload.
func (w *Workload) Take(jobID string, wk *core.Worker, _ time.Time) (string, any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil || !j.isRunning() || j.fits(wk) != "" {
		return "", nil, false
	}
	var idx uint32
	if len(j.Retry) > 0 {
		idx, j.Retry = j.Retry[0], j.Retry[1:]
	} else {
		fresh := j.freshBatch()
		if fresh < 0 {
			return "", nil, false
		}
		idx, j.next = uint32(fresh), uint32(fresh)+1
	}
	unit, err := j.batchUnit(idx)
	if err != nil {
		// Batches come from the stored spec, so this is a bug, not input.
		w.log.Error("epd batch not built", zap.String(logging.JobID, jobID), zap.Uint32("batch", idx), zap.Error(err))
		j.Retry = append(j.Retry, idx)
		return "", nil, false
	}
	j.Open[idx] = wk.ID
	return unit.GetUnitId(), unit, true
}

// batchUnit is batch idx of j as a worker gets it: the indexes with what
// the worker needs to search them.
func (j *farmJob) batchUnit(idx uint32) (*arbiterv1.WorkUnit, error) {
	b := j.merger.Batches()[idx]
	unit := &arbiterv1.EpdBatch{Batch: b.Batch, Engine: b.Engine, Positions: b.Positions, JobId: j.rec.ID,
		EngineSpec: j.spec.Engines[b.Engine], Limit: j.spec.Limit}
	for _, p := range b.Positions {
		unit.PositionSpecs = append(unit.PositionSpecs, j.spec.Positions[p])
	}
	return workload.PluginUnit(unitID(j.rec.ID, idx), j.rec.ID, unit)
}

// Ended implements core.Workload: the batch is served again first; a
// worker that cannot run an engine is not offered the job again.
func (w *Workload) Ended(l core.Lease, why core.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j, idx := w.runningBatch(l.UnitID)
	if j == nil || !j.Batches.Ended(idx, l, why, j.merger.Merged(int(idx))) {
		return
	}
	if why.CannotRun {
		w.log.Warn("worker cannot run epd job", zap.String(logging.JobID, j.rec.ID), zap.String(logging.WorkerID, l.WorkerID),
			zap.String("reason", why.Reason))
	}
	if w.host != nil {
		w.host.WorkAvailable()
	}
}

// runningBatch is the running job of a unit id and the unit's batch
// (nil when the id names no batch of a running job). Caller holds mu.
func (w *Workload) runningBatch(unitID string) (*farmJob, uint32) {
	jobID, idx, ok := parseUnit(unitID)
	if j := w.jobs[jobID]; ok && j != nil && j.isRunning() && int(idx) < len(j.merger.Batches()) {
		return j, idx
	}
	return nil, 0
}

// Locate implements core.Workload.
func (w *Workload) Locate(unitID string) (jobID string, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, _, ok := parseUnit(unitID)
	return jobID, ok && w.jobs[jobID] != nil
}

// Adopt implements core.Workload: a batch not yet stored stays with the
// worker that holds a signed lease on it.
func (w *Workload) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	w.mu.Lock()
	defer w.mu.Unlock()
	j, idx := w.runningBatch(l.UnitID)
	if j == nil || j.merger.Merged(int(idx)) {
		return core.AdoptCancelled
	}
	return j.Batches.Adopt(idx, wk.ID)
}

// Needs implements workload.Needer: a worker that runs EPD batches (and
// the embedded engine when the job has it) and fits every engine; the
// workers that could not run an engine are barred. A job none can start
// fails after the start timeout.
func (w *Workload) Needs(jobID string) (core.Need, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return core.Need{}, false
	}
	n := core.Need{Caps: j.needs(), Fits: j.fitsCaps, Barred: make(map[string]string, len(j.Excluded)), FailUnstarted: true}
	for id, why := range j.Excluded {
		n.Barred[id] = strings.TrimPrefix(why, "worker "+id+" ")
	}
	return n, true
}

// Describe implements core.Describer.
func (w *Workload) Describe(jobID string) (core.JobInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return core.JobInfo{}, false
	}
	merged, _ := j.merger.Progress()
	return core.JobInfo{ID: jobID, Kind: Kind, State: j.rec.State, Submitter: j.rec.Submitter,
		Started: merged > 0 || len(j.Open) > 0}, true
}
