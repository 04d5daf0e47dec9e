//go:build unix

package worker

import (
	"os/exec"
	"syscall"
)

// killGroup makes a build its own process group and kills the whole group
// when its context ends (make's children too).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
