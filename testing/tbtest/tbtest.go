// Package tbtest finds the shared Syzygy test tables for tests: every
// 3-4 piece table, KQRvKR and KBBvKN, in shared/data/syzygy beside the
// project root. Tests skip, with the reason, where they are absent.
package tbtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

// Dir is the shared tables' directory.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Skip("tbtest: no source path to find the shared tables from")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "syzygy")
	if _, err := os.Stat(filepath.Join(dir, "KBBvKN.rtbw")); err != nil {
		t.Skipf("no shared Syzygy tables: %v", err)
	}
	return dir
}

// Open opens the shared tables, closed when the test ends.
func Open(t testing.TB) *syzygy.Tablebase {
	t.Helper()
	tb, err := syzygy.Open(Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}
