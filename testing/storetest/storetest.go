// Package storetest runs a test of a kind's tables on both of the
// coordinator's backends: a SQLite file and a real PostgreSQL database
// (testing/pgtest). Only tests import it.
package storetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

// Opener opens the test's store, again after a Close (a reopen).
type Opener func() (*store.Store, error)

// EachBackend runs fn on a SQLite file and on a fresh PostgreSQL
// database (skipped with pgtest's message where PostgreSQL is not
// installed, unless ARBITER_REQUIRE_POSTGRES=1).
func EachBackend(t *testing.T, fn func(t *testing.T, open Opener)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, func() (*store.Store, error) { return store.Open(dir) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, dir := pgtest.Start(t).NewDatabase(t), t.TempDir()
		fn(t, func() (*store.Store, error) { return store.OpenPostgres(dsn, dir) })
	})
}

// ForgetKindVersion deletes the schema:KIND row of the closed SQLite
// store in dir, as a file of a release before the kind kept its own
// tables has none: the next Open runs the kind's steps over tables that
// may already be there.
func ForgetKindVersion(t *testing.T, dir, kind string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec("DELETE FROM meta WHERE key=?", "schema:"+kind)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("deleting schema:%s: %d rows", kind, n)
	}
}

// CopyToPostgres copies src (arbiter store copy) into a fresh PostgreSQL
// database and returns the copy, closed at the test's end, and the rows
// copied per table.
func CopyToPostgres(t *testing.T, src *store.Store) (*store.Store, map[string]int64) {
	t.Helper()
	dst, err := store.OpenPostgres(pgtest.Start(t).NewDatabase(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	tables, err := store.Copy(context.Background(), src, dst)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, tc := range tables {
		rows[tc.Table] = tc.Rows
	}
	return dst, rows
}
