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
