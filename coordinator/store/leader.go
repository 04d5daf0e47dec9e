package store

// The leader row and fencing: several coordinators share one PostgreSQL
// database, one of them leads (package coordinator/leader elects it).
//
// Invariants:
//   - arbiter_leader holds at most one row (id 1). Its term only grows: a
//     coordinator that becomes leader raises it by one in the transaction
//     that names it holder.
//   - Once Fence(term) is called, every group transaction first reads the
//     row FOR SHARE and writes nothing unless the term is still ours. A
//     takeover's UPDATE waits for those transactions and every transaction
//     after it sees the new term, so a paused former leader that wakes up
//     cannot commit a single write after losing: its writes fail with
//     ErrFenced. Fencing is the guarantee; the election lock only decides
//     who may raise the term.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrFenced is the error of a write refused because another coordinator
// took over the lead since this one was fenced with its term.
var ErrFenced = errors.New("this coordinator no longer leads (another took over): write refused")

func migrateLeader(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
CREATE TABLE arbiter_leader (
  id INTEGER PRIMARY KEY,
  term INTEGER NOT NULL,
  holder TEXT NOT NULL,
  grpc_addr TEXT NOT NULL,
  http_addr TEXT NOT NULL,
  since INTEGER NOT NULL
)`)
	return err
}

const pgMigrateLeader = `
CREATE TABLE arbiter_leader (
  id BIGINT PRIMARY KEY,
  term BIGINT NOT NULL,
  holder TEXT NOT NULL,
  grpc_addr TEXT NOT NULL,
  http_addr TEXT NOT NULL,
  since BIGINT NOT NULL
);
`

// Fence makes every later write transaction check, inside itself, that
// the leader row's term is still term (0 turns the check off). Only a
// PostgreSQL store is shared, so only there does it mean anything.
func (s *Store) Fence(term int64) { s.fence.Store(term) }

// SetFenceTimeout is how long a fenced write transaction may sit idle
// (its process paused) before the server ends it: the leader timeout.
func (s *Store) SetFenceTimeout(d time.Duration) { s.fenceIdle.Store(d.Milliseconds()) }

// fenced checks, inside tx, that this store's coordinator still leads.
// The row is locked FOR SHARE until tx ends, so a takeover (an UPDATE of
// the row) waits for tx rather than overtaking it.
func (s *Store) fenced(ctx context.Context, tx *sql.Tx) error {
	term := s.fence.Load()
	if term == 0 {
		return nil
	}
	// A leader paused inside this transaction would hold the row
	// against the next leader's takeover for as long as its connection
	// lives: the server ends the transaction after the leader timeout
	// of idleness (SET LOCAL, in the same round trip).
	idle := strconv.FormatInt(max(s.fenceIdle.Load(), 1000), 10)
	var have int64
	var set string
	err := tx.QueryRowContext(ctx, "SELECT set_config('idle_in_transaction_session_timeout', ?, true), term FROM arbiter_leader WHERE id = 1 FOR SHARE", idle).Scan(&set, &have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w (no leader row)", ErrFenced)
	case err != nil:
		return fmt.Errorf("store: leader check: %w", err)
	case have != term:
		return fmt.Errorf("%w (term %d is now %d)", ErrFenced, term, have)
	}
	return nil
}

// PostgresConfig is a copy of the connection settings of a PostgreSQL
// store (nil for SQLite), for a connection of the caller's own: the
// election holds its lock on one.
func (s *Store) PostgresConfig() *pgx.ConnConfig {
	if s.pgConfig == nil {
		return nil
	}
	return s.pgConfig.Copy()
}
