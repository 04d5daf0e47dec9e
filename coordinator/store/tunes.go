package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SPSA tunes are jobs (a row in jobs, kind "spsa") with a row in tunes (the
// spec, as the client's protobuf bytes) and one row in tune_updates per
// applied update, numbered by seq in the order the updates were applied:
// the batch, its counts and incidents, and θ after the update. The batch
// index is unique per tune, so no batch is applied twice; the seq order is
// what a replay follows. Games go to pgns like a test's.

// Tune is an SPSA tune's own row.
type Tune struct {
	JobID      string
	Spec       []byte // the SpsaSpec, protobuf-encoded
	BatchPairs int
	// PGNsExpired is when the retention setting deleted the tune's games
	// (zero while they are kept).
	PGNsExpired time.Time
}

// TuneUpdate is one applied update of a tune.
type TuneUpdate struct {
	JobID     string
	Seq       int // 0, 1, 2, ...: the order of application
	Batch     int
	UnitID    string
	WorkerID  string
	Pairs     int
	Penta     [5]int64
	Wins      int64
	Draws     int64
	Losses    int64
	Incidents string    // opaque, as Batch's
	Theta     []float64 // after the update
	LeasedAt  time.Time
	At        time.Time
	ElapsedMS int64
}

// CreateTune stores a tune's job row and tune row in one transaction.
func (s *Store) CreateTune(ctx context.Context, j *Job, t *Tune) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		if err := numberJob(ctx, tx, j); err != nil {
			return err
		}
		if err := insertJob(ctx, tx, j, "[]", ""); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO tunes(job_id,spec,batch_pairs) VALUES(?,?,?)", j.ID, t.Spec, t.BatchPairs); err != nil {
			return fmt.Errorf("store: insert tune: %w", err)
		}
		return nil
	})
}

// Tune returns a tune's row.
func (s *Store) Tune(ctx context.Context, jobID string) (*Tune, error) {
	t := &Tune{JobID: jobID}
	var expired int64
	err := s.db.QueryRowContext(ctx, "SELECT spec, batch_pairs, pgns_expired_at FROM tunes WHERE job_id=?", jobID).Scan(&t.Spec, &t.BatchPairs, &expired)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: tune %s: %w", jobID, ErrNotFound)
	}
	t.PGNsExpired = FromUnixNano(expired)
	return t, err
}

// CommitTuneUpdate writes, in one transaction, an applied update with its
// games, the job's final state (when the tune ends) and events. The
// coordinator acknowledges the worker only after it returns nil. A second
// update of the same batch, or a seq taken, fails: an update is applied
// once.
func (s *Store) CommitTuneUpdate(ctx context.Context, u *TuneUpdate, pgns []string, job *JobChange, events []Event) error {
	theta, err := json.Marshal(u.Theta)
	if err != nil {
		return fmt.Errorf("store: tune %s: theta: %w", u.JobID, err)
	}
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tune_updates(job_id,seq,batch_idx,unit_id,worker_id,pairs,penta,wins,draws,losses,
			incidents,theta,leased_at,at,elapsed_ms) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			u.JobID, u.Seq, u.Batch, u.UnitID, u.WorkerID, u.Pairs, encodePenta(u.Penta), u.Wins, u.Draws, u.Losses,
			u.Incidents, string(theta), UnixNano(u.LeasedAt), UnixNano(u.At), u.ElapsedMS); err != nil {
			return fmt.Errorf("store: insert tune update: %w", err)
		}
		if err := insertPGNs(ctx, tx, u.JobID, u.Batch, pgns); err != nil {
			return err
		}
		if job != nil {
			if err := setJobState(ctx, tx, u.JobID, job); err != nil {
				return err
			}
		}
		return insertEvents(ctx, tx, events)
	})
}

// TuneUpdates returns a tune's updates in the order they were applied.
func (s *Store) TuneUpdates(ctx context.Context, jobID string) ([]TuneUpdate, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, batch_idx, unit_id, worker_id, pairs, penta, wins, draws, losses, incidents, theta,
		leased_at, at, elapsed_ms FROM tune_updates WHERE job_id=? ORDER BY seq`, jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TuneUpdate
	for rows.Next() {
		u := TuneUpdate{JobID: jobID}
		var penta, theta string
		var leased, at int64
		if err := rows.Scan(&u.Seq, &u.Batch, &u.UnitID, &u.WorkerID, &u.Pairs, &penta, &u.Wins, &u.Draws, &u.Losses, &u.Incidents,
			&theta, &leased, &at, &u.ElapsedMS); err != nil {
			return nil, err
		}
		if u.Penta, err = decodePenta(penta); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(theta), &u.Theta); err != nil {
			return nil, fmt.Errorf("store: tune %s update %d: theta: %w", jobID, u.Seq, err)
		}
		u.LeasedAt, u.At = FromUnixNano(leased), FromUnixNano(at)
		out = append(out, u)
	}
	return out, rows.Err()
}
