package matchplan

import (
	"syscall"
	"time"
)

// cpuTimes are CPU times of this process and of its children.
type cpuTimes struct{ user, system, children time.Duration }

// cpuUsage reads this process's times; Windows does not sum up finished
// children, so their time is not shown (zero).
func cpuUsage() (cpuTimes, bool) {
	var creation, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err != nil || syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user) != nil {
		return cpuTimes{}, false
	}
	// Filetime counts 100 ns units.
	ticks := func(f syscall.Filetime) time.Duration {
		return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
	}
	return cpuTimes{user: ticks(user), system: ticks(kernel)}, true
}
