//go:build linux || darwin

package netloop

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock makes this process the one running the loop in d (an flock on
// DIR/lock, released by the kernel when the process ends, however it
// ends, so a killed loop never leaves it held). Another process running
// there is refused with its pid. unlock releases it.
func (d Dir) Lock() (unlock func(), err error) {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return nil, fmt.Errorf("--dir %s: %v", d, err)
	}
	f, err := os.OpenFile(d.path("lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--dir %s: %v", d, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(d.path("lock"))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("--dir %s: another arbiter net loop runs in it (pid %s): wait for it or stop it first", d, strings.TrimSpace(string(b)))
		}
		return nil, fmt.Errorf("--dir %s: lock: %v", d, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
