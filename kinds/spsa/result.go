package spsa

import (
	"context"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// next is the commit step's hook (gamepair.Hooks.Next): the update of θ
// by the batch, computed on a copy of the tune, stored with the batch
// (and, after the last batch, the tune's end) and only then applied in
// memory. Caller holds mu.
func (w *Workload) next(t *tune, a *gamepair.Accepted) (*gamepair.Step, error) {
	c := &a.Counted
	next := t.st.Clone()
	if err := next.Apply(c.Idx, int(c.Wins), int(c.Losses)); err != nil {
		// The counts passed every check, so this is the tune's failure, not
		// the worker's: nothing is stored.
		a.Log.Error("SPSA update failed", zap.Error(err))
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "tune %s: update: %v", t.Rec.ID, err)
	}
	u := &Update{JobID: t.Rec.ID, Seq: t.st.Updates(), Batch: c.Idx, UnitID: c.UnitID, WorkerID: c.WorkerID, Pairs: c.Pairs,
		Penta: c.Penta, Wins: c.Wins, Draws: c.Draws, Losses: c.Losses, Incidents: c.Incidents, Theta: next.Theta(),
		LeasedAt: c.LeasedAt, At: c.At, ElapsedMS: c.ElapsedMS}
	var jobChange *store.JobChange
	if next.Updates() == t.Batches.Total() {
		jobChange = &store.JobChange{State: store.StateDone, FinishedAt: c.At}
	}
	commit := func(ctx context.Context, pgns []string, change *store.JobChange, events []store.Event) error {
		return CommitUpdate(ctx, w.store, u, pgns, change, events)
	}
	apply := func() []zap.Field {
		t.st = next
		t.traj.add(next.Updates(), u.Theta)
		return []zap.Field{zap.Int("seq", u.Seq), zap.Int64("wins", u.Wins), zap.Int64("losses", u.Losses), zap.Int("updates", next.Updates())}
	}
	return &gamepair.Step{Change: jobChange, Commit: commit, Apply: apply}, nil
}
