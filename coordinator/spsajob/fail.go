package spsajob

import (
	"context"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Fail implements core.Failer: a running tune ends failed with reason (no
// worker could start it). Counted batches and their games stay, as on
// Cancel.
func (w *Workload) Fail(ctx context.Context, jobID, reason string) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	change := &store.JobChange{State: store.StateFailed, Error: reason, FinishedAt: w.cfg.Now()}
	return gamepair.Cancel(ctx, w.store, &w.mu, w.tunes, func(t *tune) *store.Job { return t.rec }, jobID, change, w.finish)
}

var _ core.Failer = (*Workload)(nil)
