package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
)

// arm64 has no fork or vfork system call: clone is the only way.
var forkCalls []uint32
