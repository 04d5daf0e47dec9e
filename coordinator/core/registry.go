package core

import (
	"sort"
	"sync"

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
	var out []JobInfo
	more, skipped := false, 0
	held := c.heldSet()
	c.reg.newestFirst(func(id string, wl Workload) bool {
		info := JobInfo{ID: id, Kind: wl.Kind()}
		if d, ok := wl.(Describer); ok {
			var known bool
			if info, known = d.Describe(id); !known {
				return true
			}
		} else if ref, ok := c.reg.ref(id); ok {
			info.Submitter = ref.Submitter
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
