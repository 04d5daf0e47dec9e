package perft

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/perftwire"
)

// wants reports whether u should be leased to one more worker.
func (u *unit) wants() bool {
	if u.job.rec.State != store.StateRunning || u.v.settled || u.v.failed {
		return false
	}
	return u.v.want > len(u.holders)
}

// eligible reports whether worker w may compute u: a further run must come
// from an identity that has not run the unit and does not hold it, and that
// no settled dispute of the job has outvoted.
func (u *unit) eligible(w *core.Worker) bool {
	if u.job.distrusted[w.Owner] || u.v.cross && (!crossCapable(u.job, w) || u.crossFailed[w.ID] != "") {
		return false
	}
	for _, r := range u.runs {
		if r.WorkerID == w.ID || owner(r) == w.Owner {
			return false
		}
	}
	for id, own := range u.holders {
		if id == w.ID || own == w.Owner {
			return false
		}
	}
	return true
}

// capable reports whether w runs perft units of j: Chess960, slices and
// statistics each need the worker to say it can.
func capable(j *job, w *core.Worker) bool {
	switch {
	case j.rec.Slices > 1 && !w.Has(capability.PerftSlices):
		return false
	case j.rec.Stats && !w.Has(capability.PerftStats):
		return false
	case j.rec.Chess960:
		return w.Has(capability.Perft960)
	}
	return w.Has(capability.Perft)
}

// open reports whether j has units waiting for a lease (not necessarily
// one a given worker may take).
func (j *job) open() bool {
	if len(j.retry) > 0 || len(j.more) > 0 {
		return true
	}
	for _, s := range j.segs {
		if len(s.units) > 0 {
			return true
		}
	}
	return false
}

// Candidates implements core.Workload.
func (w *Workload) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.running {
		inflight := 0
		for _, n := range j.holders {
			inflight += n
		}
		out = append(out, core.Candidate{
			JobID: j.rec.ID, Priority: j.rec.Priority, Share: share(j.rec), InFlight: inflight,
			Ready: capable(j, wk) && !j.distrusted[wk.Owner] && j.open(),
		})
	}
	return out
}

func share(rec *store.Job) float64 {
	if rec.Throughput <= 0 {
		return 1
	}
	return rec.Throughput
}

// Take implements core.Workload: re-opened units first, then further runs
// of leased units, then fresh units from the worker's segment.
func (w *Workload) Take(jobID string, wk *core.Worker, now time.Time) (string, any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil || j.rec.State != store.StateRunning || !capable(j, wk) || j.distrusted[wk.Owner] {
		return "", nil, false
	}
	u, ok := take(&j.retry, wk)
	if !ok {
		u, ok = take(&j.more, wk)
	}
	if !ok {
		u, ok = j.fresh(wk)
	}
	if !ok {
		return "", nil, false
	}
	u.hold(wk)
	return u.rec.ID, unitProto(u, u.v.cross), true
}

// fresh takes the next unit of wk's segment (see the package comment).
// A unit that wants further runs after this lease (verification) moves to
// the more list; one that wants none any more (adopted after a restart)
// is dropped. Caller holds mu.
func (j *job) fresh(wk *core.Worker) (*unit, bool) {
	for {
		s := j.segmentFor(wk.ID)
		if s == nil {
			return nil, false
		}
		for len(s.units) > 0 {
			u := s.units[0]
			s.units = s.units[1:]
			switch {
			case !u.wants():
				u.queued = false
				continue
			case !u.eligible(wk):
				j.more = append(j.more, u)
				continue
			case u.v.want > len(u.holders)+1:
				j.more = append(j.more, u)
			default:
				u.queued = false
			}
			return u, true
		}
	}
}

// segmentFor returns a segment with units for worker id: its own, else
// the longest free one (which it claims), else the back half of the
// longest one (or the last unit of a segment with one left). Empty
// segments are dropped on the way. Caller holds mu.
func (j *job) segmentFor(id string) *segment {
	var own, free, longest *segment
	kept := j.segs[:0]
	for _, s := range j.segs {
		if len(s.units) == 0 {
			continue
		}
		kept = append(kept, s)
		if s.owner == id && own == nil {
			own = s
		}
		if s.owner == "" && (free == nil || len(s.units) > len(free.units)) {
			free = s
		}
		if longest == nil || len(s.units) > len(longest.units) {
			longest = s
		}
	}
	clear(j.segs[len(kept):])
	j.segs = kept
	switch {
	case own != nil:
		return own
	case free != nil:
		free.owner = id
		return free
	case longest == nil:
		return nil
	case len(longest.units) == 1:
		return longest
	}
	half := len(longest.units) / 2
	cut := len(longest.units) - half
	stolen := &segment{units: append([]*unit(nil), longest.units[cut:]...), owner: id}
	clear(longest.units[cut:])
	longest.units = longest.units[:cut:cut]
	j.segs = append(j.segs, stolen)
	return stolen
}

