package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks the x32 ABI's system calls, which this filter does not
	// read: they are killed.
	x32Bit = 0x40000000
)

var forkCalls = []uint32{unix.SYS_FORK, unix.SYS_VFORK}
