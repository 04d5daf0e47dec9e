package store

import (
	"os"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// opener opens the test's store: the same database every call.
type opener func() (*Store, error)

// eachBackend runs fn once on SQLite and once on PostgreSQL (a real
// server, skipped with a message when PostgreSQL is not installed unless
// ARBITER_REQUIRE_POSTGRES=1).
func eachBackend(t *testing.T, fn func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, func() (*Store, error) { return Open(dir) })
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, postgresOpener(t))
	})
}

// postgresOpener makes a fresh database for t and opens stores on it.
func postgresOpener(t *testing.T) opener {
	dsn := pgtest.Start(t).NewDatabase(t)
	dir := t.TempDir()
	return func() (*Store, error) { return OpenPostgres(dsn, dir) }
}
