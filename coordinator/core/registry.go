package core

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

type registry struct {
	mu    sync.Mutex
	jobs  map[string]*regJob
	order []*regJob // by Seq
}

type regJob struct {
	ref     JobRef
	wl      Workload
	changed chan struct{}
	// info is what Describe said of the job once it was finished: lists
	// read it instead of asking the workload again (a pass over 100,000
	// stored tests costs a map look-up and several cache misses a job
	// otherwise). It holds for the generation gen it was made in; every
	// change of the job (changed) starts a new one.
	info atomic.Pointer[cachedInfo]
	gen  atomic.Int64
}

type cachedInfo struct {
	gen  int64
	info JobInfo
}

func (r *registry) init() { r.jobs = make(map[string]*regJob) }

func (r *registry) add(ref JobRef, wl Workload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.jobs[ref.ID]; dup {
		return
	}
	j := &regJob{ref: ref, wl: wl, changed: make(chan struct{})}
	r.jobs[ref.ID] = j
	i := sort.Search(len(r.order), func(i int) bool { return r.order[i].ref.Seq > ref.Seq })
	r.order = append(r.order, nil)
	copy(r.order[i+1:], r.order[i:])
	r.order[i] = j
}

func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.jobs)
}

func (r *registry) workload(id string) Workload {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.jobs[id]; j != nil {
		return j.wl
	}
	return nil
}

func (r *registry) ref(id string) (JobRef, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.jobs[id]; j != nil {
		return j.ref, true
	}
	return JobRef{}, false
}

func (r *registry) watch(id string) (chan struct{}, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.jobs[id]; j != nil {
		return j.changed, true
	}
	return nil, false
}

func (r *registry) changed(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.jobs[id]; j != nil {
		close(j.changed)
		j.changed = make(chan struct{})
		j.gen.Add(1)
	}
}

func (r *registry) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.jobs {
		close(j.changed)
		j.changed = make(chan struct{})
	}
}

// newestFirst calls fn for jobs from the newest until it returns false. fn
// runs without the registry's lock.
func (r *registry) newestFirst(fn func(id string, wl Workload) bool) {
	r.mu.Lock()
	order := append([]*regJob(nil), r.order...)
	r.mu.Unlock()
	for i := len(order) - 1; i >= 0; i-- {
		if !fn(order[i].ref.ID, order[i].wl) {
			return
		}
	}
}

// newestFirstBefore is newestFirst from the newest job whose Seq is
// below before (0: from the newest of all), found by binary search.
func (r *registry) newestFirstBefore(before int64, fn func(j *regJob) bool) {
	r.mu.Lock()
	n := len(r.order)
	if before > 0 {
		n = sort.Search(len(r.order), func(i int) bool { return r.order[i].ref.Seq >= before })
	}
	order := append([]*regJob(nil), r.order[:n]...)
	r.mu.Unlock()
	for i := len(order) - 1; i >= 0; i-- {
		if !fn(order[i]) {
			return
		}
	}
}

// wakeup wakes Lease calls waiting for work.
type wakeup struct {
	mu sync.Mutex
	ch chan struct{}
}

func (w *wakeup) init() { w.ch = make(chan struct{}) }

func (w *wakeup) signal() {
	w.mu.Lock()
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

func (w *wakeup) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

// JobInfo is what lists filter on, without rendering a snapshot.
type JobInfo struct {
	ID        string
	Kind      string // the stored kind: "perft", "sprt", "match"
	State     string // "running", "pending" (StatePending), "done", "failed", "cancelled"
	Submitter string
	// Started: a running job has counted or leased some of its work.
	Started bool
	// Seq numbers jobs in submission order (the list's keyset cursor).
	Seq     int64
	Created time.Time
	// What tests add, for finding them (empty for other jobs): both
	// engines' names, the time control as lists show it, the verdict
	// ("passed", "failed", "none"; "" for a match without SPRT), tags and
	// notes.
	Engines     []string
	TimeControl string
	Verdict     string
	Tags        []string
	Notes       string
	// Text is the job's searchable text in lower case (SearchText), for
	// workloads that keep it made; "" has lists make it when they search.
	Text string
}

// SearchText is what a text search of lists looks in: the id, submitter,
// notes and the other words (engines, tags), in lower case, apart.
func SearchText(id, submitter, notes string, words []string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(id))
	b.WriteByte(0)
	b.WriteString(strings.ToLower(submitter))
	b.WriteByte(0)
	b.WriteString(strings.ToLower(notes))
	for _, w := range words {
		b.WriteByte(0)
		b.WriteString(strings.ToLower(w))
	}
	return b.String()
}

// Describer is a workload that describes a job cheaply (from memory,
// without building its snapshot), so that long lists filter fast.
type Describer interface {
	Describe(jobID string) (JobInfo, bool)
}

// List returns, newest first, the jobs that keep passes (nil: all),
// skipping offset of them, at most limit, and whether more passed. Jobs of
// workloads that are not Describers are described from their snapshot's
// reference only (ID, Submitter) and State "".
func (c *Core) List(offset, limit int, keep func(JobInfo) bool) ([]JobInfo, bool) {
	return c.ListBefore(0, offset, limit, keep)
}

// ListBefore is List over the jobs submitted before the job of sequence
// number before (0: all), so that a page after the first starts where the
// last one ended (a keyset cursor) instead of passing offset jobs again.
func (c *Core) ListBefore(before int64, offset, limit int, keep func(JobInfo) bool) ([]JobInfo, bool) {
	var out []JobInfo
	more, skipped := false, 0
	held := c.heldSet()
	c.reg.newestFirstBefore(before, func(rj *regJob) bool {
		id, seq, wl := rj.ref.ID, rj.ref.Seq, rj.wl
		var info JobInfo
		gen := rj.gen.Load()
		if cached := rj.info.Load(); cached != nil && cached.gen == gen {
			info = cached.info
		} else if d, ok := wl.(Describer); ok {
			var known bool
			if info, known = d.Describe(id); !known {
				return true
			}
			info.Seq = seq
			if info.State != "" && info.State != store.StateRunning {
				// Finished: what lists filter on no longer changes
				// until the job does (a resume), which starts a new
				// generation.
				rj.info.Store(&cachedInfo{gen: gen, info: info})
			}
		} else {
			info = JobInfo{ID: id, Kind: wl.Kind(), Seq: seq, Submitter: rj.ref.Submitter}
		}
		if (info.State == store.StateRunning || info.State == "") && held[id] {
			info.State = StatePending
		}
		if keep != nil && !keep(info) {
			return true
		}
		if skipped < offset {
			skipped++
			return true
		}
		if len(out) == limit {
			more = true
			return false
		}
		out = append(out, info)
		return true
	})
	return out, more
}
