//go:build unix

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestDataDirIsPrivate: the files of a real coordinator's data directory
// (the SQLite store and its -wal and -shm, an uploaded engine's bytes, the
// artifact and datagen directories) are 0600 and its directories 0700 after
// a first run, whatever the umask; a data directory an older build left
// readable (files 0644, directories 0755, the finding of issue 41) is
// tightened when the coordinator starts on it again; a backup the CLI
// writes is 0600. The control: a file that is not the coordinator's, left
// in the data directory by its operator, keeps its mode.
func TestDataDirIsPrivate(t *testing.T) {
	onSQLiteOnly(t)
	old := syscall.Umask(0o022) // the common umask, which made the store 0644
	defer syscall.Umask(old)
	addr, data := proctest.FreeAddr(t), filepath.Join(t.TempDir(), "data")
	c := coordinator(t, addr, data)
	engine := filepath.Join(t.TempDir(), "engine")
	copyFile(t, "/bin/true", engine)
	if out, code := cli(t, append([]string{"engine", "upload", engine, "--name", "private", "--bench", "1"}, clientArgs(addr)...)...); code != 0 {
		t.Fatalf("upload: exit %d: %s", code, out)
	}
	c.kill(t)
	checked := checkPrivate(t, data, nil)
	for _, name := range []string{"coordinator.db", "coordinator.db-wal", "coordinator.db-shm", "artifacts/objects"} {
		if !checked[name] {
			t.Errorf("%s was not in the data directory: the test checked nothing there", name)
		}
	}

	// What an older build left: everything readable by all.
	loosen(t, data)
	notes := filepath.Join(data, "operator-notes.txt")
	if err := os.WriteFile(notes, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	coordinator(t, addr, data)
	checkPrivate(t, data, map[string]bool{"operator-notes.txt": true})
	if fi, err := os.Stat(notes); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the operator's own file: %v %v, want it left 0644", fi.Mode(), err)
	}

	backup := filepath.Join(t.TempDir(), "backup.db")
	if out, code := cli(t, "backup", "--coordinator", addr, "--token", token, "--to", backup); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, out)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup %s: %v %v, want 0600", backup, fi.Mode(), err)
	}
}

// checkPrivate fails the test for every file of data that is not 0600 and
// every directory that is not 0700 (the names of skip excepted) and returns
// the relative names it checked.
func checkPrivate(t *testing.T, data string, skip map[string]bool) map[string]bool {
	t.Helper()
	checked := map[string]bool{}
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(data, path)
		if skip[rel] {
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", path, fi.Mode().Perm(), want)
		}
		checked[rel] = true
		return nil
	})
	if strings.Count(strings.Join(mapKeys(checked), " "), "objects/") == 0 {
		t.Errorf("no uploaded object under %s/artifacts/objects", data)
	}
	return checked
}

// loosen makes every file of dir 0644 and every directory 0755.
func loosen(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return nil
	})
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
