package store

// Schemas of job kinds that plug into the coordinator (datagen, ...).
//
// A kind keeps its own tables beside the core's and versions them itself:
// its version is the meta row "schema:KIND", and its migrations are applied
// in order after the core's, each in one transaction with the new version,
// exactly as the core's are. A file whose kind version is above what this
// build knows is refused untouched, like a newer core schema.
//
// A kind writes through Write (the same group commit as every other write:
// on disk before it returns) and reads through Read; job rows stay the
// core's (CreateKindJob inserts one with the kind's rows in one
// transaction).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Migration is one step of a kind's schema.
type Migration struct {
	Name string
	Up   func(ctx context.Context, tx *sql.Tx) error
}

// KindSchema is a kind's tables, per backend: Migrations for SQLite,
// Postgres for PostgreSQL, step N of one leaving the same tables and
// columns as step N of the other (the version is the same number on
// both). A kind without Postgres migrations cannot run on PostgreSQL: a
// store opened there refuses to start rather than run the kind without
// its tables.
type KindSchema struct {
	Kind       string
	Migrations []Migration
	Postgres   []Migration
}

// migrationsFor is the kind's steps on backend b.
func (k KindSchema) migrationsFor(b Backend) []Migration {
	if b == Postgres {
		return k.Postgres
	}
	return k.Migrations
}

var (
	kindSchemasMu sync.Mutex
	kindSchemas   []KindSchema
)

// RegisterSchema adds a kind's schema; every store opened afterwards has
// it. Kinds register from their package's init. Postgres steps, when
// given, must be as many as the SQLite ones.
func RegisterSchema(k KindSchema) {
	if k.Postgres != nil && len(k.Postgres) != len(k.Migrations) {
		panic(fmt.Sprintf("store: kind %s has %d SQLite and %d PostgreSQL migrations; versions must match", k.Kind, len(k.Migrations), len(k.Postgres)))
	}
	kindSchemasMu.Lock()
	defer kindSchemasMu.Unlock()
	for i, have := range kindSchemas {
		if have.Kind == k.Kind {
			kindSchemas[i] = k
			return
		}
	}
	kindSchemas = append(kindSchemas, k)
}

func registeredSchemas() []KindSchema {
	kindSchemasMu.Lock()
	defer kindSchemasMu.Unlock()
	return append([]KindSchema(nil), kindSchemas...)
}

func kindVersionKey(kind string) string { return "schema:" + kind }

// KindVersion is the version of kind's schema in the file (0: none yet).
func (s *Store) KindVersion(ctx context.Context, kind string) (int, error) {
	b, err := s.Meta(ctx, kindVersionKey(kind))
	if err != nil || len(b) == 0 {
		return 0, err
	}
	v, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("%w: schema version of %s is %q", ErrCorrupt, kind, b)
	}
	return v, nil
}

// migrateKinds applies every registered kind's migrations the file lacks,
// after checking all of them so that a newer kind schema changes nothing.
func (s *Store) migrateKinds(ctx context.Context) error {
	schemas := registeredSchemas()
	from := make([]int, len(schemas))
	for i, k := range schemas {
		v, err := s.KindVersion(ctx, k.Kind)
		if err != nil {
			return err
		}
		steps := k.migrationsFor(s.backend)
		if len(steps) == 0 && len(k.Migrations) > 0 {
			return fmt.Errorf("job kind %s has no %s schema", k.Kind, s.backend)
		}
		if v > len(steps) {
			return fmt.Errorf("%w: %s schema version %d, this build knows up to %d (upgrade arbiter)", ErrNewer, k.Kind, v, len(steps))
		}
		from[i] = v
	}
	for i, k := range schemas {
		steps := k.migrationsFor(s.backend)
		for v := from[i] + 1; v <= len(steps); v++ {
			m := steps[v-1]
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if s.backend == Postgres {
				// As the core's: coordinators starting together upgrade once.
				if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock("+strconv.Itoa(pgLockKey)+")"); err != nil {
					tx.Rollback()
					return err
				}
				var have []byte
				err := tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key=?", kindVersionKey(k.Kind)).Scan(&have)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					tx.Rollback()
					return err
				}
				if n, _ := strconv.Atoi(string(have)); n >= v {
					tx.Rollback()
					continue
				}
			}
			if err := m.Up(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("%s migration %d (%s): %w", k.Kind, v, m.Name, err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
				kindVersionKey(k.Kind), []byte(strconv.Itoa(v))); err != nil {
				tx.Rollback()
				return err
			}
			if err := tx.Commit(); err != nil {
				return fmt.Errorf("%s migration %d (%s): %w", k.Kind, v, m.Name, err)
			}
		}
	}
	return nil
}

