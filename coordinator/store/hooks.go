package store

// Webhooks: the hooks the farm's users registered (package hooks sends
// them) and every delivery of an event to a hook, keyed by hook, job and
// event so that one event is delivered to one hook once.

import (
	"context"
	"database/sql"
	"time"
)

func migrateHooks(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, hooksSchema("INTEGER"))
	return err
}

// hooksSchema is the webhooks' tables with integers of type integer
// (INTEGER in SQLite, BIGINT in PostgreSQL).
func hooksSchema(integer string) string {
	return `
CREATE TABLE IF NOT EXISTS hooks (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  format TEXT NOT NULL,
  secret TEXT NOT NULL,
  owner TEXT NOT NULL,
  scope TEXT NOT NULL,
  created_at ` + integer + ` NOT NULL
);
CREATE TABLE IF NOT EXISTS hook_deliveries (
  id TEXT PRIMARY KEY,
  hook_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  event TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts ` + integer + ` NOT NULL,
  last_status ` + integer + ` NOT NULL,
  last_error TEXT NOT NULL,
  next_at ` + integer + ` NOT NULL,
  created_at ` + integer + ` NOT NULL,
  delivered_at ` + integer + ` NOT NULL
);
CREATE INDEX IF NOT EXISTS hook_deliveries_due ON hook_deliveries(state, next_at);
CREATE INDEX IF NOT EXISTS hook_deliveries_hook ON hook_deliveries(hook_id, created_at);
`
}

// Hook is one registered webhook.
type Hook struct {
	ID     string
	URL    string
	Events string // comma-separated: finished, failed, blocked
	Format string // json, discord, slack
	// Secret signs every delivery (HMAC-SHA256); it is shown once, when
	// the hook is made.
	Secret string
	Owner  string
	// Scope is "own" (the owner's jobs) or "farm" (every job; admins).
	Scope     string
	CreatedAt time.Time
}

// Delivery is one event on its way to one hook.
type Delivery struct {
	// ID is the idempotency key: hook, job and event.
	ID          string
	HookID      string
	JobID       string
	Event       string
	Payload     string
	State       string // pending, delivered, failed
	Attempts    int
	LastStatus  int
	LastError   string
	NextAt      time.Time
	CreatedAt   time.Time
	DeliveredAt time.Time
}

const hookColumns = `id, url, events, format, secret, owner, scope, created_at`
const deliveryColumns = `id, hook_id, job_id, event, payload, state, attempts, last_status, last_error, next_at, created_at, delivered_at`

// PutHook records a new hook.
func (s *Store) PutHook(ctx context.Context, h *Hook) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO hooks(`+hookColumns+`) VALUES(?,?,?,?,?,?,?,?)`,
			h.ID, h.URL, h.Events, h.Format, h.Secret, h.Owner, h.Scope, UnixNano(h.CreatedAt))
		return err
	})
}

// Hooks returns every hook, oldest first.
func (s *Store) Hooks(ctx context.Context) ([]*Hook, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+hookColumns+" FROM hooks ORDER BY created_at, id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Hook
	for rows.Next() {
		var h Hook
		var at int64
		if err := rows.Scan(&h.ID, &h.URL, &h.Events, &h.Format, &h.Secret, &h.Owner, &h.Scope, &at); err != nil {
			return nil, err
		}
		h.CreatedAt = FromUnixNano(at)
		out = append(out, &h)
	}
	return out, rows.Err()
}

// DeleteHook removes a hook and its deliveries (ErrNotFound when none).
func (s *Store) DeleteHook(ctx context.Context, id string) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "DELETE FROM hooks WHERE id=?", id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM hook_deliveries WHERE hook_id=?", id)
		return err
	})
}

// AddDelivery records a delivery unless one with its id (hook, job,
// event) exists; it reports whether it was added.
func (s *Store) AddDelivery(ctx context.Context, d *Delivery) (bool, error) {
	return s.insertIfAbsent(`INSERT INTO hook_deliveries(`+deliveryColumns+`) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(id) DO NOTHING`, d.ID, d.HookID, d.JobID, d.Event, d.Payload, d.State, d.Attempts, d.LastStatus, d.LastError,
		UnixNano(d.NextAt), UnixNano(d.CreatedAt), UnixNano(d.DeliveredAt))
}

// insertIfAbsent runs one INSERT ... ON CONFLICT DO NOTHING through the
// writer and reports whether it inserted the row (false: one with its key
// was there).
func (s *Store) insertIfAbsent(query string, args ...any) (bool, error) {
	added := false
	err := s.write(func(ctx context.Context, tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, _ := r.RowsAffected()
		added = n == 1
		return nil
	})
	return added, err
}

// UpdateDelivery records an attempt's outcome: state, attempts, status,
// error and when the next attempt is due.
func (s *Store) UpdateDelivery(ctx context.Context, d *Delivery) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE hook_deliveries SET state=?, attempts=?, last_status=?, last_error=?, next_at=?, delivered_at=?
			WHERE id=?`, d.State, d.Attempts, d.LastStatus, d.LastError, UnixNano(d.NextAt), UnixNano(d.DeliveredAt), d.ID)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// DueDeliveries returns pending deliveries due at or before now: at most
// perHook of each hook (its longest due first) and limit in all, the
// first due of every hook before the second of any, so that one hook's
// backlog never hides another hook's delivery.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, perHook, limit int) ([]*Delivery, error) {
	return s.deliveries(ctx, "SELECT "+deliveryColumns+` FROM (SELECT `+deliveryColumns+`,
		ROW_NUMBER() OVER (PARTITION BY hook_id ORDER BY next_at, id) AS nth
		FROM hook_deliveries WHERE state='pending' AND next_at<=?) due
		WHERE nth<=? ORDER BY nth, next_at, id LIMIT ?`, UnixNano(now), perHook, limit)
}

// Deliveries returns up to limit deliveries of a hook ("" for every
// hook), newest first.
func (s *Store) Deliveries(ctx context.Context, hookID string, limit int) ([]*Delivery, error) {
	if hookID == "" {
		return s.deliveries(ctx, "SELECT "+deliveryColumns+" FROM hook_deliveries ORDER BY created_at DESC, id LIMIT ?", limit)
	}
	return s.deliveries(ctx, "SELECT "+deliveryColumns+" FROM hook_deliveries WHERE hook_id=? ORDER BY created_at DESC, id LIMIT ?", hookID, limit)
}

func (s *Store) deliveries(ctx context.Context, q string, args ...any) ([]*Delivery, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Delivery
	for rows.Next() {
		var d Delivery
		var next, created, delivered int64
		if err := rows.Scan(&d.ID, &d.HookID, &d.JobID, &d.Event, &d.Payload, &d.State, &d.Attempts, &d.LastStatus, &d.LastError,
			&next, &created, &delivered); err != nil {
			return nil, err
		}
		d.NextAt, d.CreatedAt, d.DeliveredAt = FromUnixNano(next), FromUnixNano(created), FromUnixNano(delivered)
		out = append(out, &d)
	}
	return out, rows.Err()
}
