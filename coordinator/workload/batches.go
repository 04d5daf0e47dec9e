package workload

// Helpers for kinds whose units are a job's batches numbered by an index
// (datagen, epd): the lease bookkeeping of one job (which batches are
// leased to whom, which were given back to be served first, which workers
// cannot run the job), the load of a kind's stored jobs with quarantine,
// and the jobs-by-state count of Stats. The kinds keep their own maps;
// these functions are the one copy of what they do with them.

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Batches is one running job's lease bookkeeping. The caller guards it
// with its workload's lock.
type Batches[I comparable] struct {
	// Open maps a leased batch to the worker that holds its lease.
	Open map[I]string
	// Retry are the batches given back, served before fresh ones.
	Retry []I
	// Excluded maps a worker that cannot run the job to why.
	Excluded map[string]string
}

// NewBatches is the bookkeeping of a job with nothing leased.
func NewBatches[I comparable]() Batches[I] {
	return Batches[I]{Open: map[I]string{}, Excluded: map[string]string{}}
}

// Ended records that lease l on batch idx ended without a result: the
// batch is served again first unless stored (its result is in) or the job
// is over, and a worker that cannot run the job is not offered it again.
// It reports whether the lease was this job's to end (the caller then
// wakes waiting workers).
func (b *Batches[I]) Ended(idx I, l core.Lease, why core.End, stored bool) bool {
	if holder, leased := b.Open[idx]; !leased || holder != l.WorkerID {
		return false
	}
	delete(b.Open, idx)
	if why.CannotRun {
		b.Excluded[l.WorkerID] = "worker " + l.WorkerID + " cannot run the engine: " + why.Reason
	}
	if !why.JobOver && !stored {
		b.Retry = append(b.Retry, idx)
	}
	return true
}

// Adopt answers core.Workload.Adopt for batch idx, not stored, of a
// running job: it stays with the worker that holds a signed lease on it,
// unless another worker holds it now.
func (b *Batches[I]) Adopt(idx I, workerID string) core.Adoption {
	if holder, leased := b.Open[idx]; leased && holder != workerID {
		return core.AdoptLost
	}
	b.DropRetry(idx)
	b.Open[idx] = workerID
	return core.AdoptActive
}

// DropRetry takes idx off the batches to serve again (its result came in
// after its lease was given up).
func (b *Batches[I]) DropRetry(idx I) {
	if i := slices.Index(b.Retry, idx); i >= 0 {
		b.Retry = slices.Delete(b.Retry, i, i+1)
	}
}

// Release forgets worker's lease on batch idx, whose result is already
// stored: the core ends a lease that delivered a result without telling
// the workload, so a copy of a stored batch would otherwise stay open.
func (b *Batches[I]) Release(idx I, worker string) {
	if b.Open[idx] == worker {
		delete(b.Open, idx)
	}
}

// ActiveWorkers counts the workers holding a lease of the job.
func (b *Batches[I]) ActiveWorkers() int {
	seen := map[string]bool{}
	for _, wk := range b.Open {
		seen[wk] = true
	}
	return len(seen)
}

// Problems are the stored records a workload's last Load skipped; it
// implements Quarantiner for the workload that embeds it.
type Problems struct {
	mu   sync.Mutex
	list []store.Quarantined
}

// Quarantined implements Quarantiner.
func (p *Problems) Quarantined() []store.Quarantined {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]store.Quarantined(nil), p.list...)
}

// LoadJobs loads a kind's stored jobs, in store order, for its Load: load
// rebuilds one (and keeps it in memory); a job load refuses is logged and
// quarantined as a noun, never fatal. The skipped jobs of an earlier Load
// are forgotten.
func (p *Problems) LoadJobs(ctx context.Context, st *store.Store, log *zap.Logger, kind, noun string,
	load func(ctx context.Context, rec *store.Job) error) ([]core.JobRef, error) {
	recs, err := st.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.list = nil
	p.mu.Unlock()
	var refs []core.JobRef
	for _, rec := range recs {
		if rec.Kind != kind {
			continue
		}
		if err := load(ctx, rec); err != nil {
			log.Error("stored "+noun+" skipped", zap.String(logging.JobID, rec.ID), zap.Error(err))
			p.mu.Lock()
			p.list = append(p.list, store.Quarantined{Kind: noun, ID: rec.ID, Error: err.Error()})
			p.mu.Unlock()
			continue
		}
		refs = append(refs, core.JobRef{ID: rec.ID, Seq: rec.Seq, Submitter: rec.Submitter})
	}
	return refs, nil
}

// JobStats starts a kind's core.Stats: its jobs counted by state (every
// state present, so that a gauge falls to zero), no units yet.
func JobStats[J any](kind string, jobs map[string]J, state func(J) string) core.Stats {
	st := core.Stats{Jobs: map[core.JobKey]int{}, Units: map[string]int{}}
	for _, s := range []string{store.StateRunning, store.StateDone, store.StateFailed, store.StateCancelled} {
		st.Jobs[core.JobKey{Kind: kind, State: s}] = 0
	}
	for _, j := range jobs {
		st.Jobs[core.JobKey{Kind: kind, State: state(j)}]++
	}
	return st
}

// PluginUnit is a unit of a kind that plugs in, as a worker gets it: its
// payload travels as an Any that the worker's runner of its type unpacks.
func PluginUnit(unitID, jobID string, payload proto.Message) (*arbiterv1.WorkUnit, error) {
	a, err := anypb.New(payload)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.WorkUnit{UnitId: unitID, JobId: jobID, Payload: &arbiterv1.WorkUnit_Plugin{Plugin: a}}, nil
}
