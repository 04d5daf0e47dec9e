package spsajob

import (
	"sort"

	"github.com/arbiter-chess/arbiter/coordinator/core"
)

// What the web pages read besides snapshots.

// Describe implements core.Describer, so that lists filter tunes by state
// and submitter without building snapshots.
func (w *Workload) Describe(jobID string) (core.JobInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tunes[jobID]
	if t == nil {
		return core.JobInfo{}, false
	}
	started := t.st.Updates() > 0 || (t.batches != nil && t.batches.Leased() > 0)
	return core.JobInfo{ID: jobID, Kind: t.rec.Kind, State: t.rec.State, Submitter: t.rec.Submitter, Started: started}, true
}

var _ core.Describer = (*Workload)(nil)

// Barred returns, by worker id, the running tunes the worker gets no more
// batches of (excluded for its incidents, or unable to run them), sorted.
func (w *Workload) Barred() map[string][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]string{}
	for _, t := range w.running {
		for _, id := range t.workers.Barred() {
			out[id] = append(out[id], t.rec.ID)
		}
	}
	for _, ids := range out {
		sort.Strings(ids)
	}
	return out
}
