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

// rlimitBoundsTasks: outside Linux RLIMIT_NPROC counts all of the
// user's processes, so it is not set.
func rlimitBoundsTasks(bool) bool { return false }

// pidsCgroup: no cgroups outside Linux.
type pidsCgroup struct{}

func newPidsCgroup(int) (*pidsCgroup, error) { return nil, errors.New("no cgroups on this platform") }

func (*pidsCgroup) enter() error { return nil }
func (*pidsCgroup) leave() error { return nil }
func (*pidsCgroup) remove()      {}