// Write runs fn in the store's next group commit; it returns when fn's
// changes are on disk (or with fn's error, its changes rolled back).
func (s *Store) Write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.write(fn)
}

// Read runs fn with the database for queries; fn must not write.
func (s *Store) Read(ctx context.Context, fn func(ctx context.Context, db *sql.DB) error) error {
	return fn(ctx, s.db)
}

// CreateKindJob stores a job row (numbered like every job) and what rows
// fn adds in one transaction: after a crash either all exist or none.
func (s *Store) CreateKindJob(ctx context.Context, j *Job, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := numberJob(ctx, tx, j); err != nil {
			return err
		}
		if err := insertJob(ctx, tx, j, "[]", ""); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// SetJobStateTx changes a job's state inside a kind's transaction.
func SetJobStateTx(ctx context.Context, tx *sql.Tx, jobID string, job *JobChange) error {
	return setJobState(ctx, tx, jobID, job)
}

// FinishUnitTx stores, inside a kind's commit transaction, what follows
// the kind's own row of a unit of games: the games of batch idx, the
// job's final state (nil: it runs on) and events.
func FinishUnitTx(ctx context.Context, tx *sql.Tx, jobID string, idx int, pgns []string, job *JobChange, events []Event) error {
	if err := insertPGNs(ctx, tx, jobID, idx, pgns); err != nil {
		return err
	}
	if job != nil {
		if err := setJobState(ctx, tx, jobID, job); err != nil {
			return err
		}
	}
	return insertEvents(ctx, tx, events)
}

// QueryRows runs query on q and returns each row as scan reads it, in
// the query's order.
func QueryRows[T any](ctx context.Context, q Querier, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// InsertEventsTx records events inside a kind's transaction.
func InsertEventsTx(ctx context.Context, tx *sql.Tx, events []Event) error {
	return insertEvents(ctx, tx, events)
}

// SetPriorityTx changes a job's priority and throughput share inside a
// kind's transaction (ErrNotFound for no such job).
func SetPriorityTx(ctx context.Context, tx *sql.Tx, jobID string, priority int32, throughput float64) error {
	return setPriority(ctx, tx, jobID, priority, throughput)
}

// SetScheduleTx is SetPriorityTx with the job's number of units (a
// test's batches, which a change of its length changes).
func SetScheduleTx(ctx context.Context, tx *sql.Tx, jobID string, priority int32, throughput float64, unitsTotal int) error {
	res, err := tx.ExecContext(ctx, "UPDATE jobs SET priority=?, throughput=?, units_total=? WHERE id=?", priority, throughput, unitsTotal, jobID)
	if err != nil {
		return fmt.Errorf("store: update job: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("store: job %s: %w", jobID, ErrNotFound)
	}
	return nil
}

// JobStateTx is a job's state read inside a kind's transaction
// (ErrNotFound for no such job).
func JobStateTx(ctx context.Context, tx *sql.Tx, jobID string) (string, error) {
	var state string
	err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id=?", jobID).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: job %s: %w", jobID, ErrNotFound)
	}
	return state, err
}

// EncodePenta is how a pentanomial is kept in a TEXT column (a test's
// batches and a tune's updates alike).
func EncodePenta(p [5]int64) string {
	parts := make([]string, 5)
	for i, v := range p {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, ",")
}

// DecodePenta reads what EncodePenta wrote.
func DecodePenta(s string) ([5]int64, error) {
	var p [5]int64
	parts := strings.Split(s, ",")
	if len(parts) != 5 {
		return p, fmt.Errorf("store: bad pentanomial %q", s)
	}
	for i, x := range parts {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return p, fmt.Errorf("store: bad pentanomial %q", s)
		}
		p[i] = v
	}
	return p, nil
}
