//go:build unix

package artifacts

import (
	"os/exec"
	"syscall"
)

// stopWholeGit makes git its own process group and kills the whole group
// when its context ends: a fetch runs a remote helper and index-pack as
// children, which would otherwise go on writing into a mirror that is
// being removed.
func stopWholeGit(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
