package datagen

import (
	"context"
	"database/sql"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Expire implements workload.Retainer: the shards of datasets finished
// before cutoff are deleted (their counts stay, and pull says the data is
// gone), with the coordinator's --pgn-retention. The row is marked before
// the files go, so a crash in between leaves files that the next load's
// sweep removes, never a row that points at nothing unmarked.
func (w *Workload) Expire(ctx context.Context, cutoff, now time.Time) ([]string, error) {
	w.mu.Lock()
	var due []string
	for id, j := range w.jobs {
		if !j.running() && !j.rec.FinishedAt.IsZero() && j.rec.FinishedAt.Before(cutoff) && j.expired.IsZero() {
			due = append(due, id)
		}
	}
	w.mu.Unlock()
	var done []string
	for _, id := range due {
		if err := w.store.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE datagen_jobs SET shards_expired_at=? WHERE job_id=?", now.UnixNano(), id)
			return err
		}); err != nil {
			return done, err
		}
		w.mu.Lock()
		w.jobs[id].expired = now
		w.mu.Unlock()
		done = append(done, id)
	}
	if len(done) > 0 {
		w.sweepExpired(ctx)
	}
	return done, nil
}

// sweepExpired removes the files of shards that only expired datasets
// name.
func (w *Workload) sweepExpired(ctx context.Context) {
	live := map[string]bool{}
	err := w.store.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT DISTINCT s.sha256 FROM datagen_shards s JOIN datagen_jobs j ON j.job_id = s.job_id
			WHERE j.shards_expired_at = 0`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sha string
			if err := rows.Scan(&sha); err != nil {
				return err
			}
			live[sha] = true
		}
		return rows.Err()
	})
	if err != nil {
		w.log.Warn("datagen retention: shards kept", zap.Error(err))
		return
	}
	all, err := referencedShards(ctx, w.store)
	if err != nil {
		return
	}
	for sha := range all {
		if !live[sha] {
			if err := os.Remove(w.shardPath(sha)); err != nil && !os.IsNotExist(err) {
				w.log.Warn("datagen retention: shard not removed", zap.String("sha256", sha), zap.Error(err))
			}
		}
	}
}

// expiredAt is when a dataset's shards were deleted (zero: never).
func expiredAt(ctx context.Context, st *store.Store, jobID string) (time.Time, error) {
	var at int64
	err := st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		return db.QueryRowContext(ctx, "SELECT shards_expired_at FROM datagen_jobs WHERE job_id=?", jobID).Scan(&at)
	})
	if err != nil || at == 0 {
		return time.Time{}, err
	}
	return time.Unix(0, at), nil
}
