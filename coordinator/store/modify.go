package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Running a stopped job again (ReopenJob). A kind changes its running
// jobs in its own tables (kinds/test's ModifyTest) and refuses a job that
// is not running with ErrNotRunning.

// ErrNotRunning is returned for a change to a job that is not running.
var ErrNotRunning = errors.New("not running")

// ErrNotStopped is returned by ReopenJob for a job that was not cancelled.
var ErrNotStopped = errors.New("not cancelled")

// ReopenJob sets a cancelled job running again (its finish time and reason
// cleared) and returns its row as it now stands.
func (s *Store) ReopenJob(ctx context.Context, jobID string) (*Job, error) {
	var out *Job
	err := s.write(func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE jobs SET state=?, error='', finished_at=0 WHERE id=? AND state=?",
			StateRunning, jobID, StateCancelled)
		if err != nil {
			return fmt.Errorf("store: update job: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("store: job %s: %w", jobID, ErrNotStopped)
		}
		j, err := scanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id=?", jobID))
		if err != nil {
			return err
		}
		out = j
		return nil
	})
	return out, err
}
