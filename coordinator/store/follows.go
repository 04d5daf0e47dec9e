package store

// Follows: the jobs a signed-in user follows on the web pages, and the
// events of those jobs (finished, failed, blocked) waiting to be shown to
// the user as browser notifications. Package hooks records the events;
// package web reads them for the user's own session only.

import (
	"context"
	"database/sql"
	"time"
)

func migrateFollows(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, followsSchema("INTEGER", "INTEGER PRIMARY KEY AUTOINCREMENT"))
	return err
}

// followsSchema is the follows' tables with integers of type integer and
// an event id column of type serial (SQLite's AUTOINCREMENT, PostgreSQL's
// identity column), which gives each user's events their order.
func followsSchema(integer, serial string) string {
	return `
CREATE TABLE IF NOT EXISTS follows (
  user_name TEXT NOT NULL,
  job_id TEXT NOT NULL,
  created_at ` + integer + ` NOT NULL,
  PRIMARY KEY (user_name, job_id)
);
CREATE INDEX IF NOT EXISTS follows_job ON follows(job_id);
CREATE TABLE IF NOT EXISTS follow_events (
  id ` + serial + `,
  user_name TEXT NOT NULL,
  job_id TEXT NOT NULL,
  event TEXT NOT NULL,
  title TEXT NOT NULL,
  path TEXT NOT NULL,
  created_at ` + integer + ` NOT NULL,
  UNIQUE (user_name, job_id, event)
);
CREATE INDEX IF NOT EXISTS follow_events_user ON follow_events(user_name, id);
`
}

// Follow is one user following one job.
type Follow struct {
	User      string
	JobID     string
	CreatedAt time.Time
}

// FollowEvent is an event of a followed job for one user.
type FollowEvent struct {
	// ID orders a user's events: a reader asks for those after the last
	// it showed.
	ID    int64
	User  string
	JobID string
	Event string // finished, failed, blocked
	// Title is the one line a notification shows; Path is the job's page
	// on this coordinator's web pages.
	Title     string
	Path      string
	CreatedAt time.Time
}

// AddFollow records that user follows job; it reports false when the
// user follows it already.
func (s *Store) AddFollow(ctx context.Context, f Follow) (bool, error) {
	return s.insertIfAbsent(`INSERT INTO follows(user_name, job_id, created_at) VALUES(?,?,?) ON CONFLICT DO NOTHING`,
		f.User, f.JobID, UnixNano(f.CreatedAt))
}

// DeleteFollow removes user's follow of job and its events not yet read
// (ErrNotFound when the user does not follow it).
func (s *Store) DeleteFollow(ctx context.Context, user, jobID string) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "DELETE FROM follows WHERE user_name=? AND job_id=?", user, jobID)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM follow_events WHERE user_name=? AND job_id=?", user, jobID)
		return err
	})
}

// Follows returns the follows of user ("" for every user's), oldest
// first.
func (s *Store) Follows(ctx context.Context, user string) ([]Follow, error) {
	q, args := "SELECT user_name, job_id, created_at FROM follows ORDER BY created_at, user_name, job_id", []any(nil)
	if user != "" {
		q, args = "SELECT user_name, job_id, created_at FROM follows WHERE user_name=? ORDER BY created_at, job_id", []any{user}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Follow
	for rows.Next() {
		var f Follow
		var at int64
		if err := rows.Scan(&f.User, &f.JobID, &at); err != nil {
			return nil, err
		}
		f.CreatedAt = FromUnixNano(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// AddFollowEvent records an event of a followed job for its user unless
// one for that user, job and event exists; it reports whether it was
// added.
func (s *Store) AddFollowEvent(ctx context.Context, e FollowEvent) (bool, error) {
	return s.insertIfAbsent(`INSERT INTO follow_events(user_name, job_id, event, title, path, created_at) VALUES(?,?,?,?,?,?)
			ON CONFLICT DO NOTHING`, e.User, e.JobID, e.Event, e.Title, e.Path, UnixNano(e.CreatedAt))
}

// FollowEvents returns up to limit of user's events with an id above
// after, oldest first.
func (s *Store) FollowEvents(ctx context.Context, user string, after int64, limit int) ([]FollowEvent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_name, job_id, event, title, path, created_at FROM follow_events
		WHERE user_name=? AND id>? ORDER BY id LIMIT ?`, user, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FollowEvent
	for rows.Next() {
		var e FollowEvent
		var at int64
		if err := rows.Scan(&e.ID, &e.User, &e.JobID, &e.Event, &e.Title, &e.Path, &at); err != nil {
			return nil, err
		}
		e.CreatedAt = FromUnixNano(at)
		out = append(out, e)
	}
	return out, rows.Err()
}
