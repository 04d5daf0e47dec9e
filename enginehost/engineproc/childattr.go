package engineproc

import "syscall"

// ChildAttr is what an engine process is started with, for another helper
// process a command starts and must not outlive it (arbiter up's
// Prometheus): its own process group, and on Linux killed by the kernel
// when its starter dies, even by SIGKILL.
func ChildAttr() *syscall.SysProcAttr { return sysProcAttr() }
