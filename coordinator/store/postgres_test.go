package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

// pgDB opens dsn raw, for a test to look behind the store.
func pgDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pgSnapshot is every table of the database with its row count: what a
// refused open must leave as it was.
func pgSnapshot(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, tb := range tables {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + tb + `"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:%d ", tb, n)
	}
	var v sql.NullInt64
	db.QueryRow("SELECT version FROM arbiter_schema").Scan(&v)
	fmt.Fprintf(&b, "version:%v", v)
	return b.String()
}

func TestPostgresFreshIsCurrent(t *testing.T) {
	open := postgresOpener(t)
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(context.Background()); err != nil || v != SchemaVersion || s.Backend() != Postgres {
		t.Fatalf("version %d %v backend %s, want %d on postgres", v, err, s.Backend(), SchemaVersion)
	}
	// A second open finds it current.
	s2, err := open()
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

func TestPostgresRefuseNewerUntouched(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	s, err := OpenPostgres(dsn, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := pgDB(t, dsn)
	if _, err := db.Exec("UPDATE arbiter_schema SET version = 999"); err != nil {
		t.Fatal(err)
	}
	before := pgSnapshot(t, db)
	if _, err := OpenPostgres(dsn, t.TempDir()); !errors.Is(err, ErrNewer) {
		t.Fatalf("open of a newer schema: %v, want ErrNewer", err)
	}
	if after := pgSnapshot(t, db); after != before {
		t.Fatalf("newer schema changed:\n%s\n%s", before, after)
	}
}

func TestPostgresRefuseForeignUntouched(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	db := pgDB(t, dsn)
	if _, err := db.Exec("CREATE TABLE users(id BIGINT PRIMARY KEY, name TEXT); INSERT INTO users VALUES(1, 'x')"); err != nil {
		t.Fatal(err)
	}
	before := pgSnapshot(t, db)
	_, err := OpenPostgres(dsn, t.TempDir())
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "users") {
		t.Fatalf("open of a foreign schema: %v, want ErrForeign naming the table", err)
	}
	if after := pgSnapshot(t, db); after != before {
		t.Fatalf("foreign schema changed:\n%s\n%s", before, after)
	}
	// Another application's version table is foreign too.
	if _, err := db.Exec("DROP TABLE users; CREATE TABLE arbiter_schema(application_id BIGINT, version BIGINT); INSERT INTO arbiter_schema VALUES(7, 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(dsn, t.TempDir()); !errors.Is(err, ErrForeign) {
		t.Fatalf("another application id: %v, want ErrForeign", err)
	}
}

// Bad connection settings: clear errors that never show the password,
// and nothing written.
func TestPostgresBadInput(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	wrong := strings.Replace(dsn, srv.Password(), "not-the-password", 1)
	farm := filepath.Join(t.TempDir(), "farm")
	_, err := OpenPostgres(wrong, farm)
	if err == nil || !strings.Contains(err.Error(), "password authentication failed") || strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := os.Stat(farm); !os.IsNotExist(err) {
		t.Fatalf("a refused database made the data dir (%v)", err)
	}
	t.Log(err)
	// Nothing listens on port 1.
	_, err = OpenPostgres("postgres://arbiter:secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "connect") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("unreachable: %v", err)
	}
	t.Log(err)
	_, err = OpenPostgres("postgres://arbiter:secret@127.0.0.1:notaport/x", t.TempDir())
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("bad URL: %v", err)
	}
	t.Log(err)
	if _, err := OpenURL("mysql://x", t.TempDir()); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("another scheme: %v", err)
	}
	// A read-only database (as a hot standby is) is refused before any
	// migration.
	db := pgDB(t, dsn)
	name := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	if _, err := db.Exec(`ALTER DATABASE "` + name + `" SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	_, err = OpenPostgres(dsn, t.TempDir())
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only database: %v, want ErrReadOnly", err)
	}
	t.Log(err)
	if snap := pgSnapshot(t, db); snap != "version:{0 false}" {
		t.Fatalf("read-only database written: %s", snap)
	}
}

// columns lists table.column of every table of a store.
func columns(t *testing.T, s *Store) []string {
	t.Helper()
	var q string
	if s.Backend() == Postgres {
		q = `SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = current_schema()
			AND table_name != 'arbiter_schema' AND column_name != 'rowid'`
	} else {
		q = `SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
			WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	}
	rows, err := s.db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// One version number, one schema: every SQLite migration has its
// PostgreSQL step, and they leave the same tables and columns.
func TestSchemaParity(t *testing.T) {
	if len(pgMigrations) != len(migrations) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones", len(migrations), len(pgMigrations))
	}
	lite, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := postgresOpener(t)()
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	a, b := columns(t, lite), columns(t, pg)
	if !slices.Equal(a, b) {
		t.Fatalf("schemas differ:\nsqlite   %v\npostgres %v", a, b)
	}
}
