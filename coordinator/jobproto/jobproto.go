// Package jobproto holds what every workload renders the same way on the
// wire.
package jobproto

import (
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// State is a stored job state on the wire.
func State(s string) arbiterv1.JobState {
	switch s {
	case store.StateRunning:
		return arbiterv1.JobState_JOB_STATE_RUNNING
	case store.StateDone:
		return arbiterv1.JobState_JOB_STATE_DONE
	case store.StateFailed:
		return arbiterv1.JobState_JOB_STATE_FAILED
	case store.StateCancelled:
		return arbiterv1.JobState_JOB_STATE_CANCELLED
	}
	return arbiterv1.JobState_JOB_STATE_UNSPECIFIED
}

// MarkPending shows a running job's snapshot as pending: it waits for an
// approver (the core's Pending), and no work of it is leased.
func MarkPending(j *arbiterv1.Job) {
	if j == nil || j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		return
	}
	j.State = arbiterv1.JobState_JOB_STATE_PENDING
	if j.Progress == nil {
		j.Progress = &arbiterv1.JobProgress{}
	}
	j.Progress.Blocked = "waits for an approver's approval"
}

// Unfinished reports whether a job in state s may still change (running
// or pending): watchers keep watching it.
func Unfinished(s arbiterv1.JobState) bool {
	return s == arbiterv1.JobState_JOB_STATE_RUNNING || s == arbiterv1.JobState_JOB_STATE_PENDING
}
