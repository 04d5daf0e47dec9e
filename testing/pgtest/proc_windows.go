package pgtest

import "syscall"

// credential is unused on Windows: the server runs as the test's own
// user, with no process group and no parent-death signal.
type credential struct{ Uid, Gid uint32 }

func runAs() (*credential, error) { return nil, nil }

func childAttr(*credential, bool) *syscall.SysProcAttr { return nil }
