package store

// Opening a data directory, and upgrading it.
//
// Invariants:
//   - A database file carries SQLite's application_id 0x41524254 ("ARBT")
//     and its schema version in user_version. Migrations are applied in
//     order, each in its own transaction together with the new
//     user_version, so a crash mid-upgrade leaves the file at the last
//     complete version and the next start resumes from there.
//   - A file is inspected read-only, with no pragma that writes, before
//     anything changes it: a foreign SQLite file (another application id,
//     or tables that are not ours), a file from a newer Arbiter
//     (user_version above what this build knows) and a file that fails
//     PRAGMA quick_check are refused with a clear error and left byte for
//     byte as they were.
//   - A file written before versioning (application_id 0, user_version 0,
//     with our jobs table) is version 1: the schema of the first release.
//     Columns that even older releases lacked are added by migration 2.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// ApplicationID marks a SQLite file as an Arbiter coordinator store.
const ApplicationID = 0x41524254

// SchemaVersion is the newest schema this build writes.
var SchemaVersion = len(migrations)

// ErrForeign, ErrNewer and ErrCorrupt classify files Open refuses.
var (
	ErrForeign = errors.New("not an Arbiter coordinator database")
	ErrNewer   = errors.New("written by a newer Arbiter")
	ErrCorrupt = errors.New("database is damaged")
)

// FileName is the database's name in the data directory.
const FileName = "coordinator.db"

// migration is one step of the schema. up runs in a transaction.
type migration struct {
	name string
	up   func(ctx context.Context, tx *sql.Tx) error
}

var migrations = []migration{
	// Steps 1, 2, 6 and 14 made the perft kind's tables (positions,
	// units, runs) and added their columns (runs.owner; units.slice;
	// units.cross_check, runs.program) in the releases before the kind
	// kept them (kinds/perft/store.go, 2026-12-05); they leave those
	// tables alone now. The kind's first step creates them where they are
	// missing and adds those columns where an earlier release's table
	// lacks them, so a file of any earlier release keeps its perft jobs.
	{"first release: jobs, positions, units, runs, workers, events, tests, batches, pgns", migrate1},
	{"identities: submitter, owner, priority, throughput; meta, credentials, quarantine", migrate2},
	{"retention: compressed PGNs, expired PGNs of finished tests", migrate3},
	{"SPSA tunes: tunes, tune_updates", migrate4},
	{"verify sessions' reports (findings)", migrate5},
	{"perft slices and statistics: jobs.stats, slices, slice_ply, stats_total; units.slice", migrate6},
	// 7: engine artifacts (coordinator/store/artifacts.go).
	{"engine artifacts: artifacts, artifact_checks", migrateArtifacts},
	// 8: nets (coordinator/store/artifacts.go).
	{"nets: artifacts.engine, default_nets", migrateNets},
	// accounts (coordinator/store/accounts.go).
	{"accounts: users, sessions, approvals, audit; credentials.owner", migrateAccounts},
	// several coordinators on one PostgreSQL (coordinator/store/leader.go).
	{"leadership: arbiter_leader", migrateLeader},
	// webhooks (coordinator/store/hooks.go).
	{"webhooks: hooks, hook_deliveries", migrateHooks},
	// finding tests (coordinator/store/find.go).
	{"jobs_seq index", migrateJobsSeq},
	// follows on the web pages (coordinator/store/follows.go).
	{"follows: follows, follow_events", migrateFollows},
	{"perft cross-check: jobs.cross_check, cross_check_fraction, cross_check_seed; units.cross_check; runs.program", migrateCrossCheck},
	{"perft suites: jobs.suite_first", migrateSuite},
}

// migrateSuite adds a perft job over a suite of positions: the number of
// its first position (a suite job has no FEN).
func migrateSuite(ctx context.Context, tx *sql.Tx) error {
	return addColumns(ctx, tx, column{"jobs", "suite_first", "INTEGER NOT NULL DEFAULT 0"})
}

// migrateCrossCheck adds a perft job's cross-check by another program:
// the program, the sampled share and the seed that chose the units (the
// units chosen, and which program counted a run, are the perft kind's
// columns now: kinds/perft/store.go).
func migrateCrossCheck(ctx context.Context, tx *sql.Tx) error {
	return addColumns(ctx, tx,
		column{"jobs", "cross_check", "TEXT NOT NULL DEFAULT ''"},
		column{"jobs", "cross_check_fraction", "REAL NOT NULL DEFAULT 0"},
		column{"jobs", "cross_check_seed", "TEXT NOT NULL DEFAULT ''"})
}

