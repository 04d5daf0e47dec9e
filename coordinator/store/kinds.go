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
	"fmt"
	"strconv"
	"sync"
)

// Migration is one step of a kind's schema.
type Migration struct {
	Name string
	Up   func(ctx context.Context, tx *sql.Tx) error
}

// KindSchema is a kind's tables.
type KindSchema struct {
	Kind       string
	Migrations []Migration
}

var (
	kindSchemasMu sync.Mutex
	kindSchemas   []KindSchema
)

// RegisterSchema adds a kind's schema; every store opened afterwards has
// it. Kinds register from their package's init.
func RegisterSchema(k KindSchema) {
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
		if v > len(k.Migrations) {
			return fmt.Errorf("%w: %s schema version %d, this build knows up to %d (upgrade arbiter)", ErrNewer, k.Kind, v, len(k.Migrations))
		}
		from[i] = v
	}
	for i, k := range schemas {
		for v := from[i] + 1; v <= len(k.Migrations); v++ {
			m := k.Migrations[v-1]
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				return err
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
