// Package storetest runs a test of a kind's tables on both of the
// coordinator's backends: a SQLite file and a real PostgreSQL database
// (testing/pgtest). Only tests import it.
package storetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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

// ForgetKindVersionIn deletes the schema:KIND row through the open store
// s, on either backend, as ForgetKindVersion does in a closed SQLite file;
// alter, when given, runs in the same transaction (to give the kind's
// tables an earlier release's shape). The next open runs the kind's steps
// again.
func ForgetKindVersionIn(t *testing.T, s *store.Store, kind string, alter ...string) {
	t.Helper()
	err := s.Write(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range alter {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key=?", "schema:"+kind)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("deleting schema:%s: %d rows", kind, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Release1 writes the data directory of the first release (the fixture
// coordinator/store/testdata/release1-coordinator.db.gz, made by that
// release's binary: finished, cancelled and running perft jobs, a
// finished SPRT test and a finished match, their games stored as plain
// text) into a new directory and returns it.
func Release1(t *testing.T) string {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("storetest: no source path for the fixture")
	}
	gz, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "coordinator", "store", "testdata", "release1-coordinator.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	db, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, store.FileName), db, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// OpenAdopted opens the SQLite store in dir, closed at the test's end,
// and fails the test unless kind's schema is at version want after the
// open (a kind's steps ran over the tables an earlier release left).
func OpenAdopted(t *testing.T, dir, kind string, want int) *store.Store {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatalf("opening a store whose tables came before the kind's version: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if v, err := s.KindVersion(context.Background(), kind); err != nil || v != want {
		t.Fatalf("schema:%s after the open: %d %v, want %d", kind, v, err, want)
	}
	return s
}
