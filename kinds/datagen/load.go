package datagen

import (
	"bytes"
	"context"
	"fmt"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Load implements core.Workload: every dataset, finished ones with their
// counts. A running dataset resumes: its stored shards stay counted, the
// positions they hold are seen again (for duplicates), and every other
// batch is open again with the same index and seed.
func (w *Workload) Load(ctx context.Context) ([]core.JobRef, error) {
	refs, err := w.LoadJobs(ctx, w.store, w.log, Kind, "dataset", func(ctx context.Context, rec *store.Job) error {
		j, err := w.loadJob(ctx, rec)
		if err != nil {
			return err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.jobs[rec.ID] = j
		if j.running() {
			w.running = append(w.running, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("datagen: load jobs: %w", err)
	}
	w.sweep(ctx)
	return refs, nil
}

// loadJob rebuilds one dataset from its rows (and, while it runs, its
// shards' positions).
func (w *Workload) loadJob(ctx context.Context, rec *store.Job) (*job, error) {
	specBytes, batchGames, err := loadJobRow(ctx, w.store, rec.ID)
	if err != nil {
		return nil, err
	}
	spec := &arbiterv1.DatagenSpec{}
	if err := proto.Unmarshal(specBytes, spec); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, f, games, err := checkSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("spec no longer valid: %w", err)
	}
	if games != batchGames {
		return nil, fmt.Errorf("batch games %d stored, the spec says %d", batchGames, games)
	}
	j := w.newJob(spec, s, f, games)
	j.rec = rec
	if j.expired, err = expiredAt(ctx, w.store, rec.ID); err != nil {
		return nil, err
	}
	rows, err := loadShards(ctx, w.store, rec.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		r := &rows[i]

		if r.Seq != int64(i) || r.UnitID != unitID(rec.ID, r.Batch) || j.stored[r.Batch] {
			return nil, fmt.Errorf("shard %d: out of order, not named for its batch, or stored twice", i)
		}
		if r.Positions > uint64(r.Records) || r.Games != games {
			return nil, fmt.Errorf("shard %d: %d positions of %d records, %d games: do not fit the batch", i, r.Positions, r.Records, r.Games)
		}
		if j.running() {
			if err := w.reseen(j, r); err != nil {
				return nil, fmt.Errorf("shard %d: %w", i, err)
			}
		}
		w.count(j, r)
	}
	if !j.running() {
		j.seen, j.stored, j.open, j.excluded = nil, nil, nil, nil
		return j, nil
	}
	if j.prog.positions >= spec.GetPositions() {
		change := &store.JobChange{State: store.StateDone, FinishedAt: w.deps.Now()}
		if err := w.store.SetJobState(ctx, rec.ID, change); err != nil {
			return nil, fmt.Errorf("close: %w", err)
		}
		w.finish(j, change)
		return j, nil
	}
	w.log.Info("dataset resumed", zap.String(logging.JobID, rec.ID), zap.Uint64("positions", j.prog.positions),
		zap.Uint64("shards", j.prog.shards))
	return j, nil
}

// reseen adds a stored shard's counted positions to j.seen.
func (w *Workload) reseen(j *job, r *shardRow) error {
	data, err := w.readShard(r.SHA256)
	if err != nil {
		return err
	}
	lim := dg.DefaultLimits()
	lim.MaxGames = j.batchGames
	gs, err := dg.DecodeShard(bytes.NewReader(data), lim)
	if err != nil {
		return err
	}
	for _, g := range gs {
		for _, rec := range dg.Records(g, j.filters) {
			j.seen[dg.PositionKey(rec.FEN)] = struct{}{}
		}
	}
	return nil
}
