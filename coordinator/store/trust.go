package store

// Trust between workers (coordinator/gamepair/trust.go decides; this file
// keeps). Two tables, versioned as the schema "trust" beside the core's:
//
//   - worker_trust: one row per worker identity that has earned or lost
//     trust: the batches of it a worker of another, trusted identity
//     replayed with the same moves (agreed), and when and why it was found
//     lying (lied_at 0: never). A liar's row is never deleted: its
//     identity is not trusted again.
//   - job_distrust: the identities excluded from a job for a replay that
//     contradicted them; a restarted coordinator keeps them excluded.
//
// Invariant: a purge (PurgeIdentity) deletes an identity's batches and
// their games from a test, stores the test's recomputed SPRT state (both
// by the job kind's PurgeRows, which the test kind registers: the tables
// are its own), marks the identity, excludes it from the job and stores
// the events in one transaction: after a crash the test holds either
// every one of its batches and the old state, or none of them and the new
// state.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var trustSchema = KindSchema{Kind: "trust",
	Migrations: []Migration{{Name: "worker trust and job exclusions", Up: trustTables("INTEGER")}},
	Postgres:   []Migration{{Name: "worker trust and job exclusions", Up: trustTables("BIGINT")}},
}

func trustTables(integer string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, strings.ReplaceAll(`
CREATE TABLE worker_trust (
  identity TEXT PRIMARY KEY,
  agreed INT NOT NULL DEFAULT 0,
  lied_at INT NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT ''
);
CREATE TABLE job_distrust (
  job_id TEXT NOT NULL,
  identity TEXT NOT NULL,
  reason TEXT NOT NULL,
  at INT NOT NULL,
  PRIMARY KEY (job_id, identity)
);`, "INT ", integer+" "))
		return err
	}
}

func init() { RegisterSchema(trustSchema) }

// TrustRecord is what the store keeps of one identity's trust.
type TrustRecord struct {
	Identity string
	Agreed   int64     // batches another trusted identity's replay confirmed
	LiedAt   time.Time // zero: never found lying
	Reason   string    // why it was found lying
}

// TrustRecords returns every stored trust record.
func (s *Store) TrustRecords(ctx context.Context) ([]TrustRecord, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT identity, agreed, lied_at, reason FROM worker_trust ORDER BY identity")
	if err != nil {
		return nil, fmt.Errorf("store: trust: %w", err)
	}
	defer rows.Close()
	var out []TrustRecord
	for rows.Next() {
		var r TrustRecord
		var lied int64
		if err := rows.Scan(&r.Identity, &r.Agreed, &lied, &r.Reason); err != nil {
			return nil, err
		}
		r.LiedAt = FromUnixNano(lied)
		out = append(out, r)
	}
	return out, rows.Err()
}

// AddAgreed adds n confirmed batches to identity's trust.
func (s *Store) AddAgreed(ctx context.Context, identity string, n int64) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO worker_trust(identity, agreed) VALUES(?,?)
			ON CONFLICT(identity) DO UPDATE SET agreed = worker_trust.agreed + excluded.agreed`, identity, n)
		return err
	})
}

// MarkLiar stores identity as a liar, with why (an admin's verdict; a
// liar caught by a replay is marked by PurgeIdentity).
func (s *Store) MarkLiar(ctx context.Context, identity, reason string, at time.Time) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error { return markLiar(ctx, tx, identity, reason, at) })
}

func markLiar(ctx context.Context, tx *sql.Tx, identity, reason string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO worker_trust(identity, agreed, lied_at, reason) VALUES(?,0,?,?)
		ON CONFLICT(identity) DO UPDATE SET lied_at = excluded.lied_at, reason = excluded.reason`,
		identity, UnixNano(at), reason); err != nil {
		return fmt.Errorf("store: mark liar: %w", err)
	}
	return nil
}

// JobDistrust returns the identities excluded from job jobID, with why.
func (s *Store) JobDistrust(ctx context.Context, jobID string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT identity, reason FROM job_distrust WHERE job_id=?", jobID)
	if err != nil {
		return nil, fmt.Errorf("store: job distrust: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, reason string
		if err := rows.Scan(&id, &reason); err != nil {
			return nil, err
		}
		out[id] = reason
	}
	return out, rows.Err()
}

// WorkerOwners returns the identity that registered each worker id, for
// the workers of ids (unknown ids are absent).
func (s *Store) WorkerOwners(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		var owner string
		err := s.db.QueryRowContext(ctx, "SELECT owner FROM workers WHERE id=?", id).Scan(&owner)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: worker owner: %w", err)
		}
		out[id] = owner
	}
	return out, nil
}

// Purge is an identity found lying in a job, and what that changes.
type Purge struct {
	JobID, Identity, Reason string
	At                      time.Time
	// WorkerIDs are the identity's workers whose batches of the job are
	// deleted with their games (none: nothing of it was counted).
	WorkerIDs []string
	// SPRT is the test's SPRT state recomputed without those batches;
	// SetSPRT false leaves it alone (a job that is not a test). The job
	// kind's PurgeRows writes both.
	SPRT    string
	SetSPRT bool
	// Change is the job's final state when the recomputed state decides
	// it (nil: it runs on).
	Change *JobChange
	Events []Event
}

// PurgeRows is a kind's part of a purge, run inside PurgeIdentity's
// transaction: deleting the batches p.WorkerIDs counted in p.JobID with
// their games, and storing p.SPRT when p.SetSPRT (the test kind's). The
// store keeps no table of a kind's batches, so it names none here.
type PurgeRows func(ctx context.Context, tx *sql.Tx, p *Purge) error

var (
	purgeMu   sync.Mutex
	purgeRows = map[string]PurgeRows{}
)

// RegisterPurge declares the purge of a kind's rows for its jobs of the
// job kinds given (the jobs row's kind), from the kind's init. A job of a
// kind with none keeps its rows: only the exclusion, the liar's mark and
// the events are stored (a tune's updates, applied, stay).
func RegisterPurge(jobKinds []string, fn PurgeRows) {
	purgeMu.Lock()
	defer purgeMu.Unlock()
	for _, k := range jobKinds {
		purgeRows[k] = fn
	}
}

func purgeRowsOf(kind string) PurgeRows {
	purgeMu.Lock()
	defer purgeMu.Unlock()
	return purgeRows[kind]
}

// PurgeIdentity applies p in one transaction (the invariant at the top).
func (s *Store) PurgeIdentity(ctx context.Context, p *Purge) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		var kind string
		if err := tx.QueryRowContext(ctx, "SELECT kind FROM jobs WHERE id=?", p.JobID).Scan(&kind); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: purge: %w", err)
		}
		if fn := purgeRowsOf(kind); fn != nil {
			if err := fn(ctx, tx, p); err != nil {
				return err
			}
		}
		if p.Change != nil {
			if err := setJobState(ctx, tx, p.JobID, p.Change); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO job_distrust(job_id, identity, reason, at) VALUES(?,?,?,?)
			ON CONFLICT(job_id, identity) DO NOTHING`, p.JobID, p.Identity, p.Reason, UnixNano(p.At)); err != nil {
			return fmt.Errorf("store: job distrust: %w", err)
		}
		if err := markLiar(ctx, tx, p.Identity, p.Reason, p.At); err != nil {
			return err
		}
		return insertEvents(ctx, tx, p.Events)
	})
}
