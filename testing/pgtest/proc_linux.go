package pgtest

import "syscall"

// dieWithParent stops the server when the test process dies (killed, so
// no cleanup ran): Linux alone can ask the kernel for that.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
