//go:build unix

package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBackupAndStoreFilesArePrivate: with the common umask 022, a new
// store's file and a backup of it are 0600; a backup onto an existing file
// is refused and leaves it as it was.
func TestBackupAndStoreFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for path, want := range map[string]os.FileMode{dir: DirMode, filepath.Join(dir, FileName): FileMode} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if err := s.Backup(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != FileMode || fi.Size() == 0 {
		t.Errorf("backup: %v %v, want a non-empty file of mode %v", fi.Mode().Perm(), err, FileMode)
	}
	if err := s.Backup(context.Background(), backup); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a backup onto an existing file: %v, want refused", err)
	}
}
