package store

import (
	"context"
	"database/sql"
)

// migrateJobsSeq indexes jobs by their sequence number: a new job's number
// is MAX(seq)+1 (numberJob), which without the index reads every job row,
// so storing job n cost O(n) and filling a store of 100,000 tests took
// quadratic time; the load's ORDER BY seq uses it too.
func migrateJobsSeq(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS jobs_seq ON jobs(seq)`)
	return err
}
