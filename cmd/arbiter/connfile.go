package main

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

// envCoordinator names the coordinator of every client command, as
// --coordinator does.
const envCoordinator = "ARBITER_COORDINATOR"

// connFileName is the connection file's name in up's data directory.
const connFileName = "coordinator.json"

// upConnection is the connection file's content.
type upConnection struct {
	PID     int    `json:"pid"`
	Address string `json:"address,omitempty"`
	Token   string `json:"token,omitempty"`
	Pages   string `json:"pages,omitempty"`
}

// defaultUpData is up's data directory when given no --data: under
// $XDG_DATA_HOME (default ~/.local/share; %LocalAppData% on Windows).
func defaultUpData() (string, error) {
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
func readConnFile(dir string) (upConnection, bool) {
	var c upConnection
	b, err := os.ReadFile(filepath.Join(dir, connFileName))
	if err != nil || json.Unmarshal(b, &c) != nil {
		return c, false
	}
	return c, c.Address != "" && processAlive(c.PID)
}

// connLock is a held connection file.
type connLock struct{ path string }

// errDataBusy is a data directory another live up holds.
var errDataBusy = errors.New("in use")

// lockUpData takes dir for this process: creates it and its connection
// file exclusively (a stale file of a dead process is replaced). The error
// is errDataBusy (wrapped, with the holder's pid) when a live up holds it.
func lockUpData(dir string) (*connLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, connFileName)
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = json.NewEncoder(f).Encode(upConnection{PID: os.Getpid()})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				return nil, err
			}
			return &connLock{path: path}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		var c upConnection
		b, rerr := os.ReadFile(path)
		if rerr == nil && json.Unmarshal(b, &c) == nil && processAlive(c.PID) && c.PID != os.Getpid() {
			return nil, fmt.Errorf("%w by arbiter up (pid %d)", errDataBusy, c.PID)
		}
		os.Remove(path) // a dead process's (or unreadable) file
	}
	return nil, fmt.Errorf("%s: could not take the connection file", path)
}

// publish writes where this up listens; clients read it from now on.
func (l *connLock) publish(c upConnection) error {
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

// release removes the file: the coordinator is gone.
func (l *connLock) release() { os.Remove(l.path) }

// runningUp is the connection of the up running on the default data
// directory, if any.
func runningUp() (upConnection, bool) {
	dir, err := defaultUpData()
	if err != nil {
		return upConnection{}, false
	}
	return readConnFile(dir)
}

// coordinatorAddress is a client's coordinator when --coordinator is not
// given: $ARBITER_COORDINATOR, else the running up's, else this machine's
// default port; from says where it came from.
func coordinatorAddress() (addr, from string) {
	if a := strings.TrimSpace(os.Getenv(envCoordinator)); a != "" {
		return a, "$" + envCoordinator
	}
	if c, ok := runningUp(); ok {
		return c.Address, "the running arbiter up"
	}
	return defaultCoordinator, ""
}
