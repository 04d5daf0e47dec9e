package spsa

import (
	"context"
	"fmt"
	"math"
	"slices"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	sp "github.com/arbiter-chess/arbiter/spsa"
)

// loadTune rebuilds one tune from the store (gamepair.Hooks.Load): spec,
// updates (θ after the last, the trajectory, the counts) and its workers'
// events. A running tune resumes at θ after its last stored update; every
// batch not applied is open again. A tune whose row is missing or
// undecodable, whose spec is no longer valid, or with an update row that
// does not fit it (a seq out of order, a batch outside the tune or applied
// twice, counts that do not add up, θ outside the ranges) is not served: a
// tune's θ is the chain of its updates, so one bad row stops the whole
// tune. The rest loads, and LoadProblems lists it (Kind "tune").
func (w *Workload) loadTune(ctx context.Context, rec *store.Job) (*tune, *gamepair.Stored, error) {
	id := rec.ID
	row, err := LoadTune(ctx, w.store, id)
	if err != nil {
		return nil, nil, err
	}
	spec := &arbiterv1.SpsaSpec{}
	if err := proto.Unmarshal(row.Spec, spec); err != nil {
		return nil, nil, fmt.Errorf("spec: %w", err)
	}
	if row.BatchPairs < 1 || uint64(row.BatchPairs) > max(spec.GetPairs(), 1) || row.BatchPairs > gamepair.MaxBatchPairs {
		return nil, nil, fmt.Errorf("batch pairs %d: want 1 to %d", row.BatchPairs, min(spec.GetPairs(), gamepair.MaxBatchPairs))
	}
	var t *tune
	if rec.State == store.StateRunning {
		c, err := w.checkSpec(spec, row.BatchPairs)
		if err != nil {
			return nil, nil, fmt.Errorf("spec no longer valid: %w", err)
		}
		t = w.newTune(c)
	} else {
		// A finished tune only shows its snapshot: its book is not read
		// again, nor its engine checked.
		spec.BatchPairs = uint32(row.BatchPairs)
		st, err := sp.New(configOf(spec))
		if err != nil {
			return nil, nil, fmt.Errorf("spec: %w", err)
		}
		t = &tune{Job: gamepair.Job{Workers: w.cfg.NewWorkers()}, spec: gamepair.WithoutOpenings(spec), st: st}
		t.traj.every = max(1, st.Config().Batches()/w.cfg.TrajectoryPoints)
	}
	t.Rec = rec
	updates, err := Updates(ctx, w.store, id)
	if err != nil {
		return nil, nil, fmt.Errorf("updates: %w", err)
	}
	counted, err := w.replay(t, updates)
	if err != nil {
		return nil, nil, err
	}
	return t, &gamepair.Stored{Counted: counted, PGNsExpired: !row.PGNsExpired.IsZero()}, nil
}

// replay takes a tune's stored updates in the order they were applied: θ
// resumes from the last one, the trajectory is rebuilt, and the updates
// are returned for the Set to count. Replaying the recorded results from the start must give the
// same θ; when it does not (another build's arithmetic), the stored θ
// stands and the difference is logged.
func (w *Workload) replay(t *tune, updates []Update) ([]gamepair.Counted, error) {
	cfg := t.st.Config()
	seen := make(map[int]bool, len(updates))
	counted := make([]gamepair.Counted, 0, len(updates))
	check, err := sp.New(cfg)
	if err != nil {
		return nil, err
	}
	t.traj.add(0, check.Theta())
	pairs := 0
	for i := range updates {
		u := &updates[i]
		c := gamepair.Counted{UnitID: u.UnitID, WorkerID: u.WorkerID, Idx: u.Batch, Pairs: u.Pairs, Penta: u.Penta, Wins: u.Wins,
			Draws: u.Draws, Losses: u.Losses, Incidents: u.Incidents, LeasedAt: u.LeasedAt, At: u.At, ElapsedMS: u.ElapsedMS}
		if err := checkUpdate(t, cfg, u, &c, i, seen); err != nil {
			return nil, err
		}
		seen[u.Batch] = true
		if err := check.Apply(u.Batch, int(u.Wins), int(u.Losses)); err != nil {
			return nil, fmt.Errorf("update %d: %w", u.Seq, err)
		}
		pairs += u.Pairs
		t.traj.add(i+1, u.Theta)
		counted = append(counted, c)
	}
	if n := len(updates); n > 0 {
		if err := t.st.Restore(updates[n-1].Theta, n, pairs); err != nil {
			return nil, fmt.Errorf("update %d: %w", n-1, err)
		}
		if !slices.Equal(check.Theta(), t.st.Theta()) {
			w.log.Warn("replayed theta differs from the stored one; the stored one stands", zap.String(logging.JobID, t.Rec.ID),
				zap.Float64s("replayed", check.Theta()), zap.Float64s("stored", t.st.Theta()))
		}
	}
	return counted, nil
}

// checkUpdate refuses a stored update that does not fit the tune, so that
// no stored row can make a loop long, a count wrong or θ leave its range.
func checkUpdate(t *tune, cfg sp.Config, u *Update, c *gamepair.Counted, i int, seen map[int]bool) error {
	if u.Seq != i {
		return fmt.Errorf("update %d is stored as seq %d: the order of application has a gap", i, u.Seq)
	}
	if u.Batch < 0 || u.Batch >= cfg.Batches() {
		return fmt.Errorf("update %d: batch %d is outside the tune's %d batches", i, u.Batch, cfg.Batches())
	}
	if seen[u.Batch] || u.UnitID != gamepair.UnitID(t.Rec.ID, u.Batch) {
		return fmt.Errorf("update %d: batch %d applied twice, or its unit id does not name it", i, u.Batch)
	}
	if _, n := cfg.BatchRange(u.Batch); u.Pairs != n {
		return fmt.Errorf("update %d: %d pairs stored; batch %d has %d", i, u.Pairs, u.Batch, n)
	}
	if err := c.CheckCounts(); err != nil {
		return fmt.Errorf("update %d: %w", i, err)
	}
	if len(u.Theta) != len(cfg.Params) {
		return fmt.Errorf("update %d: theta has %d values for %d parameters", i, len(u.Theta), len(cfg.Params))
	}
	for k, v := range u.Theta {
		if p := cfg.Params[k]; math.IsNaN(v) || v < p.Min || v > p.Max {
			return fmt.Errorf("update %d: theta of %s is %v, outside [%v, %v]", i, p.Name, v, p.Min, p.Max)
		}
	}
	return nil
}
