package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The data directory holds the store, the artifacts (engines and source
// trees users uploaded), datagen shards, backups being taken and, for
// arbiter up, the connection file with the admin token. None of it is for
// other users of the machine, so:
//
//   - every file the coordinator creates there is FileMode (0600) and every
//     directory DirMode (0700), whatever the umask;
//   - at open, what an older build left readable (0644, 0755) is tightened
//     to those modes: the entries of dataDirEntries below, and the data
//     directory itself. Nothing else in the directory is touched, so that a
//     --data naming a directory with other files (a home directory) does
//     not have them changed.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// dataDirEntries is the one list of what the coordinator keeps in its
// data directory (a directory's whole tree is its). arbiter up's
// workers/ (each in-process worker's cache of engines, which it makes
// executable) is the worker's, private through the data directory's 0700.
var dataDirEntries = []string{
	FileName, FileName + "-wal", FileName + "-shm", FileName + "-journal",
	"artifacts",        // coordinator/artifacts: objects/ and partial/
	"datagen",          // kinds/datagen: shards, unless its settings name another directory
	"coordinator.json", // arbiter up: address and admin token
}

// MkdirPrivate makes dir and its missing parents with DirMode, and
// tightens dir itself when it exists with wider permissions.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	return tighten(dir)
}

// TightenDataDir brings the data directory and the entries of
// dataDirEntries in it to FileMode and DirMode (owner bits kept, group
// and other bits removed). Symbolic links are not followed.
func TightenDataDir(dir string) error {
	if err := tighten(dir); err != nil {
		return err
	}
	for _, name := range dataDirEntries {
		err := filepath.WalkDir(filepath.Join(dir, name), func(path string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return tighten(path)
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("data dir %s: %w", dir, err)
		}
	}
	return nil
}

// tighten removes the group and other permission bits of path (not
// following a symbolic link), leaving the owner's.
func tighten(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(path, fi.Mode().Perm()&^0o077)
}

// createPrivate creates path empty with FileMode when it does not exist,
// so that SQLite, which gives its -wal and -shm files the mode of the
// database file, makes those private too.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
