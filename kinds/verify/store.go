package verify

// The verify kind's tables. Sessions themselves live in the coordinator's
// memory (their state is the client's descent); what a session found is
// reported by its client at the end and kept here: one row per session
// with its summary, and one row per reported position (the client's
// report, protobuf-encoded, opaque to the store).
//
// Step 5 of the core's schema created these two tables in the releases
// before the kind kept them (2026-12-05); that step is empty now. The
// kind's first step creates them only where they are missing, so a file
// made by an earlier release keeps its sessions, and a new file gets the
// same tables and columns it would have had.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

var schema = store.KindSchema{Kind: Kind, Migrations: []store.Migration{
	{Name: "verify sessions' reports (findings)", Up: tables("INTEGER", "REAL", "BLOB", " WITHOUT ROWID")},
}, Postgres: []store.Migration{
	{Name: "verify sessions' reports (findings)", Up: tables("BIGINT", "DOUBLE PRECISION", "BYTEA", "")},
}}

// tables is the first step in a backend's types; rowid is SQLite's table
// option.
func tables(integer, real, blob, rowid string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS verify_sessions (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  engine TEXT NOT NULL,
  depth %[1]s NOT NULL,
  created_at %[1]s NOT NULL,
  reported_at %[1]s NOT NULL,
  positions %[1]s NOT NULL,
  ok %[1]s NOT NULL,
  bugs %[1]s NOT NULL,
  errors %[1]s NOT NULL,
  findings %[1]s NOT NULL,
  seconds %[2]s NOT NULL,
  summary %[3]s NOT NULL
);
CREATE INDEX IF NOT EXISTS verify_sessions_reported ON verify_sessions(reported_at);
CREATE TABLE IF NOT EXISTS verify_reports (
  session_id TEXT NOT NULL,
  idx %[1]s NOT NULL,
  report %[3]s NOT NULL,
  PRIMARY KEY (session_id, idx)
)%[4]s;
`, integer, real, blob, rowid))
		return err
	}
}

// storedSession is a reported session's summary row.
type storedSession struct {
	ID                                 string // the session id (job id "verify.ID")
	Owner                              string // the identity that ran it
	Engine                             string
	Depth                              int
	CreatedAt, ReportedAt              time.Time
	Positions, OK, Bugs, Errors, Finds int
	Seconds                            float64
	// Summary is the client's whole summary, protobuf-encoded.
	Summary []byte
	// Reported is the number of position reports stored.
	Reported int
}

// errOwner: the session was reported by another identity.
var errOwner = errors.New("reported by another identity")

// errFull: the session already holds the most reports a session may keep.
var errFull = errors.New("session holds the most reports it may keep")

// putReports stores a session's summary (replacing an earlier one of the
// same owner) and position reports [first, first+len(reports)) in one
// transaction. A report already stored at an index is kept as it was, so a
// client that sends a call again stores nothing twice. A session of another
// owner is errOwner; reports beyond maxReports are errFull, and then
// nothing of the call is stored. It returns the number of reports the
// session holds.
func putReports(ctx context.Context, st *store.Store, vs storedSession, first int, reports [][]byte, maxReports int) (int, error) {
	if first+len(reports) > maxReports {
		return 0, fmt.Errorf("store: verify session %s: reports up to %d: %w (%d)", vs.ID, first+len(reports), errFull, maxReports)
	}
	if vs.Summary == nil {
		vs.Summary = []byte{}
	}
	held := 0
	err := st.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var owner string
		var created int64
		err := tx.QueryRowContext(ctx, "SELECT owner, created_at FROM verify_sessions WHERE id=?", vs.ID).Scan(&owner, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			created = store.UnixNano(vs.CreatedAt)
		case err != nil:
			return err
		case owner != vs.Owner:
			return fmt.Errorf("store: verify session %s: %w", vs.ID, errOwner)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO verify_sessions(id,owner,engine,depth,created_at,reported_at,positions,ok,bugs,errors,findings,seconds,summary)
			VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET engine=excluded.engine, depth=excluded.depth, reported_at=excluded.reported_at,
			positions=excluded.positions, ok=excluded.ok, bugs=excluded.bugs, errors=excluded.errors, findings=excluded.findings,
			seconds=excluded.seconds, summary=excluded.summary`,
			vs.ID, vs.Owner, vs.Engine, vs.Depth, created, store.UnixNano(vs.ReportedAt), vs.Positions, vs.OK, vs.Bugs, vs.Errors, vs.Finds,
			vs.Seconds, vs.Summary); err != nil {
			return fmt.Errorf("store: verify session: %w", err)
		}
		ins, err := tx.PrepareContext(ctx, "INSERT INTO verify_reports(session_id,idx,report) VALUES(?,?,?) ON CONFLICT DO NOTHING")
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, r := range reports {
			if _, err := ins.ExecContext(ctx, vs.ID, first+i, r); err != nil {
				return fmt.Errorf("store: verify report: %w", err)
			}
		}
		return tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM verify_reports WHERE session_id=?", vs.ID).Scan(&held)
	})
	return held, err
}

const sessionColumns = `id, owner, engine, depth, created_at, reported_at, positions, ok, bugs, errors, findings, seconds, summary,
	(SELECT COUNT(*) FROM verify_reports r WHERE r.session_id = verify_sessions.id)`

func scanSession(sc interface{ Scan(...any) error }) (storedSession, error) {
	var v storedSession
	var created, reported int64
	err := sc.Scan(&v.ID, &v.Owner, &v.Engine, &v.Depth, &created, &reported, &v.Positions, &v.OK, &v.Bugs, &v.Errors, &v.Finds,
		&v.Seconds, &v.Summary, &v.Reported)
	v.CreatedAt, v.ReportedAt = store.FromUnixNano(created), store.FromUnixNano(reported)
	return v, err
}

// storedSessions returns reported sessions, the most recently reported
// first, from offset, at most limit, and the number of sessions in all.
func storedSessions(ctx context.Context, st *store.Store, offset, limit int) (out []storedSession, total int, err error) {
	err = st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM verify_sessions").Scan(&total); err != nil {
			return err
		}
		rows, err := db.QueryContext(ctx, "SELECT "+sessionColumns+" FROM verify_sessions ORDER BY reported_at DESC, id LIMIT ? OFFSET ?",
			limit, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scanSession(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, total, err
}

// storedSessionByID returns one reported session (store.ErrNotFound when
// none).
func storedSessionByID(ctx context.Context, st *store.Store, id string) (v storedSession, err error) {
	err = st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		v, err = scanSession(db.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM verify_sessions WHERE id=?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: verify session %s: %w", id, store.ErrNotFound)
		}
		return err
	})
	return v, err
}

// storedReports returns a session's position reports in index order,
// skipping offset of them, at most limit.
func storedReports(ctx context.Context, st *store.Store, id string, offset, limit int) (out [][]byte, err error) {
	err = st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT report FROM verify_reports WHERE session_id=? ORDER BY idx LIMIT ? OFFSET ?", id, limit, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				return err
			}
			out = append(out, b)
		}
		return rows.Err()
	})
	return out, err
}
