package store

// Opening a PostgreSQL store, and upgrading it.
//
// Invariants (the same as a SQLite file's, migrate.go):
//   - The database's current schema carries the table arbiter_schema, one
//     row: our application id and the schema version. Migrations are
//     applied in order, each in its own transaction together with the new
//     version, so a crash mid-upgrade leaves the last complete version.
//   - The database is inspected with reads only before anything changes
//     it: a schema with tables that are not ours, another application id,
//     or a version above what this build knows is refused untouched, and so
//     is a read-only database (a hot standby).
//   - Each migration takes a transaction-scoped advisory lock and reads the
//     version again under it, so coordinators started together against one
//     database upgrade it once.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrReadOnly is returned for a database that refuses writes.
var ErrReadOnly = errors.New("database is read-only")

// IsPostgresURL says whether a --store value names a PostgreSQL database.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// OpenURL opens the store a --store value names: "" is the SQLite file in
// dir; postgres://... is that PostgreSQL database, with the blobs kept as
// files (engine artifacts, datagen shards) under dir.
func OpenURL(storeURL, dir string) (*Store, error) {
	switch {
	case storeURL == "":
		return Open(dir)
	case IsPostgresURL(storeURL):
		return OpenPostgres(storeURL, dir)
	}
	return nil, fmt.Errorf("store: %q is not a database URL: want postgres://user:password@host:port/database (or nothing for SQLite in the data directory)", redactURL(storeURL))
}

// redactURL hides a URL's password for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// pgLockKey is the advisory lock migrations take ("ARBT").
const pgLockKey = ApplicationID

// OpenPostgres opens (creating the schema if the database is empty) the
// store in the PostgreSQL database dsn names, upgrading an older schema.
// dir is the data directory for what lives in files.
func OpenPostgres(dsn, dir string) (*Store, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url.Error quotes the URL: give only what is wrong with it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("store: bad PostgreSQL URL: %v", err)
	}
	shown := u.Redacted()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		msg := err.Error()
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		return nil, fmt.Errorf("store: %s: bad PostgreSQL URL: %s", shown, msg)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	// A transaction left open by a process that stopped (paused, cut
	// off) would hold its row locks, the leader row's among them
	// (leader.go), until its connection dies: the server ends it instead.
	if _, ok := cfg.RuntimeParams["idle_in_transaction_session_timeout"]; !ok {
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = "60000"
	}
	db := openPostgresDB(cfg)
	// A few connections: reads run beside the one writer.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	fail := func(err error) (*Store, error) {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", shown, err)
	}
	pingCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		return fail(fmt.Errorf("connect: %w", err))
	}
	// Migrations take what they take (a later one may rewrite a big
	// table); only reaching the server is bounded.
	ctx := context.Background()
	found, err := pgInspect(ctx, db)
	if err != nil {
		return fail(err)
	}
	var readOnly string
	if err := db.QueryRowContext(ctx, "SHOW transaction_read_only").Scan(&readOnly); err != nil {
		return fail(err)
	}
	if readOnly == "on" {
		return fail(fmt.Errorf("%w (a hot standby, or default_transaction_read_only is on): the coordinator needs the primary", ErrReadOnly))
	}
	// The data dir is made only for a database we will use: a refused
	// one leaves nothing behind.
	if err := MkdirPrivate(dir); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: data dir %q: %w", dir, err)
	}
	if err := TightenDataDir(dir); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{db: db, path: shown, dir: dir, backend: Postgres, pgConfig: cfg}
	if err := s.pgMigrate(ctx, found.version); err != nil {
		return fail(err)
	}
	if err := s.migrateKinds(ctx); err != nil {
		return fail(err)
	}
	s.startWriter()
	return s, nil
}

// pgInspect reads what the database's current schema holds.
func pgInspect(ctx context.Context, db *sql.DB) (inspection, error) {
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name")
	if err != nil {
		return inspection{}, err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return inspection{}, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return inspection{}, err
	}
	if len(tables) == 0 {
		return inspection{}, nil
	}
	hasVersion := false
	for _, t := range tables {
		hasVersion = hasVersion || t == "arbiter_schema"
	}
	if !hasVersion {
		if len(tables) > 5 {
			tables = append(tables[:5], "...")
		}
		return inspection{}, fmt.Errorf("%w: the schema has tables (%s) and no arbiter_schema; use an empty database", ErrForeign, strings.Join(tables, ", "))
	}
	app, version, err := pgVersion(ctx, db)
	if err != nil {
		return inspection{}, err
	}
	if app != ApplicationID {
		return inspection{}, fmt.Errorf("%w: arbiter_schema names application %#x", ErrForeign, app)
	}
	if version > len(pgMigrations) {
		return inspection{}, fmt.Errorf("%w: schema version %d, this build knows up to %d (upgrade arbiter)", ErrNewer, version, len(pgMigrations))
	}
	return inspection{exists: true, version: version}, nil
}

func pgVersion(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (app int64, version int, err error) {
	err = q.QueryRowContext(ctx, "SELECT application_id, version FROM arbiter_schema").Scan(&app, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("%w: arbiter_schema is empty", ErrCorrupt)
	}
	return app, version, err
}

// pgMigrate applies every migration after from.
func (s *Store) pgMigrate(ctx context.Context, from int) error {
	for v := from + 1; v <= len(pgMigrations); v++ {
		m := pgMigrations[v-1]
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = func() error {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock("+strconv.Itoa(pgLockKey)+")"); err != nil {
				return err
			}
			// Another coordinator may have migrated while we waited.
			if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS arbiter_schema (application_id BIGINT NOT NULL, version BIGINT NOT NULL)"); err != nil {
				return err
			}
			var now int
			switch _, have, err := pgVersion(ctx, tx); {
			case errors.Is(err, ErrCorrupt):
				if _, err := tx.ExecContext(ctx, "INSERT INTO arbiter_schema(application_id, version) VALUES(?, 0)", ApplicationID); err != nil {
					return err
				}
			case err != nil:
				return err
			default:
				now = have
			}
			if now >= v {
				return nil
			}
			if now != v-1 {
				return fmt.Errorf("schema version %d, expected %d", now, v-1)
			}
			if err := m.up(ctx, tx); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "UPDATE arbiter_schema SET version=?", v)
			return err
		}()
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d (%s): %w", v, m.name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d (%s): %w", v, m.name, err)
		}
	}
	return nil
}
