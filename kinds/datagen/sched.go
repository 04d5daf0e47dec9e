package datagen

import (
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Scheduling: the core picks between jobs of every kind by priority and
// throughput share; this file answers which running datasets a worker may
// work on now (Candidates), the next batch of one (Take), and what becomes
// of a lease that ended without a result (Ended) or that the core no longer
// tracks (Adopt). A batch given back is served again before a fresh one,
// with the same index and so the same seed.

// needs is what a worker must offer to play j's batches.
func (j *job) needs() []string {
	caps := []string{capability.Datagen}
	if matchspec.IsBuiltin(j.spec.GetEngine()) {
		caps = append(caps, capability.Builtin)
	}
	if n := j.spec.GetAdjudication().GetTablebasePieces(); n > 0 {
		caps = append(caps, capability.Syzygy(int(n)))
	}
	return caps
}

// fits says why wk cannot run j ("" when it can).
func (j *job) fits(wk *core.Worker) string {
	if c := capability.Missing(j.needs(), wk.Has); c != "" {
		return "the worker does not offer " + capability.Describe(c)
	}
	if why, ok := j.excluded[wk.ID]; ok {
		return why
	}
	return gamepair.Fits(j.spec.GetEngine(), j.spec.GetEngine(), wk)
}

// wantsFresh says whether j should hand out a batch it has not yet: while
// the counted positions and those the leased batches will likely bring
// stay under the goal. Before any shard, a batch is guessed at 40 records
// a game.
func (j *job) wantsFresh() bool {
	goal := j.spec.GetPositions()
	if j.prog.positions >= goal {
		return false
	}
	perBatch := uint64(40 * j.batchGames)
	if j.prog.batches > 0 {
		perBatch = max(j.prog.positions/j.prog.batches, 1)
	}
	return j.prog.positions+uint64(len(j.open))*perBatch < goal
}

func (j *job) isOpen(idx uint64) bool { _, ok := j.open[idx]; return ok }

// available says whether j has a batch to hand out now. Caller holds mu.
func (j *job) available() bool { return len(j.retry) > 0 || j.wantsFresh() }

// Candidates implements core.Workload.
func (w *Workload) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.running {
		out = append(out, core.Candidate{
			JobID:    j.rec.ID,
			Priority: j.spec.GetPriority(),
			Share:    max(float64(j.spec.GetThroughput()), 1),
			InFlight: len(j.open),
			Ready:    j.fits(wk) == "" && j.available(),
		})
	}
	return out
}

// Take implements core.Workload.
func (w *Workload) Take(jobID string, wk *core.Worker, now time.Time) (string, any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil || !j.running() || j.fits(wk) != "" {
		return "", nil, false
	}
	var idx uint64
	switch {
	case len(j.retry) > 0:
		idx, j.retry = j.retry[0], j.retry[1:]
	case j.wantsFresh():
		// Skipped: batches stored, and batches adopted after a restart;
		// both are batches really issued, so this loop is bounded by them.
		for j.stored[j.next] || j.isOpen(j.next) {
			j.next++
		}
		idx = j.next
		j.next++
	default:
		return "", nil, false
	}
	j.open[idx] = wk.ID
	w.names[wk.ID] = wk.Name
	unit, err := w.batchUnit(j, idx)
	if err != nil {
		// Batches come from the stored spec, so this is a bug, not input.
		w.log.Error("batch not built", zap.String(logging.JobID, jobID), zap.Uint64("batch", idx), zap.Error(err))
		delete(j.open, idx)
		j.retry = append(j.retry, idx)
		return "", nil, false
	}
	return unit.GetUnitId(), unit, true
}

// batchUnit is batch idx of j as a worker gets it.
func (w *Workload) batchUnit(j *job, idx uint64) (*arbiterv1.WorkUnit, error) {
	s := j.settings
	b := &arbiterv1.DatagenBatch{JobId: j.rec.ID, Index: idx, Engine: j.spec.GetEngine(), Nodes: uint64(s.Nodes),
		RandomPliesMin: uint32(s.RandomPliesMin), RandomPliesMax: uint32(s.RandomPliesMax),
		Seed: dg.BatchSeed(j.spec.GetSeed(), idx), Games: uint32(j.batchGames), Openings: s.Openings,
		Adjudication: BatchAdjudication(s)}
	return workload.PluginUnit(unitID(j.rec.ID, idx), j.rec.ID, b)
}

// Ended implements core.Workload: the batch is served again first; a
// worker that cannot run the engine is not offered the job again.
func (w *Workload) Ended(l core.Lease, why core.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, idx, ok := parseUnit(l.UnitID)
	j := w.jobs[jobID]
	if !ok || j == nil || !j.running() {
		return
	}
	if holder, leased := j.open[idx]; !leased || holder != l.WorkerID {
		return
	}
	delete(j.open, idx)
	if why.CannotRun {
		j.excluded[l.WorkerID] = "worker " + l.WorkerID + " cannot run the engine: " + why.Reason
		w.log.Warn("worker cannot run dataset", zap.String(logging.JobID, jobID), zap.String(logging.WorkerID, l.WorkerID),
			zap.String("reason", why.Reason))
	}
	if !why.JobOver && !j.stored[idx] {
		j.retry = append(j.retry, idx)
	}
	if w.host != nil {
		w.host.WorkAvailable()
	}
}

// Locate implements core.Workload.
func (w *Workload) Locate(unitID string) (string, bool) {
	jobID, _, ok := parseUnit(unitID)
	if !ok {
		return "", false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, known := w.jobs[jobID]
	return jobID, known
}

// Adopt implements core.Workload: a batch not yet stored stays with the
// worker that holds a signed lease on it.
func (w *Workload) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobID, idx, ok := parseUnit(l.UnitID)
	j := w.jobs[jobID]
	if !ok || j == nil || !j.running() || j.stored[idx] {
		return core.AdoptCancelled
	}
	if holder, leased := j.open[idx]; leased && holder != wk.ID {
		return core.AdoptLost
	}
	for i, r := range j.retry {
		if r == idx {
			j.retry = append(j.retry[:i], j.retry[i+1:]...)
			break
		}
	}
	// A batch issued before a restart at or beyond next: Take skips it
	// while it is open or stored, so next need not move.
	j.open[idx] = wk.ID
	return core.AdoptActive
}

// Needs implements workload.Needer: a worker that plays datasets (and the
// embedded engine when the job's is) and fits its engine; the workers that
// could not run the engine are barred. A dataset that none can start fails
// after the start timeout (grpcapi.StallWatch): an engine's fault, which
// no other batch would fix, is said instead of waiting forever.
func (w *Workload) Needs(jobID string) (core.Need, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return core.Need{}, false
	}
	e := j.spec.GetEngine()
	n := core.Need{Caps: j.needs(), Fits: func(c core.Caps) string { return gamepair.FitsCaps(e, e, c) },
		Barred: make(map[string]string, len(j.excluded)), FailUnstarted: true}
	for id, why := range j.excluded {
		n.Barred[id] = strings.TrimPrefix(why, "worker "+id+" ")
	}
	return n, true
}

// UsingArtifact lists the running datasets whose engine is the uploaded
// engine or net sha, which the artifact store keeps while they run
// (workload.ArtifactUser).
func (w *Workload) UsingArtifact(sha string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, j := range w.running {
		if j.running() && gamepair.Using(sha, j.spec.GetEngine()) {
			out = append(out, j.rec.ID)
		}
	}
	return out
}
