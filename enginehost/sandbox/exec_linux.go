package sandbox

import (
	"syscall"
	"unsafe"
)

// prepareExec converts execve's arguments to the kernel's form now, so
// that the returned function makes the call without allocating (see
// execStage). It returns only if the exec failed.
func prepareExec(path string, argv, env []string) (func() syscall.Errno, error) {
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return nil, err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return nil, err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return nil, err
	}
	return func() syscall.Errno {
		_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
			uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
		return errno
	}, nil
}
