//go:build unix && !linux

package sandbox

import "syscall"

// prepareExec returns the exec. Outside Linux the address-space limit is
// not enforced (macOS refuses it), so syscall.Exec may allocate.
func prepareExec(path string, argv, env []string) (func() syscall.Errno, error) {
	return func() syscall.Errno {
		return errnoOf(syscall.Exec(path, argv, env))
	}, nil
}
