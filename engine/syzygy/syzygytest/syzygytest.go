// Package syzygytest finds the Syzygy test tables for the tests of every
// package that probes them (the prober, the search, the UCI front end).
package syzygytest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the test tables' directory: ARBITER_SYZYGY_PATH, else
// shared/data/syzygy beside the project root (the directory holding
// go.mod, found upwards from the test's working directory), as an absolute
// path. It checks the directory holds need (a file name such as
// "KQvK.rtbw"); without it the test skips (SkipUnlessRequired).
func Dir(t testing.TB, need string) string {
	t.Helper()
	dir := os.Getenv("ARBITER_SYZYGY_PATH")
	var err error
	if dir == "" {
		dir, err = besideProjectRoot()
	}
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, need))
	}
	if err != nil {
		SkipUnlessRequired(t, "Syzygy test tables (with %s) not found in %s (set ARBITER_SYZYGY_PATH): %v", need, dir, err)
	}
	return dir
}

// SkipUnlessRequired skips t, or fails it under
// ARBITER_REQUIRE_TABLEBASES=1 (set by CI), so that CI cannot pass with
// the tablebase tests skipped.
func SkipUnlessRequired(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("ARBITER_REQUIRE_TABLEBASES") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func besideProjectRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data", "syzygy"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
