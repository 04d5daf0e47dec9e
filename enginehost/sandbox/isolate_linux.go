package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolatedAttr starts the exec stage in new user, PID, mount, network,
// IPC and UTS namespaces, tied to the supervisor's life. The worker's
// uid and gid map to 0 inside: a process keeps its capabilities across
// exec only as root of its namespace, and the exec stage needs them to
// mount its tmpfs and /proc (mapped onto itself, a non-root worker's uid
// lost them at the exec and every start failed). lockDown drops them all
// before the engine runs. The kernel refuses the namespaces where
// unprivileged user namespaces are off; the supervisor then starts the
// stage without.
func isolatedAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL,
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
}

// maxInodes bounds the files of an engine's tmpfs (each costs memory).
const maxInodes = 4096

// isolate runs in the exec stage, pid 1 of its namespaces: it keeps its
// mounts to itself, puts a tmpfs of the disk limit on the engine's
// directory (gone with the namespace when the engine ends), and mounts a
// /proc that shows only the engine's own PID namespace. The engine runs
// as the worker's user (uid 0 of the namespace) without capabilities
// (lockDown drops them), so it can undo none of it.
func isolate(s Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %v", err)
	}
	if !s.Build { // a build's tree must stay
		opts := "size=" + strconv.FormatInt(s.Limits.Disk, 10) + ",nr_inodes=" + strconv.Itoa(maxInodes) + ",mode=0700"
		if err := unix.Mount("arbiter-engine", s.Dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("tmpfs on %s: %v", s.Dir, err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		// A container may forbid a new /proc; Landlock still keeps the
		// engine out of other processes' entries.
		fmt.Fprintf(os.Stderr, errorMarker+"own /proc not mounted (%v); Landlock hides the others\n", err)
	}
	return nil
}
