package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watchesMemory: the supervisor reads the engine's resident size from
// /proc and kills it past the limit.
const watchesMemory = true

// childAttr ties the exec stage (the engine) to the supervisor's life: if
// the supervisor dies, so does the engine.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// watchInterval is how often the watchdog reads the resident size. Growth
// faster than the watchdog looks runs into the address-space cap.
const watchInterval = 50 * time.Millisecond

type watcher struct {
	stopCh chan struct{}
	done   sync.WaitGroup
	killed int64 // resident bytes at the kill (0: none)
	disk   int64 // bytes in its directory at the kill (0: none)
}

// diskEvery is how many memory looks pass between two of the directory.
const diskEvery = 10

// watch kills p when its resident memory passes limit, or (dir not "")
// when the files under dir pass disk bytes.
func watch(p *os.Process, limit int64, dir string, disk int64) *watcher {
	w := &watcher{stopCh: make(chan struct{})}
	statm := "/proc/" + strconv.Itoa(p.Pid) + "/statm"
	page := int64(os.Getpagesize())
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-w.stopCh:
				return
			case <-t.C:
			}
			if dir != "" && n%diskEvery == 0 {
				if used := diskUsage(dir); used > disk {
					w.disk = used
					p.Signal(syscall.SIGKILL)
					return
				}
			}
			b, err := os.ReadFile(statm)
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) < 2 {
				continue
			}
			pages, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				continue
			}
			if rss := pages * page; rss > limit {
				w.killed = rss
				// os.Process kills through a pidfd: never another process
				// that took the pid after the engine was reaped.
				p.Signal(syscall.SIGKILL)
				return
			}
		}
	}()
	return w
}

// stop ends the watch and returns the resident size, or the directory's
// size, at which it killed the engine (0: it did not).
func (w *watcher) stop() (int64, int64) {
	close(w.stopCh)
	w.done.Wait()
	return w.killed, w.disk
}

// diskUsage is what the files under dir take on disk (allocated blocks:
// a sparse file costs what it holds).
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// errCapabilitiesLeft: capset returned without error but a set is not
// empty.
var errCapabilitiesLeft = errors.New("capabilities left after dropping them all")

// lockDown forbids new privileges, drops every capability, confines the
// file system and network (Landlock, where the kernel has it), and
// installs the seccomp filter, where the architecture has one (a build
// may start processes). No allocation from here on.
func lockDown(c confinement, forks bool) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	if err := c.restrict(); err != nil {
		return err
	}
	if !filtersForks {
		return nil
	}
	return installForkFilter(forks)
}

// rlimitBoundsTasks: RLIMIT_NPROC bounds the run's processes and threads
// only in a user namespace of its own (elsewhere it counts all of the
// worker user's), and never for the host's root user, whom the kernel
// exempts.
func rlimitBoundsTasks(isolated bool) bool { return isolated && os.Getuid() != 0 }
