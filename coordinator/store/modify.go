package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Changing a test while it runs (ModifyTest) and running a stopped one
// again (ReopenJob): no new tables, the job's row and the test's spec.

// TestChange is what ModifyTest writes: the job row's scheduling and
// batch count, and the stored spec, which Edit rewrites (the store does
// not read specs).
type TestChange struct {
	Priority   int32
	Throughput float64
	UnitsTotal int
	Edit       func(spec []byte) ([]byte, error)
}

// ModifyTest writes a running test's change in one transaction; a test
// that is not running is refused (ErrNotRunning) and nothing changes.
func (s *Store) ModifyTest(ctx context.Context, jobID string, ch TestChange) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		var spec []byte
		var state string
		err := tx.QueryRowContext(ctx, "SELECT t.spec, j.state FROM tests t JOIN jobs j ON j.id = t.job_id WHERE t.job_id=?", jobID).Scan(&spec, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: test %s: %w", jobID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if state != StateRunning {
			return fmt.Errorf("store: test %s is %s: %w", jobID, state, ErrNotRunning)
		}
		if spec, err = ch.Edit(spec); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE tests SET spec=? WHERE job_id=?", spec, jobID); err != nil {
			return fmt.Errorf("store: update test: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE jobs SET priority=?, throughput=?, units_total=? WHERE id=?",
			ch.Priority, ch.Throughput, ch.UnitsTotal, jobID); err != nil {
			return fmt.Errorf("store: update job: %w", err)
		}
		return nil
	})
}

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
