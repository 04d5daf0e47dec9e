//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filtersForks: a seccomp filter kills the engine when it starts a process.
const filtersForks = true

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] (little-endian)
)

// forkFilter is the seccomp program: on this architecture's system calls
// (any other ABI is killed), fork and vfork kill the process, clone kills
// it unless it makes a thread (CLONE_THREAD), clone3, whose flags a
// filter cannot read, fails with ENOSYS so that the C library falls back
// to clone, and refusedCalls fail with EPERM. Everything else is allowed.
//
// Hand-assembled rather than built with a library (elastic/go-seccomp-bpf
// and the like): a dozen instructions, one argument test, and built
// before the address-space limit, which a library's allocations would
// have to respect too.
func forkFilter(allowForks bool) []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	prog := []ins{
		{code: ld, k: offArch},
		{code: jeq, k: auditArch, jf: "kill"},
		{code: ld, k: offNr},
	}
	if x32Bit != 0 {
		prog = append(prog, ins{code: jset, k: x32Bit, jt: "kill"})
	}
	for _, c := range refusedCalls {
		prog = append(prog, ins{code: jeq, k: c.nr, jt: "eperm"})
	}
	if allowForks {
		prog = append(prog,
			ins{code: ret, k: unix.SECCOMP_RET_ALLOW},
			ins{code: ret, k: unix.SECCOMP_RET_KILL_PROCESS, label: "kill"},
			ins{code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM), label: "eperm"})
		return assemble(prog)
	}
	for _, nr := range forkCalls {
		prog = append(prog, ins{code: jeq, k: nr, jt: "kill"})
	}
	prog = append(prog,
		ins{code: jeq, k: unix.SYS_CLONE3, jt: "enosys"},
		ins{code: jeq, k: unix.SYS_CLONE, jf: "allow"},
		ins{code: ld, k: offArg0},
		ins{code: jset, k: unix.CLONE_THREAD, jf: "kill"},
		ins{code: ret, k: unix.SECCOMP_RET_ALLOW, label: "allow"},
		ins{code: ret, k: unix.SECCOMP_RET_KILL_PROCESS, label: "kill"},
		ins{code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS), label: "enosys"},
		ins{code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM), label: "eperm"},
	)
	return assemble(prog)
}

// ins is one instruction of a filter, with labels for its jumps ("": the
// next instruction).
type ins struct {
	code   uint16
	k      uint32
	jt, jf string
	label  string
}

// assemble resolves the labels of prog.
func assemble(prog []ins) []unix.SockFilter {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	jump := func(from int, label string) uint8 {
		if label == "" {
			return 0
		}
		return uint8(at[label] - from - 1)
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: jump(i, in.jt), Jf: jump(i, in.jf)}
	}
	return out
}

// refusedCall is a system call the filter fails with EPERM, and why.
type refusedCall struct {
	nr  uint32
	why string
}

// refusedCalls is the one list of what the filter refuses, in engines and
// builds alike; the filter, the probe and docs/security.md follow it.
//
// Sockets of every family (UNIX pathname and abstract, TCP, UDP, netlink,
// socketpair): Landlock does not confine connect() to a pathname UNIX
// socket below its ABI 9, and that is the way to PostgreSQL's local
// socket, a Docker socket or a session bus. No engine and no build needs
// a socket; an engine that does is run --unsandboxed by an operator who
// says so. socketcall exists only on 32-bit ABIs, which the filter kills
// (auditArch, x32Bit). io_uring can open a socket without the socket
// system call (IORING_OP_SOCKET), so it goes too.
var refusedCalls = []refusedCall{
	{unix.SYS_SOCKET, "sockets of any family (a UNIX socket reaches the host's services)"},
	{unix.SYS_SOCKETPAIR, "socket pairs"},
	{unix.SYS_IO_URING_SETUP, "io_uring (it opens sockets and files without their system calls)"},
	{unix.SYS_MEMFD_CREATE, "memory the watchdog would not see as resident (memfd)"},
	{unix.SYS_MEMFD_SECRET, "memory the watchdog would not see as resident (memfd_secret)"},
	{unix.SYS_SHMGET, "System V shared memory (pages that live on without a mapping)"},
	{unix.SYS_UNSHARE, "new namespaces (a way out of the sandbox's view)"},
	{unix.SYS_SETNS, "other namespaces"},
	{unix.SYS_PTRACE, "another process's memory (ptrace)"},
	{unix.SYS_PROCESS_VM_READV, "another process's memory (process_vm_readv)"},
	{unix.SYS_PROCESS_VM_WRITEV, "another process's memory (process_vm_writev)"},
}

// installForkFilter installs forkFilter on every thread of this process
// (the engine inherits it across exec).
func installForkFilter(allowForks bool) error {
	f := forkFilter(allowForks)
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("seccomp: %v", errno)
	}
	return nil
}

// tryFork starts a child process the raw way (clone with SIGCHLD only, as
// fork does) and reports whether it got one; the child exits at once.
func tryFork() bool {
	pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		return false
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(int(pid), &ws, 0, nil)
	return true
}

// tryMemfd reports whether memfd_create works here.
func tryMemfd() bool {
	fd, err := unix.MemfdCreate("arbiter-probe", 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// trySocket reports whether a socket of family can be made here.
func trySocket(family int) bool {
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
