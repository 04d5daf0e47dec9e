package engineproc

import "syscall"

// sysProcAttr puts the engine in its own process group, so that a kill
// takes its children too, and has the kernel kill it if the thread that
// started it dies (a runner killed with SIGKILL leaves no engines behind).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
