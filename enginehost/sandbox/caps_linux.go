package sandbox

import "golang.org/x/sys/unix"

// Securebits (linux/securebits.h): root gains no capability at exec, and
// none of it can be undone.
const lockedNoRoot = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED (off)
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

// maxCapability bounds the capability numbers dropped from the bounding
// set: past the kernel's last one prctl says EINVAL, which is the end.
const maxCapability = 63

// dropCapabilities leaves this thread, and so the engine it execs, with
// no capability in any set and no way to regain one. The exec stage is
// root of its user namespace (the worker's uid maps to 0 there, so that
// it may mount its tmpfs and /proc) and an exec as root would hand the
// engine every capability of that namespace: mounts, the namespace's
// network, raising its own rlimits. A worker run as root without
// namespaces would hand it the host's.
//
// Without CAP_SETPCAP (a non-root worker without namespaces) there is
// nothing to drop: the securebits and the bounding set cannot be
// changed, and the sets are empty already. The capset at the end is
// checked: it must leave nothing.
func dropCapabilities() error {
	unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, lockedNoRoot, 0)
	for c := 0; c <= maxCapability; c++ {
		if _, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); errno == unix.EINVAL {
			break
		}
	}
	unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return err
	}
	var left [2]unix.CapUserData
	if err := unix.Capget(&hdr, &left[0]); err != nil {
		return err
	}
	if left != none {
		return errCapabilitiesLeft
	}
	return nil
}
