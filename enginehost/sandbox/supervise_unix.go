//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supported reports whether engines can be sandboxed on this platform.
func Supported() bool { return true }

// supervise is the first stage: it runs the exec stage as its child,
// watches it, and says which limit ended it.
func supervise(words []string) int {
	s, err := decode(words)
	if err != nil {
		return wrapperError("bad arguments: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return wrapperError("cannot find its own binary: %v", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	cmd, isolated, cg, err := startExecStage(self, words, s.Limits)
	if cg != nil {
		defer cg.remove()
	}
	if err != nil {
		return wrapperError("cannot start the engine: %v", err)
	}
	go func() {
		for sig := range sigs {
			cmd.Process.Signal(sig)
		}
	}()
	diskDir := s.Dir
	if isolated && !s.Build {
		diskDir = "" // its tmpfs holds the limit
	}
	w := watch(cmd.Process, s.Limits.Memory, diskDir, s.Limits.Disk)
	cmd.Wait()
	killedAt, diskAt := w.stop()
	st := cmd.ProcessState
	if st == nil {
		return wrapperError("the engine was not reaped")
	}
	if why := judge(s.Limits.withDefaults(), st, killedAt, diskAt); why != "" {
		fmt.Fprintln(os.Stderr, Marker+why)
	}
	return exitCode(st)
}

// startExecStage starts the exec stage as this process's child with the
// same stdin, stdout and stderr (descriptors passed on, no copying: the
// engine talks to the runner on these very descriptors). Namespaces
// first (Linux, where user namespaces work): the engine is pid 1 of its
// own PID namespace, with its own /proc, mounts (a tmpfs of the disk
// limit on its directory), no network and no System V IPC. Where the
// kernel refuses them, the engine runs in ours.
//
// Its processes and threads are bounded by RLIMIT_NPROC (taskLimit), or,
// for a root worker, whom the kernel exempts from it, by a pids cgroup of
// its own where one can be made (cg; the caller removes it): the exec
// stage joins it before the engine runs.
func startExecStage(self string, words []string, l Limits) (cmd *exec.Cmd, isolated bool, cg *pidsCgroup, err error) {
	start := func(attr *syscall.SysProcAttr, extra ...string) error {
		cmd = exec.Command(self, append(append([]string{execArg}, extra...), words...)...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.SysProcAttr = attr
		return cmd.Start()
	}
	var bound []string
	if !rlimitBoundsTasks() {
		if cg, err = newPidsCgroup(l.Threads); err == nil {
			bound = []string{"cgroup=" + cg.dir}
		}
	}
	tasks := func(isolated bool) []string {
		if n := taskLimit(l, isolated); n > 0 {
			return append(bound, "tasks="+strconv.FormatUint(n, 10))
		}
		return bound
	}
	if attr := isolatedAttr(); attr != nil && os.Getenv(NamespacesEnv) != "off" {
		if err := start(attr, append(tasks(true), "ns=1")...); err == nil {
			return cmd, true, cg, nil
		}
	}
	return cmd, false, cg, start(childAttr(), tasks(false)...)
}

// judge says which limit ended the engine ("" when none did). killedAt is
// the resident size at which the watchdog killed it, diskAt what its
// directory held when the disk watchdog did (0: it did not).
func judge(l Limits, st *os.ProcessState, killedAt, diskAt int64) string {
	cpu := st.UserTime() + st.SystemTime()
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case killedAt > 0:
		return fmt.Sprintf("memory: %s resident, over the limit of %s", mib(killedAt), mib(l.Memory))
	case diskAt > 0:
		return fmt.Sprintf("disk: %s written in its directory, over the limit of %s", mib(diskAt), mib(l.Disk))
	case ws.Signaled() && ws.Signal() == syscall.SIGSYS:
		return "child process: the engine tried to start a process, which is not allowed"
	case ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL && cpu >= l.CPU):
		return fmt.Sprintf("CPU time: %v used, the limit is %v", cpu.Round(10*time.Millisecond), l.CPU)
	case ws.Signaled() && ws.Signal() == syscall.SIGXFSZ:
		return fmt.Sprintf("file size: a file it wrote passed the limit of %s", mib(l.FileSize))
	}
	if peak := peakRSS(st); peak > l.Memory && !st.Success() {
		// The address-space cap made an allocation fail before the
		// watchdog saw the growth; the peak says why the engine died.
		return fmt.Sprintf("memory: %s resident at its peak, over the limit of %s (an allocation failed at the address-space cap)",
			mib(peak), mib(l.Memory))
	}
	return ""
}

// exitCode is the status that passes the engine's end on: its exit
// status, or 128 + the signal that ended it (as a shell reports it).
func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// peakRSS is the child's peak resident size in bytes (Linux reports KiB,
// macOS bytes).
func peakRSS(st *os.ProcessState) int64 {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

// execStage is the second stage: working directory, lock-down, limits,
// then the engine in place of this process.
//
// The address-space limit is below what the Go runtime has already
// mapped, so from the moment it is set this process must not grow its
// heap: everything the exec needs is built before it (execve's arguments,
// the fork filter), and between the limits and the exec only system calls
// run. Setting the limits first made about one start in forty die of
// "fatal error: runtime: out of memory" when building the filter.
func execStage(words []string) int {
	s, err := decode(words)
	if err != nil {
		return wrapperError("bad arguments: %v", err)
	}
	// The lock-down and the exec must happen on one thread (no_new_privs
	// is a thread's attribute until exec).
	runtime.LockOSThread()
	if s.cgroup != "" {
		// Before anything of the engine's runs; its children and threads
		// are born in it.
		if err := joinCgroup(s.cgroup); err != nil {
			return wrapperError("pids cgroup: %v", err)
		}
	}
	if s.isolated {
		if err := isolate(s); err != nil {
			return wrapperError("namespaces: %v", err)
		}
	}
	if err := os.Chdir(s.Dir); err != nil {
		return wrapperError("working directory: %v", err)
	}
	execve, err := prepareExec(s.Path, append([]string{s.Path}, s.Args...), s.Env)
	if err != nil {
		return wrapperError("cannot run the engine %s: %v", s.Path, err)
	}
	confinement, err := prepareConfinement(s)
	if err != nil {
		return wrapperError("landlock: %v", err)
	}
	limits := rlimitsOf(s.Limits, s.tasks)
	if err := lockDown(confinement, s.Build); err != nil {
		return wrapperError("lock-down: %v", err)
	}
	if res, errno := setLimits(&limits); errno != 0 {
		return wrapperError("limits: %s: %v", limits[res].name, errno)
	}
	errno := execve()
	return wrapperError("cannot run the engine %s: %v", s.Path, errno)
}

// rlimit is one resource limit as setLimits applies it.
type rlimit struct {
	name       string
	res        int
	soft, hard uint64
	optional   bool // not enforced everywhere (macOS refuses a finite address space)
	skip       bool // not set in this run
}

// rlimitsOf is the engine's rlimits, built before any is set. tasks is
// its RLIMIT_NPROC (taskLimit; 0: not set, a pids cgroup bounds it if one
// could be made).
func rlimitsOf(l Limits, tasks uint64) [6]rlimit {
	cpu := uint64((l.CPU + time.Second - 1) / time.Second)
	nproc := rlimit{"processes and threads", unix.RLIMIT_NPROC, tasks, tasks, false, tasks == 0}
	return [6]rlimit{
		{"address space", syscall.RLIMIT_AS, uint64(addressSpace(l.Memory)), uint64(addressSpace(l.Memory)), runtime.GOOS != "linux", false},
		// SIGXCPU at the soft limit, SIGKILL two seconds later.
		{"CPU time", syscall.RLIMIT_CPU, cpu, cpu + 2, false, false},
		{"open files", syscall.RLIMIT_NOFILE, uint64(l.OpenFiles), uint64(l.OpenFiles), false, false},
		{"file size", syscall.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize), false, false},
		{"core dumps", syscall.RLIMIT_CORE, 0, 0, false, false},
		nproc, // last: the exec stage's runtime keeps its threads until the exec
	}
}

// setLimits sets the rlimits of this process, which the engine inherits
// across exec; a hard limit below ours stays (it cannot be raised). It
// allocates nothing: on failure it returns the index of the limit and the
// error number, for the caller to report.
func setLimits(limits *[6]rlimit) (int, syscall.Errno) {
	for i := range limits {
		r := &limits[i]
		if r.skip {
			continue
		}
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(r.res, &cur); err != nil {
			return i, errnoOf(err)
		}
		lim := syscall.Rlimit{Cur: min(r.soft, cur.Max), Max: min(r.hard, cur.Max)}
		// syscall.Setrlimit (not x/sys): it also stops the runtime from
		// restoring its original open-files limit across exec.
		if err := syscall.Setrlimit(r.res, &lim); err != nil && !r.optional {
			return i, errnoOf(err)
		}
	}
	return 0, 0
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EINVAL
}

// probeChild is the probe's engine: it says it runs, then tries to start
// a process, which the fork filter must stop.
func probeChild() int {
	fmt.Println("arbiter-sandbox probe ok")
	fmt.Printf("arbiter-sandbox probe: pid %d\n", os.Getpid())
	if len(os.Args) > 2 {
		if _, err := os.ReadFile(os.Args[2]); err != nil {
			fmt.Println("arbiter-sandbox probe: outside refused")
		}
	}
	if trySocket(unix.AF_UNIX) {
		fmt.Println("arbiter-sandbox probe: socket allowed")
	} else {
		fmt.Println("arbiter-sandbox probe: socket refused")
	}
	var nproc syscall.Rlimit
	if syscall.Getrlimit(unix.RLIMIT_NPROC, &nproc) == nil {
		fmt.Printf("arbiter-sandbox probe: nproc %d\n", nproc.Cur)
	}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil && strings.Contains(string(b), cgroupPrefix) {
		fmt.Println("arbiter-sandbox probe: own pids cgroup")
	}
	if tryMemfd() {
		fmt.Println("arbiter-sandbox probe: memfd allowed")
	} else {
		fmt.Println("arbiter-sandbox probe: memfd refused")
	}
	os.Stdout.Sync()
	if filtersForks {
		if tryFork() {
			fmt.Println("arbiter-sandbox probe: a child process was started")
		}
	}
	return 0
}