// take returns the first unit of *q that wants a lease and that wk may run.
// Units that want none are dropped from the front; popping the front is
// O(1), so the common case costs nothing however long the queue.
func take(q *[]*unit, wk *core.Worker) (*unit, bool) {
	for len(*q) > 0 && !(*q)[0].wants() {
		(*q)[0].queued = false
		*q = (*q)[1:]
	}
	for k, u := range *q {
		if !u.wants() || !u.eligible(wk) {
			continue
		}
		if u.v.want <= len(u.holders)+1 {
			// This lease is the last one the unit wants.
			u.queued = false
			if k == 0 {
				*q = (*q)[1:]
			} else {
				*q = append((*q)[:k:k], (*q)[k+1:]...)
			}
		}
		return u, true
	}
	return nil, false
}

// hold records wk's new lease on u, and whether it runs the cross-check
// program. Caller holds mu.
func (u *unit) hold(wk *core.Worker) {
	u.holders[wk.ID] = wk.Owner
	u.job.holders[wk.ID]++
	if u.v.cross {
		if u.crossHeld == nil {
			u.crossHeld = map[string]bool{}
		}
		u.crossHeld[wk.ID] = true
	}
}

// unitProto renders a unit's payload: for cross, the node counts of the
// job's cross-check program. Caller holds mu.
func unitProto(u *unit, cross bool) *arbiterv1.WorkUnit {
	j := u.job
	fens := make([]string, 0, u.rec.End-u.rec.First)
	for i := u.rec.First; i < u.rec.End; i++ {
		fens = append(fens, j.positions[i].FEN)
	}
	batch := &arbiterv1.PerftBatch{Fens: fens, Depth: uint32(j.rec.Depth - j.rec.SplitPly), Chess960: j.rec.Chess960, Stats: j.rec.Stats}
	switch {
	case cross:
		batch.Stats, batch.CrossCheckEngine = false, j.rec.CrossCheck
	case j.rec.Slices > 1:
		batch.Slices, batch.Slice, batch.SlicePly = uint32(j.rec.Slices), uint32(u.rec.Slice), uint32(j.rec.SlicePly)
	}
	return &arbiterv1.WorkUnit{UnitId: u.rec.ID, JobId: j.rec.ID, Payload: &arbiterv1.WorkUnit_Perft{Perft: batch}}
}

// release forgets w's lease on u. Caller holds mu.
func (w *Workload) release(u *unit, workerID string) bool {
	if _, ok := u.holders[workerID]; !ok {
		return false
	}
	delete(u.holders, workerID)
	delete(u.crossHeld, workerID)
	j := u.job
	if j.holders[workerID]--; j.holders[workerID] <= 0 {
		delete(j.holders, workerID)
	}
	return true
}

// requeue puts u back in line (ahead of fresh units) if it wants a lease.
// Caller holds mu.
func (w *Workload) requeue(u *unit) {
	if u.queued || !u.wants() {
		return
	}
	u.queued = true
	u.job.retry = append(u.job.retry, u)
	if w.host != nil {
		w.host.WorkAvailable()
	}
}

// Ended implements core.Workload.
func (w *Workload) Ended(l core.Lease, why core.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[l.UnitID]
	if u == nil {
		return
	}
	cross := u.crossHeld[l.WorkerID]
	if !w.release(u, l.WorkerID) {
		return
	}
	if cross && strings.HasPrefix(why.Reason, perftwire.CrossCheckFailed) {
		if u.crossFailed == nil {
			u.crossFailed = map[string]string{}
		}
		u.crossFailed[l.WorkerID] = why.Reason
	}
	w.requeue(u)
}

// Locate implements core.Workload.
func (w *Workload) Locate(unitID string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if u := w.units[unitID]; u != nil {
		return u.job.rec.ID, true
	}
	// A unit of a finished job: its units left memory with it.
	if j := w.jobs[jobOfUnit(unitID)]; j != nil {
		return j.rec.ID, true
	}
	return "", false
}

// Adopt implements core.Workload.
func (w *Workload) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[l.UnitID]
	switch {
	case u == nil || u.job.rec.State != store.StateRunning || u.v.settled || u.v.failed:
		return core.AdoptCancelled
	case u.wants() && u.eligible(wk):
		// Issued before a restart, or expired a moment ago, for a unit
		// still open: give it back rather than compute it twice.
		u.hold(wk)
		return core.AdoptActive
	}
	return core.AdoptLost
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
