//go:build unix && !linux

package engineproc

import "syscall"

// sysProcAttr puts the engine in its own process group, so that a kill
// takes its children too. (Only Linux can tie the engine's life to ours.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
