//go:build unix && !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
)

// Neither a /proc watchdog nor a fork filter outside Linux: the verdict
// on memory comes from the peak resident size after the engine ended.
const (
	watchesMemory = false
	filtersForks  = false
)

func childAttr() *syscall.SysProcAttr { return nil }

// isolatedAttr: no namespaces outside Linux.
func isolatedAttr() *syscall.SysProcAttr { return nil }

func isolate(Spec) error { return nil }

type watcher struct{}

func watch(*os.Process, int64, string, int64) *watcher { return &watcher{} }

func (*watcher) stop() (int64, int64) { return 0, 0 }

// confinement: no Landlock outside Linux.
type confinement struct{}

func prepareConfinement(Spec) (confinement, error) { return confinement{}, nil }

func lockDown(confinement, bool) error { return nil }

func landlockABI() int { return 0 }

func tryFork() bool { return false }

func tryMemfd() bool { return false }

func trySocket(int) bool { return true }

// rlimitBoundsTasks: outside Linux RLIMIT_NPROC is not set (no user
// namespace to count a run's tasks apart).
func rlimitBoundsTasks() bool { return false }

func taskLimit(Limits, bool) uint64 { return 0 }

// pidsCgroup: no cgroups outside Linux.
type pidsCgroup struct{ dir string }

func newPidsCgroup(int) (*pidsCgroup, error) { return nil, errors.New("no cgroups on this platform") }

func (*pidsCgroup) remove() {}

func joinCgroup(string) error { return errors.New("no cgroups on this platform") }
