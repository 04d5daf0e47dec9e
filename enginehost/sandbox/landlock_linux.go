package sandbox

import (
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// systemDirs are what a program needs to load and run: its loader,
// shared libraries, time zones and locales, and the system's programs (a
// script's interpreter; the engine may exec one in its place, never start
// one beside it). Not /etc (tokens and keys are often kept there), not
// /home, not /tmp, not the worker's data.
var systemDirs = []string{"/usr/bin", "/bin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/local/lib", "/lib", "/lib32", "/lib64", "/libx32",
	"/usr/share/zoneinfo", "/usr/share/locale", "/usr/lib/locale", "/sys/devices/system/cpu"}

// systemFiles are single files a program may read: the loader's cache,
// the time zone, and what the kernel says of the CPUs and memory.
var systemFiles = []string{"/etc/ld.so.cache", "/etc/localtime", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
	"/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/memory.max"}

// buildDirs are what a build reads besides systemDirs: headers and the
// compiler's own programs.
var buildDirs = []string{"/usr/include", "/usr/local/include", "/usr/libexec", "/usr/local/bin", "/usr/share/misc", "/etc/alternatives"}

// devices an engine may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"}

// confinement is a Landlock ruleset made before the limits (it
// allocates) and enforced in lockDown (it does not).
type confinement struct {
	fd    int // -1: no Landlock here
	flags uint32
}

// landlockConfig restricts everything this library knows; on an older
// kernel, what that kernel knows (best effort): files, TCP bind and
// connect (ABI 4), signals and abstract sockets to outside the sandbox
// (ABI 6), UDP and pathname sockets (ABI 9, 10).
var landlockConfig = landlock.V11.BestEffort()

// prepareConfinement builds the engine's ruleset: read and execute its
// program and what s.ReadOnly names, read the system's libraries, read
// and write its directory and a few devices, its own /proc entry;
// nothing else on the file system, no TCP (or UDP) at all, no signal or
// abstract socket out of the sandbox.
func prepareConfinement(s Spec) (confinement, error) {
	rules := []landlock.Rule{
		landlock.RODirs(systemDirs...).IgnoreIfMissing(),
		landlock.ROFiles(systemFiles...).IgnoreIfMissing(),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
		landlock.RWDirs(s.Dir),
		// Its own entry (the exec keeps the pid): /proc/self resolves here.
		landlock.RODirs("/proc/self").IgnoreIfMissing(),
	}
	if s.Build {
		rules = append(rules, landlock.RODirs(buildDirs...).IgnoreIfMissing())
	}
	for _, p := range append([]string{s.Path}, s.ReadOnly...) {
		st, err := os.Stat(p)
		if err != nil {
			return confinement{fd: -1}, err
		}
		if st.IsDir() {
			rules = append(rules, landlock.RODirs(p))
		} else {
			rules = append(rules, landlock.ROFiles(p))
		}
	}
	fd, flags, err := landlockConfig.NewRulesetFD(rules...)
	if err != nil {
		return confinement{fd: -1}, err
	}
	return confinement{fd: fd, flags: flags}, nil
}

// restrict enforces the ruleset on this thread, which the exec turns
// into the engine (no_new_privs is set already).
func (c confinement) restrict() error {
	if c.fd < 0 {
		return nil
	}
	err := llsys.LandlockRestrictSelf(c.fd, c.flags)
	unix.Close(c.fd)
	return err
}

// landlockABI is the kernel's Landlock ABI version (0: none).
func landlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
