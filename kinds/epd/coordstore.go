package epd

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// schema is the workload's tables: a row per job (its spec) and a row per
// merged batch (the checked result, as the coordinator counted it).
var schema = store.KindSchema{Kind: Kind, Migrations: []store.Migration{
	{Name: "epd jobs and batch results", Up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
CREATE TABLE epd_jobs (
  job_id TEXT PRIMARY KEY,
  spec BLOB NOT NULL
);
CREATE TABLE epd_results (
  job_id TEXT NOT NULL,
  batch INTEGER NOT NULL,
  result BLOB NOT NULL,
  worker_id TEXT NOT NULL,
  elapsed_ms INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (job_id, batch)
) WITHOUT ROWID;
`)
		return err
	}},
}, Postgres: []store.Migration{
	{Name: "epd jobs and batch results", Up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
CREATE TABLE epd_jobs (
  job_id TEXT PRIMARY KEY,
  spec BYTEA NOT NULL
);
CREATE TABLE epd_results (
  job_id TEXT NOT NULL,
  batch BIGINT NOT NULL,
  result BYTEA NOT NULL,
  worker_id TEXT NOT NULL,
  elapsed_ms BIGINT NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (job_id, batch)
);
`)
		return err
	}},
}}

// resultRow is one merged batch.
type resultRow struct {
	JobID     string
	Batch     uint32
	WorkerID  string
	ElapsedMS int64
	At        time.Time
	Result    *arbiterv1.EpdResult // the checked copy (Merger.Check)
}

func createJobRow(ctx context.Context, st *store.Store, rec *store.Job, spec []byte) error {
	return st.CreateKindJob(ctx, rec, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO epd_jobs(job_id,spec) VALUES(?,?)", rec.ID, spec)
		return err
	})
}

func loadJobRow(ctx context.Context, st *store.Store, jobID string) (spec []byte, err error) {
	err = st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		return db.QueryRowContext(ctx, "SELECT spec FROM epd_jobs WHERE job_id=?", jobID).Scan(&spec)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no epd_jobs row")
	}
	return spec, err
}

// commitResultRow stores a batch's row and, when it ends the job, the
// job's final state, in one transaction. A second row for the batch fails
// on the primary key: a batch is stored once.
func commitResultRow(ctx context.Context, st *store.Store, r *resultRow, done *store.JobChange) error {
	data, err := proto.Marshal(r.Result)
	if err != nil {
		return err
	}
	return st.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO epd_results(job_id,batch,result,worker_id,elapsed_ms,at) VALUES(?,?,?,?,?,?)",
			r.JobID, int64(r.Batch), data, r.WorkerID, r.ElapsedMS, r.At.UnixNano()); err != nil {
			return fmt.Errorf("store: insert epd result: %w", err)
		}
		if done != nil {
			return store.SetJobStateTx(ctx, tx, r.JobID, done)
		}
		return nil
	})
}

// loadResultRows returns a job's stored batch results in batch order.
func loadResultRows(ctx context.Context, st *store.Store, jobID string) ([]*arbiterv1.EpdResult, error) {
	var out []*arbiterv1.EpdResult
	err := st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT batch, result FROM epd_results WHERE job_id=? ORDER BY batch", jobID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var batch int64
			var data []byte
			if err := rows.Scan(&batch, &data); err != nil {
				return err
			}
			r := &arbiterv1.EpdResult{}
			if err := proto.Unmarshal(data, r); err != nil {
				return fmt.Errorf("batch %d: %w", batch, err)
			}
			if int64(r.Batch) != batch {
				return fmt.Errorf("row of batch %d holds batch %d's result", batch, r.Batch)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}
