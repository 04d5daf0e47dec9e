package spsa

// The SPSA kind's tables. A tune is a job (the core's row in jobs, kind
// spsa) with a row in tunes (the spec, as the client's protobuf bytes)
// and one row in tune_updates per applied update, numbered by seq in the
// order the updates were applied: the batch, its counts and incidents,
// and θ after the update. The batch index is unique per tune, so no batch
// is applied twice; the seq order is what a replay follows. Games go to
// the core's pgns, as a test's do (store.FinishUnitTx), and the retention
// setting deletes them through tunes.pgns_expired_at (GameTable).
//
// Step 4 of the core's schema created these two tables in the releases
// before the kind kept them (2026-12-05); no later step changed them, and
// that step is empty now. The kind's first step creates them only where
// they are missing, so a file made by an earlier release keeps its tunes,
// and a new file gets the same tables and columns it would have had.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// GameTable is the tunes' table of jobs with games, for the retention
// setting (store.ExpireGames).
const GameTable store.GameTable = "tunes"

var schema = store.KindSchema{Kind: Kind, Migrations: []store.Migration{
	{Name: "SPSA tunes: tunes, tune_updates", Up: tables("INTEGER", "BLOB", " WITHOUT ROWID")},
}, Postgres: []store.Migration{
	{Name: "SPSA tunes: tunes, tune_updates", Up: tables("BIGINT", "BYTEA", "")},
}}

// tables is the first step in a backend's types; rowid is SQLite's table
// option.
func tables(integer, blob, rowid string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS tunes (
  job_id TEXT PRIMARY KEY,
  spec %[2]s NOT NULL,
  batch_pairs %[1]s NOT NULL,
  pgns_expired_at %[1]s NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS tune_updates (
  job_id TEXT NOT NULL,
  seq %[1]s NOT NULL,
  batch_idx %[1]s NOT NULL,
  unit_id TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  pairs %[1]s NOT NULL,
  penta TEXT NOT NULL,
  wins %[1]s NOT NULL,
  draws %[1]s NOT NULL,
  losses %[1]s NOT NULL,
  incidents TEXT NOT NULL,
  theta TEXT NOT NULL,
  leased_at %[1]s NOT NULL,
  at %[1]s NOT NULL,
  elapsed_ms %[1]s NOT NULL,
  PRIMARY KEY (job_id, seq)
)%[3]s;
CREATE UNIQUE INDEX IF NOT EXISTS tune_updates_batch ON tune_updates(job_id, batch_idx);
`, integer, blob, rowid))
		return err
	}
}

// StoredTune is a tune's own row.
type StoredTune struct {
	JobID      string
	Spec       []byte // the SpsaSpec, protobuf-encoded
	BatchPairs int
	// PGNsExpired is when the retention setting deleted the tune's games
	// (zero while they are kept).
	PGNsExpired time.Time
}

// Update is one applied update of a tune.
type Update struct {
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
	Incidents string    // opaque, as a test batch's
	Theta     []float64 // after the update
	LeasedAt  time.Time
	At        time.Time
	ElapsedMS int64
}

// CreateTune stores a tune's job row and tune row in one transaction.
func CreateTune(ctx context.Context, st *store.Store, j *store.Job, t *StoredTune) error {
	return st.CreateKindJob(ctx, j, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tunes(job_id,spec,batch_pairs) VALUES(?,?,?)", j.ID, t.Spec, t.BatchPairs); err != nil {
			return fmt.Errorf("store: insert tune: %w", err)
		}
		return nil
	})
}

// LoadTune returns a tune's row (store.ErrNotFound when none).
func LoadTune(ctx context.Context, st *store.Store, jobID string) (*StoredTune, error) {
	t := &StoredTune{JobID: jobID}
	err := st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		var expired int64
		err := db.QueryRowContext(ctx, "SELECT spec, batch_pairs, pgns_expired_at FROM tunes WHERE job_id=?", jobID).Scan(&t.Spec, &t.BatchPairs, &expired)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: tune %s: %w", jobID, store.ErrNotFound)
		}
		t.PGNsExpired = store.FromUnixNano(expired)
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// CommitUpdate writes, in one transaction, an applied update with its
// games, the job's final state (when the tune ends) and events. The
// coordinator acknowledges the worker only after it returns nil. A second
// update of the same batch, or a seq taken, fails: an update is applied
// once.
func CommitUpdate(ctx context.Context, st *store.Store, u *Update, pgns []string, job *store.JobChange, events []store.Event) error {
	theta, err := json.Marshal(u.Theta)
	if err != nil {
		return fmt.Errorf("store: tune %s: theta: %w", u.JobID, err)
	}
	return st.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tune_updates(job_id,seq,batch_idx,unit_id,worker_id,pairs,penta,wins,draws,losses,
			incidents,theta,leased_at,at,elapsed_ms) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			u.JobID, u.Seq, u.Batch, u.UnitID, u.WorkerID, u.Pairs, store.EncodePenta(u.Penta), u.Wins, u.Draws, u.Losses,
			u.Incidents, string(theta), store.UnixNano(u.LeasedAt), store.UnixNano(u.At), u.ElapsedMS); err != nil {
			return fmt.Errorf("store: insert tune update: %w", err)
		}
		return store.FinishUnitTx(ctx, tx, u.JobID, u.Batch, pgns, job, events)
	})
}

// Updates returns a tune's updates in the order they were applied.
func Updates(ctx context.Context, st *store.Store, jobID string) (out []Update, err error) {
	err = st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		out, err = store.QueryRows(ctx, db, func(rows *sql.Rows) (Update, error) { return scanUpdate(rows, jobID) },
			`SELECT seq, batch_idx, unit_id, worker_id, pairs, penta, wins, draws, losses, incidents, theta,
			leased_at, at, elapsed_ms FROM tune_updates WHERE job_id=? ORDER BY seq`, jobID)
		return err
	})
	return out, err
}

func scanUpdate(rows *sql.Rows, jobID string) (Update, error) {
	u := Update{JobID: jobID}
	var penta, theta string
	var leased, at int64
	if err := rows.Scan(&u.Seq, &u.Batch, &u.UnitID, &u.WorkerID, &u.Pairs, &penta, &u.Wins, &u.Draws, &u.Losses, &u.Incidents,
		&theta, &leased, &at, &u.ElapsedMS); err != nil {
		return u, err
	}
	var err error
	if u.Penta, err = store.DecodePenta(penta); err != nil {
		return u, err
	}
	if err := json.Unmarshal([]byte(theta), &u.Theta); err != nil {
		return u, fmt.Errorf("store: tune %s update %d: theta: %w", jobID, u.Seq, err)
	}
	u.LeasedAt, u.At = store.FromUnixNano(leased), store.FromUnixNano(at)
	return u, nil
}