const schemaV1 = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  fen TEXT NOT NULL,
  depth INTEGER NOT NULL,
  split_ply INTEGER NOT NULL,
  verify REAL NOT NULL,
  chess960 INTEGER NOT NULL,
  state TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL DEFAULT 0,
  root_moves TEXT NOT NULL,
  units_total INTEGER NOT NULL,
  positions INTEGER NOT NULL,
  total TEXT NOT NULL DEFAULT '',
  divide TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS workers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  capabilities TEXT NOT NULL,
  registered_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  unit_id TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  detail TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS pgns (
  job_id TEXT NOT NULL,
  batch_idx INTEGER NOT NULL,
  game INTEGER NOT NULL,
  pgn TEXT NOT NULL,
  PRIMARY KEY (job_id, batch_idx, game)
) WITHOUT ROWID;
`

// migrate1 is the first release's schema. It made the tests' tables
// (tests, batches) too in the releases before the test kind kept them
// (kinds/test/store.go, 2026-12-05): the kind's own first step creates
// them where they are missing, so files that ran this step keep their
// tests.
func migrate1(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schemaV1)
	return err
}

func migrate2(ctx context.Context, tx *sql.Tx) error {
	// Releases before the first one with a total column on jobs stored
	// finished perft results elsewhere; add what any older file lacks.
	for _, c := range []struct{ table, column, decl string }{
		{"jobs", "error", "TEXT NOT NULL DEFAULT ''"},
		{"jobs", "finished_at", "INTEGER NOT NULL DEFAULT 0"},
		{"jobs", "total", "TEXT NOT NULL DEFAULT ''"},
		{"jobs", "divide", "TEXT NOT NULL DEFAULT ''"},
		{"jobs", "submitter", "TEXT NOT NULL DEFAULT ''"},
		{"jobs", "priority", "INTEGER NOT NULL DEFAULT 0"},
		{"jobs", "throughput", "REAL NOT NULL DEFAULT 1"},
		// A finished perft job's verification summary; -1: not recorded
		// (jobs finished before this version), computed from runs on load.
		{"jobs", "units_done", "INTEGER NOT NULL DEFAULT -1"},
		{"jobs", "units_verified", "INTEGER NOT NULL DEFAULT -1"},
		{"jobs", "mismatches", "INTEGER NOT NULL DEFAULT -1"},
		{"jobs", "mismatches_settled", "INTEGER NOT NULL DEFAULT -1"},
		{"workers", "owner", "TEXT NOT NULL DEFAULT ''"},
	} {
		if err := addColumn(ctx, tx, c.table, c.column, c.decl); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS credentials (
  name TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  hash BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  revoked_at INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS credentials_hash ON credentials(hash);
CREATE TABLE IF NOT EXISTS quarantine (
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  error TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (kind, id)
);
CREATE INDEX IF NOT EXISTS events_job ON events(job_id);
CREATE UNIQUE INDEX IF NOT EXISTS workers_owner_name ON workers(owner, name) WHERE owner != '';
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
`)
	return err
}

// migrate3 also added tests.pgns_expired_at (when the retention setting
// deleted a finished test's games) in the releases before the test kind
// kept its table; the kind's first step adds it where it is missing.
func migrate3(ctx context.Context, tx *sql.Tx) error {
	// gz: the pgn column holds the game gzip-compressed (new rows); 0:
	// plain text (rows of earlier versions).
	return addColumn(ctx, tx, "pgns", "gz", "INTEGER NOT NULL DEFAULT 0")
}

// migrate4 created the SPSA tunes' tables (tunes, tune_updates) in the
// releases before the SPSA kind kept them (kinds/spsa/store.go,
// 2026-12-05): the kind's own first step creates them where they are
// missing, so the step is empty for a new file and files that ran it keep
// their tunes.
func migrate4(ctx context.Context, tx *sql.Tx) error { return nil }

// migrate5 created the verify sessions' tables (verify_sessions,
// verify_reports) in the releases before the verify kind kept them
// (kinds/verify/store.go, 2026-12-05): the kind's own first step creates
// them where they are missing, so the step is empty for a new file and
// files that ran it keep their sessions.
func migrate5(ctx context.Context, tx *sql.Tx) error { return nil }

func migrate6(ctx context.Context, tx *sql.Tx) error {
	return addColumns(ctx, tx,
		// A perft job that counts statistics (its runs hold nine counts per
		// position), and their totals once done (JSON, eight decimals).
		column{"jobs", "stats", "INTEGER NOT NULL DEFAULT 0"},
		column{"jobs", "stats_total", "TEXT NOT NULL DEFAULT ''"},
		// A perft job whose positions are cut into slices (1: none), and
		// the key ply of the cut below each position.
		column{"jobs", "slices", "INTEGER NOT NULL DEFAULT 1"},
		column{"jobs", "slice_ply", "INTEGER NOT NULL DEFAULT 0"})
}

// column is a column a migration adds to a table, with its declaration.
type column struct{ table, column, decl string }

// addColumns adds each column a table does not have yet.
func addColumns(ctx context.Context, tx *sql.Tx, cols ...column) error {
	for _, c := range cols {
		if err := addColumn(ctx, tx, c.table, c.column, c.decl); err != nil {
			return err
		}
	}
	return nil
}

// addColumn adds a column unless the table has it.
func addColumn(ctx context.Context, tx *sql.Tx, table, column, decl string) error {
	has, err := hasColumn(ctx, tx, table, column)
	if err != nil || has {
		return err
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", table, column, decl))
	return err
}

// Querier is what reads rows: the database a kind's Read gives, or the
// transaction of its Write (QueryRows).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func hasColumn(ctx context.Context, q Querier, table, column string) (bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return false, err
		}
		if name == column {
			return true, nil
		}
	}
	return false, rows.Err()
}

