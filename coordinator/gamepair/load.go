package gamepair

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// StoredWorker is what a game workload's snapshots show of a worker that
// has not registered again since a restart: its name and bench speed.
type StoredWorker struct {
	ID, Name string
	BenchNPS uint64
}

// StoredWorkers reads every stored worker for a workload's Load. A row
// whose capabilities do not decode shows no speed.
func StoredWorkers(ctx context.Context, st *store.Store) ([]StoredWorker, error) {
	ws, err := st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]StoredWorker, len(ws))
	for i, sw := range ws {
		var caps core.Caps
		_ = json.Unmarshal([]byte(sw.Capabilities), &caps)
		out[i] = StoredWorker{ID: sw.ID, Name: sw.Name, BenchNPS: caps.BenchNPS}
	}
	return out, nil
}

// CloseError is a store failure while a workload closes, on load, a job
// that was complete but not closed: not the job's fault, so Load fails
// rather than skipping the job.
type CloseError struct{ error }

// NewCloseError wraps err.
func NewCloseError(err error) CloseError { return CloseError{err} }

func (e CloseError) Unwrap() error { return e.error }

// LoadFailure is what a workload's Load does when one stored job failed to
// load with err: fail with the returned error (the context ended, or a
// CloseError), or skip the job and load the rest (nil).
func LoadFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var closing CloseError
	if errors.As(err, &closing) {
		return err
	}
	return nil
}
