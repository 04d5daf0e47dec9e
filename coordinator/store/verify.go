package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Verify sessions themselves live in the coordinator's memory (their state
// is the client's descent); what a session found is reported by its client
// at the end and kept here: one row per session with its summary, and one
// row per reported position (the client's report, protobuf-encoded, opaque
// to the store).

// VerifySession is a reported verify session's summary.
type VerifySession struct {
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

// ErrOwner is returned when a session was reported by another identity.
var ErrOwner = errors.New("reported by another identity")

// ErrFull is returned when a session already holds the most reports a
// session may keep.
var ErrFull = errors.New("session holds the most reports it may keep")

// PutVerifyReports stores a session's summary (replacing an earlier one of
// the same owner) and position reports [first, first+len(reports)) in one
// transaction. A report already stored at an index is kept as it was, so a
// client that sends a call again stores nothing twice. A session of another
// owner is ErrOwner; reports beyond maxReports are ErrFull, and then nothing
// of the call is stored. It returns the number of reports the session holds.
func (s *Store) PutVerifyReports(ctx context.Context, vs VerifySession, first int, reports [][]byte, maxReports int) (int, error) {
	if first+len(reports) > maxReports {
		return 0, fmt.Errorf("store: verify session %s: reports up to %d: %w (%d)", vs.ID, first+len(reports), ErrFull, maxReports)
	}
	if vs.Summary == nil {
		vs.Summary = []byte{}
	}
	held := 0
	err := s.write(func(ctx context.Context, tx *sql.Tx) error {
		var owner string
		var created int64
		err := tx.QueryRowContext(ctx, "SELECT owner, created_at FROM verify_sessions WHERE id=?", vs.ID).Scan(&owner, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			created = unixNano(vs.CreatedAt)
		case err != nil:
			return err
		case owner != vs.Owner:
			return fmt.Errorf("store: verify session %s: %w", vs.ID, ErrOwner)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO verify_sessions(id,owner,engine,depth,created_at,reported_at,positions,ok,bugs,errors,findings,seconds,summary)
			VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET engine=excluded.engine, depth=excluded.depth, reported_at=excluded.reported_at,
			positions=excluded.positions, ok=excluded.ok, bugs=excluded.bugs, errors=excluded.errors, findings=excluded.findings,
			seconds=excluded.seconds, summary=excluded.summary`,
			vs.ID, vs.Owner, vs.Engine, vs.Depth, created, unixNano(vs.ReportedAt), vs.Positions, vs.OK, vs.Bugs, vs.Errors, vs.Finds,
			vs.Seconds, vs.Summary); err != nil {
			return fmt.Errorf("store: verify session: %w", err)
		}
		st, err := tx.PrepareContext(ctx, "INSERT INTO verify_reports(session_id,idx,report) VALUES(?,?,?) ON CONFLICT DO NOTHING")
		if err != nil {
			return err
		}
		defer st.Close()
		for i, r := range reports {
			if _, err := st.ExecContext(ctx, vs.ID, first+i, r); err != nil {
				return fmt.Errorf("store: verify report: %w", err)
			}
		}
		return tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM verify_reports WHERE session_id=?", vs.ID).Scan(&held)
	})
	return held, err
}

const verifySessionColumns = `id, owner, engine, depth, created_at, reported_at, positions, ok, bugs, errors, findings, seconds, summary,
	(SELECT COUNT(*) FROM verify_reports r WHERE r.session_id = verify_sessions.id)`

func scanVerifySession(sc interface{ Scan(...any) error }) (VerifySession, error) {
	var v VerifySession
	var created, reported int64
	err := sc.Scan(&v.ID, &v.Owner, &v.Engine, &v.Depth, &created, &reported, &v.Positions, &v.OK, &v.Bugs, &v.Errors, &v.Finds,
		&v.Seconds, &v.Summary, &v.Reported)
	v.CreatedAt, v.ReportedAt = fromNano(created), fromNano(reported)
	return v, err
}

// VerifySessions returns reported sessions, the most recently reported
// first, from offset, at most limit, and the number of sessions in all.
func (s *Store) VerifySessions(ctx context.Context, offset, limit int) ([]VerifySession, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM verify_sessions").Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+verifySessionColumns+" FROM verify_sessions ORDER BY reported_at DESC, id LIMIT ? OFFSET ?",
		limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []VerifySession
	for rows.Next() {
		v, err := scanVerifySession(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	return out, total, rows.Err()
}

// VerifySessionByID returns one reported session (ErrNotFound when none).
func (s *Store) VerifySessionByID(ctx context.Context, id string) (VerifySession, error) {
	v, err := scanVerifySession(s.db.QueryRowContext(ctx, "SELECT "+verifySessionColumns+" FROM verify_sessions WHERE id=?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("store: verify session %s: %w", id, ErrNotFound)
	}
	return v, err
}

// VerifyReports returns a session's position reports in index order,
// skipping offset of them, at most limit.
func (s *Store) VerifyReports(ctx context.Context, id string, offset, limit int) ([][]byte, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT report FROM verify_reports WHERE session_id=? ORDER BY idx LIMIT ? OFFSET ?", id, limit, offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
