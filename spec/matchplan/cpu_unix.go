//go:build unix

package matchplan

import (
	"syscall"
	"time"
)

// cpuTimes are CPU times of this process and of its waited-for children.
type cpuTimes struct{ user, system, children time.Duration }

// cpuUsage reads them: RUSAGE_SELF counts this process only, never the
// engines (they are children, in RUSAGE_CHILDREN).
func cpuUsage() (cpuTimes, bool) {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return cpuTimes{}, false
	}
	return cpuTimes{
		user:     time.Duration(self.Utime.Nano()),
		system:   time.Duration(self.Stime.Nano()),
		children: time.Duration(children.Utime.Nano() + children.Stime.Nano()),
	}, true
}