// inspection is what a read-only look at a file found.
type inspection struct {
	exists  bool
	version int // schema version (1 for an unversioned file of ours)
}

// inspect looks at path without writing to it.
func inspect(path string) (inspection, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return inspection{}, nil
	}
	if err != nil {
		return inspection{}, err
	}
	// mode=ro, immutable and no pragmas: nothing is written, and no -wal or
	// -shm file is created beside a file in WAL mode. (Immutable reads the
	// main file only; what a WAL holds beyond it is read again after the
	// real open, in Open.)
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return inspection{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var appID, version int
	if err := db.QueryRow("PRAGMA application_id").Scan(&appID); err != nil {
		return inspection{}, fmt.Errorf("%w: %v", ErrForeign, err)
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return inspection{}, fmt.Errorf("%w: %v", ErrForeign, err)
	}
	if problems, err := quickCheck(db); err != nil || len(problems) > 0 {
		if err != nil {
			problems = []string{err.Error()}
		}
		return inspection{}, fmt.Errorf("%w (PRAGMA quick_check: %s); restore a backup (arbiter backup) or move the file away",
			ErrCorrupt, strings.Join(problems, "; "))
	}
	var tables []string
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return inspection{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	switch {
	case appID == ApplicationID:
		if version > SchemaVersion {
			return inspection{}, fmt.Errorf("%w: schema version %d, this build knows up to %d (upgrade arbiter)", ErrNewer, version, SchemaVersion)
		}
		return inspection{exists: true, version: version}, nil
	case appID != 0:
		return inspection{}, fmt.Errorf("%w: application_id %#x", ErrForeign, appID)
	case len(tables) == 0:
		return inspection{exists: true, version: 0}, nil
	}
	// Unversioned: ours only if every table is one the first releases made
	// (tests and batches, positions, units and runs among them: the test
	// and perft kinds' tables now, which their first steps adopt).
	ours := map[string]bool{"jobs": true, "positions": true, "units": true, "runs": true, "workers": true,
		"events": true, "tests": true, "batches": true, "pgns": true}
	hasJobs := false
	for _, t := range tables {
		if !ours[t] {
			return inspection{}, fmt.Errorf("%w: it has a table %q", ErrForeign, t)
		}
		hasJobs = hasJobs || t == "jobs"
	}
	if !hasJobs || version != 0 {
		return inspection{}, fmt.Errorf("%w: tables %s", ErrForeign, strings.Join(tables, ", "))
	}
	return inspection{exists: true, version: 1}, nil
}

// quickCheck returns up to three problems PRAGMA quick_check reports.
func quickCheck(db *sql.DB) ([]string, error) {
	rows, err := db.Query("PRAGMA quick_check(3)")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		if line != "ok" {
			out = append(out, strings.TrimSpace(strings.ReplaceAll(line, "\n", " ")))
		}
	}
	return out, rows.Err()
}

// Open opens (creating if needed) the store in dir, upgrading an older
// schema in place. Foreign, newer and damaged files are refused untouched.
func Open(dir string) (*Store, error) {
	// A new directory is private; an existing one is tightened below, once
	// its store is known not to be refused.
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("store: data dir %q: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	found, err := inspect(path)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	// Modes only: a file inspect accepted, before SQLite opens it (and
	// gives a new -wal and -shm its mode).
	if err := TightenDataDir(dir); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and the coordinator
	// serialises state changes itself.
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		db.Close()
		return nil, fmt.Errorf("store: %s: journal_mode is %q, want wal (%v)", path, mode, err)
	}
	s := &Store{db: db, path: path, dir: dir, backend: SQLite}
	// The main file can lag the store: its WAL may hold a newer version
	// (and a store another process has open and has not checkpointed reads
	// as empty), and migrating it again from an older version fails on the
	// first step that is not idempotent. Read the version through the open
	// connection, which sees the WAL.
	from := found.version
	var appID int
	if err := db.QueryRow("PRAGMA application_id").Scan(&appID); err == nil && appID == ApplicationID {
		if v, err := s.Version(context.Background()); err == nil && v > from {
			from = v
		}
	}
	if from > SchemaVersion {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w: schema version %d, this build knows up to %d (upgrade arbiter)", path, ErrNewer, from, SchemaVersion)
	}
	if err := s.migrate(context.Background(), from); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if err := s.migrateKinds(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	s.startWriter()
	return s, nil
}

// migrate applies every migration after from.
func (s *Store) migrate(ctx context.Context, from int) error {
	for v := from + 1; v <= len(migrations); v++ {
		m := migrations[v-1]
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := m.up(ctx, tx); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d (%s): %w", v, m.name, err)
		}
		// PRAGMA takes no parameters; v is an int from this table.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
			tx.Rollback()
			return err
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d (%s): %w", v, m.name, err)
		}
	}
	return nil
}

// Version returns the store's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	if s.backend == Postgres {
		_, v, err := pgVersion(ctx, s.db)
		return v, err
	}
	var v int
	err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}
