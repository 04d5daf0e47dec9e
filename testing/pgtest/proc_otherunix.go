//go:build unix && !linux

package pgtest

import "syscall"

// dieWithParent does nothing: only Linux has a parent-death signal; a
// test killed outright leaves its server to be stopped by hand.
func dieWithParent(*syscall.SysProcAttr) {}
