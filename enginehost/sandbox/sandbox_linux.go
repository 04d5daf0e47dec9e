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

// rlimitBoundsTasks: RLIMIT_NPROC bounds a run's processes and threads
// unless the worker is the host's root user, whom the kernel exempts (a
// pids cgroup does it then).
func rlimitBoundsTasks() bool { return os.Getuid() != 0 }

// taskLimit is the RLIMIT_NPROC of a run (0: none), decided by the
// supervisor before it starts the run. In a user namespace of its own the
// count is the run's own tasks; without one it is every task of the
// worker's user on the host, so the run gets its limit on top of those
// there now (the worker, this supervisor, other engines): a thread bomb
// stops there, and the worker, whose own limit is not lowered, can still
// start threads.
func taskLimit(l Limits, isolated bool) uint64 {
	switch {
	case !rlimitBoundsTasks():
		return 0
	case isolated:
		return uint64(l.Threads)
	}
	return uint64(userTasks(os.Getuid()) + l.Threads)
}

// userTasks counts the threads of the processes whose real user is uid
// (those this PID namespace shows).
func userTasks(uid int) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if e.Name()[0] < '1' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var real, threads int
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					real, _ = strconv.Atoi(f[0])
				}
			} else if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(rest))
			}
		}
		if real == uid {
			n += threads
		}
	}
	return n
}
