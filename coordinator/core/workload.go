package core

import (
	"context"
	"time"
)

// Workload is one kind of work: perft jobs, game-pair tests, verify
// sessions, and whatever comes next. The core owns workers, leases, the
// clock, scheduling between jobs of every kind and the check of a result
// against its lease; a workload owns its jobs, its units and its store rows.
//
// Locking: the core calls Candidates, Take, Ended, Adopt and Locate with its
// own lock held, so a workload must answer them from memory, quickly, and
// must never call back into the core from them (it may call its Host, whose
// methods take no core lock). Load, Create, Result, Cancel, Snapshot and
// Stats are called without the core lock; a workload guards its state with
// its own lock, taken after the core's when both are held.
type Workload interface {
	// Kind names the workload in logs and errors ("perft", "test", "verify").
	Kind() string

	// Load rebuilds the workload's jobs from the store and returns them.
	Load(ctx context.Context) ([]JobRef, error)
	// Create validates spec, stores a new job and returns it. Nothing is
	// stored when the spec is refused (an *apierr.Error naming the field).
	Create(ctx context.Context, spec any, submitter string) (JobRef, error)

	// Candidates appends the workload's running jobs to out, each marked
	// Ready when w may take one of its units now.
	Candidates(w *Worker, out []Candidate) []Candidate
	// Take assigns one unit of job jobID to w and returns its id and what
	// the worker is sent; ok is false when the job has no unit for w. The
	// core then grants the lease.
	Take(jobID string, w *Worker, now time.Time) (unitID string, payload any, ok bool)
	// Ended tells the workload that a lease ended without a result.
	Ended(l Lease, why End)
	// Locate returns the job of a unit id, for leases the core does not
	// know (issued before a restart, or expired a moment ago).
	Locate(unitID string) (jobID string, ok bool)
	// Adopt decides what becomes of a lease this coordinator issued (its
	// signature checks) but no longer tracks: give it back to its worker
	// (AdoptActive, and the workload counts the unit as leased again), let
	// the worker finish and submit (AdoptLost), or stop it (AdoptCancelled).
	Adopt(l Lease, w *Worker) Adoption

	// Result checks a result for the unit of lease l and, when it counts,
	// stores it durably before returning. live is false for a lease the
	// core no longer tracks (a late result under a valid signature).
	Result(ctx context.Context, r ResultCall) (Outcome, error)
	// Cancel stops a running job; stored results are kept.
	Cancel(ctx context.Context, jobID, reason string) error

	// Snapshot renders a job for clients (nil, false for an unknown id).
	Snapshot(jobID string, full bool) (any, bool)
	// Stats counts jobs and units for metrics.
	Stats() Stats
}

// Host is what a workload may call on the core. WorkAvailable and
// JobChanged only signal: call them at any time, under the workload's own
// lock or not. LiveWorkers, LiveIdentities and EndJobLeases take the
// core's lock: call them without the workload's (from Create, say), never
// from a method the core calls.
type Host interface {
	// WorkAvailable wakes workers waiting in Lease.
	WorkAvailable()
	// JobChanged wakes watchers of a job.
	JobChanged(jobID string)
	// LiveWorkers counts the workers with capability tag seen (by any
	// call) within the last lease duration, holding a lease or waiting in
	// Lease now: the farm a new job is cut for.
	LiveWorkers(tag string) int
	// LiveIdentities counts the identities (credentials) of those
	// workers: how many independent witnesses the farm has now.
	LiveIdentities(tag string) int
	// LiveIdentitiesFit counts the identities of those workers whose
	// capabilities fits accepts: the witnesses that could play one job's
	// units (its engines, its tables) now.
	LiveIdentitiesFit(tag string, fits func(Caps) bool) int
	// EndJobLeases ends every lease of a job the workload closed on its
	// own (a session its client closed or stopped asking about): the
	// workers' heartbeats then say cancelled. It takes the core's lock and
	// calls the workload's Ended: never call it under the workload's lock.
	EndJobLeases(jobID string)
	// Ready is nil while the core serves (a service of the workload's own
	// refuses calls once it is shutting down).
	Ready() error
}

// JobRef names a job and its place in submission order.
type JobRef struct {
	ID  string
	Seq int64
	// Submitter is the identity that created the job ("" for jobs stored
	// before identities existed).
	Submitter string
}

// Candidate is a running job as the scheduler sees it.
type Candidate struct {
	JobID string
	// Priority: higher first, whatever the kind.
	Priority int32
	// Share is the job's throughput weight among jobs of equal priority
	// (positive).
	Share float64
	// InFlight is the number of its leases out now.
	InFlight int
	// Ready is true when the worker asking may take one of its units.
	Ready bool
	// Kind is filled in by the core.
	wl Workload
}

// End says why a lease ended without a result.
type End struct {
	// Expired: no heartbeat within the lease duration (a lost worker).
	Expired bool
	// Reason is the worker's reason for a release.
	Reason string
	// CannotRun: the worker cannot run this job (a missing engine); do not
	// offer it the job again.
	CannotRun bool
	// JobOver: the job finished or was cancelled; nothing to re-queue.
	JobOver bool
}

// Adoption is a workload's answer for a lease the core no longer tracks.
type Adoption int

const (
	// AdoptLost: the unit may have gone to someone else; a result may still
	// be submitted.
	AdoptLost Adoption = iota
	// AdoptActive: the worker keeps the unit under its lease.
	AdoptActive
	// AdoptCancelled: the job is over or the unit settled; stop.
	AdoptCancelled
)

// ResultCall is one result for a workload to judge.
type ResultCall struct {
	Lease   Lease
	Worker  *Worker
	Live    bool // the lease is live (not a late result under a signed id)
	Result  any
	Elapsed time.Duration
}

// Outcome is what became of a result.
type Outcome struct {
	Verdict Verdict
	// EndUnitLeases ends every lease on the unit (its result is in, and
	// others computing it should stop).
	EndUnitLeases bool
	// JobOver ends every lease of the job (it finished).
	JobOver bool
}

// Verdict of a result, as the worker is told.
type Verdict int

const (
	Accepted Verdict = iota + 1
	Duplicate
	Mismatch
	Discarded
)

func (v Verdict) String() string {
	switch v {
	case Accepted:
		return "accepted"
	case Duplicate:
		return "duplicate"
	case Mismatch:
		return "mismatch"
	case Discarded:
		return "discarded"
	}
	return "unknown"
}

// Stats are a workload's counts for metrics: jobs by kind and state, units
// of running jobs by state ("queued", "leased", "done").
type Stats struct {
	Jobs  map[JobKey]int
	Units map[string]int
}

// JobKey labels arbiter_jobs.
type JobKey struct{ Kind, State string }
