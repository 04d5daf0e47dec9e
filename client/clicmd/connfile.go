package clicmd

// Where `arbiter up` keeps its data and how its clients find it without
// copying flags. Without --data (and without --temp), up keeps its store
// in the user's data directory (XDG), and writes there, next to the store,
// a connection file with its address and token (mode 0600). Every client
// given no --coordinator and no $ARBITER_COORDINATOR reads that file while
// the up that wrote it runs, and takes its token when given none. The
// file is also the directory's lock: a second up finds it held by a live
// process and keeps its data in a temporary directory instead, so two
// coordinators never share one store.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// EnvCoordinator names the coordinator of every client command, as
// --coordinator does.
const EnvCoordinator = "ARBITER_COORDINATOR"

// ConnFileName is the connection file's name in up's data directory.
const ConnFileName = "coordinator.json"

// UpConnection is the connection file's content.
type UpConnection struct {
	PID     int    `json:"pid"`
	Address string `json:"address,omitempty"`
	Token   string `json:"token,omitempty"`
	Pages   string `json:"pages,omitempty"`
}

// DefaultUpData is up's data directory when given no --data: under
// $XDG_DATA_HOME (default ~/.local/share; %LocalAppData% on Windows).
func DefaultUpData() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" || !filepath.IsAbs(base) {
		if runtime.GOOS == "windows" && os.Getenv("LocalAppData") != "" {
			base = os.Getenv("LocalAppData")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no data directory for arbiter up (no home directory: %v); give --data DIR or --temp", err)
			}
			base = filepath.Join(home, ".local", "share")
		}
	}
	return filepath.Join(base, "arbiter", "up"), nil
}

// processAlive reports whether process pid runs (on Windows: exists).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return true
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// readConnFile reads the connection file in dir; ok only when the up that
// wrote it still runs and has said where it listens.
func readConnFile(dir string) (UpConnection, bool) {
	var c UpConnection
	b, err := os.ReadFile(filepath.Join(dir, ConnFileName))
	if err != nil || json.Unmarshal(b, &c) != nil {
		return c, false
	}
	return c, c.Address != "" && processAlive(c.PID)
}

// ConnLock is a held connection file.
type ConnLock struct{ path string }

// ErrDataBusy is a data directory another live up holds.
var ErrDataBusy = errors.New("in use")

// LockUpData takes dir for this process: creates it and its connection
// file exclusively (a stale file of a dead process is replaced). The error
// is ErrDataBusy (wrapped, with the holder's pid) when a live up holds it.
func LockUpData(dir string) (*ConnLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ConnFileName)
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = json.NewEncoder(f).Encode(UpConnection{PID: os.Getpid()})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				return nil, err
			}
			return &ConnLock{path: path}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		var c UpConnection
		b, rerr := os.ReadFile(path)
		if rerr == nil && json.Unmarshal(b, &c) == nil && processAlive(c.PID) && c.PID != os.Getpid() {
			return nil, fmt.Errorf("%w by arbiter up (pid %d)", ErrDataBusy, c.PID)
		}
		os.Remove(path) // a dead process's (or unreadable) file
	}
	return nil, fmt.Errorf("%s: could not take the connection file", path)
}

// Publish writes where this up listens; clients read it from now on.
func (l *ConnLock) Publish(c UpConnection) error {
	c.PID = os.Getpid()
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	// Written beside and renamed: a client never reads half a file.
	tmp := l.path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.path)
}

// Release removes the file: the coordinator is gone.
func (l *ConnLock) Release() { os.Remove(l.path) }

// RunningUp is the connection of the up running on the default data
// directory, if any.
func RunningUp() (UpConnection, bool) {
	dir, err := DefaultUpData()
	if err != nil {
		return UpConnection{}, false
	}
	return readConnFile(dir)
}

// CoordinatorAddress is a client's coordinator when --coordinator is not
// given: $ARBITER_COORDINATOR, else the running up's, else this machine's
// default port; from says where it came from.
func CoordinatorAddress() (addr, from string) {
	if a := strings.TrimSpace(os.Getenv(EnvCoordinator)); a != "" {
		return a, "$" + EnvCoordinator
	}
	if c, ok := RunningUp(); ok {
		return c.Address, "the running arbiter up"
	}
	return DefaultCoordinator, ""
}

// Path is the connection file's path.
func (l *ConnLock) Path() string { return l.path }
