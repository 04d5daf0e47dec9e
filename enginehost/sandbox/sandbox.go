// Package sandbox runs an engine that came from someone else (an artifact
// uploaded to the coordinator) under limits: its own working directory, a
// clean environment, caps on memory, CPU time, open files, file size and
// processes and threads, no core dumps, no child processes, no
// capabilities and no sockets. An engine that passes a limit is
// killed, and the kill is said in a line of its stderr that the worker
// reads back (Verdict), so the game records it as an incident.
//
// How: the engine is started through the worker's own binary, re-executed
// in two stages, so that nothing in the match runner or the process layer
// has to know (the runner starts a program with arguments, as ever):
//
//	arbiter __arbiter-sandbox  LIMITS -- ENGINE ARGS   the supervisor
//	arbiter __arbiter-sandbox-exec LIMITS -- ENGINE ARGS   the exec stage
//
// The supervisor starts the exec stage as its child with the same stdin,
// stdout and stderr (descriptors passed on, no copying), watches the
// child's resident memory (Linux: /proc), waits for it, and then reports
// on stderr which limit, if any, ended it: memory (the watchdog's kill, or
// a peak resident size past the limit: the address-space backstop made an
// allocation fail), CPU time (SIGXCPU, or the hard limit's SIGKILL), or a
// child process (SIGSYS). It exits as the engine did. The exec stage sets
// the rlimits, changes to the working directory, forbids new privileges,
// drops every capability, installs the seccomp filter that kills the
// process on fork, vfork or a clone that is not a thread and refuses
// sockets (Linux amd64 and arm64; refusedCalls), and execs the engine
// with the clean environment: from there on the engine is the process,
// with nothing of ours left in it.
//
// Invariants (Linux amd64 and arm64; the probe checks them at the
// worker's start, the tests in sandbox_sockets_test.go for a worker as
// root and as nobody):
//   - no engine or build makes a socket of any family (EPERM);
//   - no engine or build holds a capability, though it is uid 0 of its
//     user namespace (the worker's uid maps there, so that the exec stage
//     may mount; a uid mapped onto itself lost the capabilities it needed
//     and every run of a non-root worker failed);
//   - a run's processes and threads are bounded by Limits.Threads where
//     the kernel gives a way: RLIMIT_NPROC (not root) or a pids cgroup
//     (root); the probe says which, or "no thread cap".
//
// Both stages are the binary that runs the worker: cmd/arbiter's main and
// the TestMain of packages whose tests sandbox engines call RunIfWrapper
// first thing.
//
// Per platform: Linux has every limit (other architectures than amd64 and
// arm64: no seccomp filter, so no fork filter and sockets allowed); macOS
// has the rlimits (CPU time,
// open files, file size, no core dumps; it does not enforce the address
// space) and the peak-memory verdict after the fact, but no watchdog and
// no fork filter; Windows has no sandbox (Supported is false): its worker
// runs uploaded engines only when the operator says so.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Arguments that select a stage of the wrapper (argv[1]).
const (
	superviseArg = "__arbiter-sandbox"
	execArg      = "__arbiter-sandbox-exec"
	probeArg     = "__arbiter-sandbox-probe"
)

// NamespacesEnv set to "off" in the worker's environment keeps engines in
// the worker's namespaces (Linux): for tests of what holds without user
// namespaces, and for hosts where they misbehave.
const NamespacesEnv = "ARBITER_SANDBOX_NAMESPACES"

// cgroupPrefix names the runs' pids cgroups (Linux); the supervisor's pid
// follows.
const cgroupPrefix = "arbiter-sandbox-"

// Marker starts the supervisor's line about a kill by the limits.
const Marker = "arbiter-sandbox: killed by its limits: "

// errorMarker starts the wrapper's line about its own failure.
const errorMarker = "arbiter-sandbox: "

// Limits are what an engine process may use. Zero values take the
// defaults of DefaultLimits.
type Limits struct {
	// Memory is the resident memory above which the engine is killed
	// (bytes). The address space is capped at twice this plus 1 GiB, as a
	// backstop for growth faster than the watchdog looks.
	Memory int64
	// CPU is the CPU time the process may use in all (its whole life).
	CPU time.Duration
	// OpenFiles caps its file descriptors.
	OpenFiles int
	// FileSize caps any file it writes (bytes).
	FileSize int64
	// Disk caps what it writes in its working directory in all (bytes): a
	// tmpfs of that size in its own mount namespace where user namespaces
	// work, else the supervisor kills it past the limit.
	Disk int64
	// Threads caps the processes and threads of one run, the engine's
	// main thread included (a build's make, shells and compilers too):
	// RLIMIT_NPROC in its own user namespace, or a pids cgroup of its own
	// (a root worker, or no user namespace). Past it, thread creation
	// fails (EAGAIN) and the engine decides what to do.
	Threads int
}

// DefaultLimits are a worker's limits unless its operator sets others.
var DefaultLimits = Limits{Memory: 2 << 30, CPU: time.Hour, OpenFiles: 64, FileSize: 1 << 30, Disk: 256 << 20, Threads: 256}

func (l Limits) withDefaults() Limits {
	if l.Memory <= 0 {
		l.Memory = DefaultLimits.Memory
	}
	if l.CPU <= 0 {
		l.CPU = DefaultLimits.CPU
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = DefaultLimits.OpenFiles
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultLimits.FileSize
	}
	if l.Disk <= 0 {
		l.Disk = DefaultLimits.Disk
	}
	if l.Threads <= 0 {
		l.Threads = DefaultLimits.Threads
	}
	return l
}

// addressSpace is the backstop cap of the address space for a memory
// limit.
func addressSpace(memory int64) int64 { return 2*memory + 1<<30 }

// String renders the limits for people.
func (l Limits) String() string {
	l = l.withDefaults()
	sockets := ""
	if filtersForks { // the seccomp filter refuses them
		sockets = ", no sockets"
	}
	return fmt.Sprintf("memory %s, CPU time %v, %d open files, files up to %s, %s in its directory, %d threads, no core dumps, no child processes%s",
		mib(l.Memory), l.CPU.Round(time.Second), l.OpenFiles, mib(l.FileSize), mib(l.Disk), l.Threads, sockets)
}

func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }

// Spec is one sandboxed engine process.
type Spec struct {
	Limits Limits
	// Dir is the engine's working directory (it must exist).
	Dir string
	// Env is the engine's whole environment.
	Env []string
	// Path is the engine program (absolute); Args its arguments.
	Path string
	Args []string
	// ReadOnly are the files and trees the engine may read besides the
	// system's libraries and its working directory (its program, a built
	// source tree). Where Landlock works nothing else can be opened: not
	// the worker's token, its data directory, or /proc of other processes.
	ReadOnly []string
	// Build runs a build (a source tree's build command) rather than an
	// engine: it may start processes (make, the compiler), its directory
	// is the tree (no tmpfs: what it makes stays; the disk watchdog holds
	// the limit), and it may read the system's headers. The memory
	// watchdog sees the first process only; each process has the
	// address-space and CPU limits.
	Build bool
	// isolated: the supervisor started the exec stage in new user, PID,
	// mount, network and IPC namespaces (Linux).
	isolated bool
	// tasks is the exec stage's RLIMIT_NPROC (0: none), cgroup the pids
	// cgroup it joins ("": none); the supervisor decides both.
	tasks  uint64
	cgroup string
}

// CleanEnv is the environment of a sandboxed engine working in dir: a
// fixed PATH, HOME and TMPDIR in its own directory, the C locale, and
// nothing of the worker's (no credential can leak through it).
func CleanEnv(dir string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir, "LANG=C", "LC_ALL=C"}
}

// Command is the program and arguments that run s through wrapper (the
// worker's own binary): what the match runner starts instead of the
// engine.
func Command(wrapper string, s Spec) (path string, args []string) {
	return wrapper, append([]string{superviseArg}, s.encode()...)
}

// encode renders s as the wrapper's arguments: key=value words, "--", the
// engine and its arguments.
func (s Spec) encode() []string {
	l := s.Limits.withDefaults()
	out := []string{
		"mem=" + strconv.FormatInt(l.Memory, 10),
		"cpu=" + strconv.FormatInt(int64(l.CPU/time.Millisecond), 10),
		"nofile=" + strconv.Itoa(l.OpenFiles),
		"fsize=" + strconv.FormatInt(l.FileSize, 10),
		"disk=" + strconv.FormatInt(l.Disk, 10),
		"threads=" + strconv.Itoa(l.Threads),
		"dir=" + s.Dir,
	}
	for _, r := range s.ReadOnly {
		out = append(out, "ro="+r)
	}
	if s.Build {
		out = append(out, "build=1")
	}
	for _, e := range s.Env {
		out = append(out, "env="+e)
	}
	out = append(out, "--", s.Path)
	return append(out, s.Args...)
}

// decode reads encode's words.
func decode(words []string) (Spec, error) {
	var s Spec
	for i, w := range words {
		if w == "--" {
			if i+1 >= len(words) {
				return s, errors.New("no engine after --")
			}
			s.Path, s.Args = words[i+1], words[i+2:]
			return s, s.check()
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return s, fmt.Errorf("argument %q is not key=value", w)
		}
		var err error
		switch k {
		case "mem":
			s.Limits.Memory, err = strconv.ParseInt(v, 10, 64)
		case "cpu":
			var ms int64
			ms, err = strconv.ParseInt(v, 10, 64)
			s.Limits.CPU = time.Duration(ms) * time.Millisecond
		case "nofile":
			s.Limits.OpenFiles, err = strconv.Atoi(v)
		case "fsize":
			s.Limits.FileSize, err = strconv.ParseInt(v, 10, 64)
		case "disk":
			s.Limits.Disk, err = strconv.ParseInt(v, 10, 64)
		case "threads":
			s.Limits.Threads, err = strconv.Atoi(v)
		case "ro":
			s.ReadOnly = append(s.ReadOnly, v)
		case "ns":
			s.isolated = v == "1"
		case "tasks":
			s.tasks, err = strconv.ParseUint(v, 10, 64)
		case "cgroup":
			s.cgroup = v
		case "build":
			s.Build = v == "1"
		case "dir":
			s.Dir = v
		case "env":
			s.Env = append(s.Env, v)
		default:
			return s, fmt.Errorf("unknown argument %q", k)
		}
		if err != nil {
			return s, fmt.Errorf("%s: %v", k, err)
		}
	}
	return s, errors.New("no -- before the engine")
}

func (s Spec) check() error {
	l := s.Limits
	switch {
	case l.Memory <= 0 || l.CPU <= 0 || l.OpenFiles <= 0 || l.FileSize <= 0 || l.Disk <= 0 || l.Threads <= 0:
		return errors.New("every limit must be positive")
	case s.Dir == "" || s.Path == "":
		return errors.New("the working directory and the engine are required")
	}
	return nil
}

// RunIfWrapper runs the wrapper and exits when this process was started
// as one of its stages (argv[1]); otherwise it returns at once. Call it
// first thing in main, and in TestMain of packages whose tests sandbox
// engines.
func RunIfWrapper() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case superviseArg:
		os.Exit(supervise(os.Args[2:]))
	case execArg:
		os.Exit(execStage(os.Args[2:]))
	case probeArg:
		os.Exit(probeChild())
	}
}

// wrapperError reports the wrapper's own failure on stderr and returns the
// exit status for it.
func wrapperError(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, errorMarker+format+"\n", args...)
	return 126
}

// Verdict finds the supervisor's kill line in text (an engine's stderr, or
// an incident's detail that quotes it) and returns what it says ("memory:
// ...", "CPU time: ...", "child process: ..."); ok is false when the
// limits killed nothing.
func Verdict(text string) (string, bool) {
	i := strings.Index(text, Marker)
	if i < 0 {
		return "", false
	}
	s := text[i+len(Marker):]
	if j := strings.IndexAny(s, "\n)"); j >= 0 {
		s = s[:j]
	}
	return strings.TrimSpace(s), true
}

// probingEnv marks the processes the probe starts (see Probe).
const probingEnv = "ARBITER_SANDBOX_PROBING"

// probeTimeout bounds the probe.
const probeTimeout = 30 * time.Second

// Probe runs the whole chain once through wrapper with a child that
// prints a line and then tries to start a process: it reports what the
// sandbox enforces here ("limits, memory watchdog, fork filter"), or why
// engines cannot be sandboxed on this machine.
//
// Where the namespaces are there but do not work (a container that lets
// a user namespace be made but not a tmpfs or /proc be mounted in it),
// the probe tries again without them and, if that works, sets
// NamespacesEnv to "off" in this process, so that its engines run
// without; the features say so.
func Probe(wrapper string) (string, error) {
	if !Supported() {
		return "", errors.New("no sandbox on this platform")
	}
	if os.Getenv(probingEnv) != "" {
		// A wrapper that is not one runs its own main in the probe's
		// place; if that main probes too (a test binary without
		// RunIfWrapper in TestMain, whose tests start workers), each
		// level would start the next: 208 spinning processes once.
		return "", fmt.Errorf("this process was started by the sandbox's probe, which %s answers with its own main: call sandbox.RunIfWrapper first in main (or TestMain)", wrapper)
	}
	features, err := probe(wrapper)
	if err == nil || runtime.GOOS != "linux" || os.Getenv(NamespacesEnv) == "off" {
		return features, err
	}
	os.Setenv(NamespacesEnv, "off")
	features, err2 := probe(wrapper)
	if err2 != nil {
		os.Unsetenv(NamespacesEnv)
		return "", err
	}
	return features + fmt.Sprintf(" (without namespaces: %v)", err), nil
}

func probe(wrapper string) (string, error) {
	dir, err := os.MkdirTemp("", "arbiter-sandbox-probe-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	run := filepath.Join(dir, "run")
	secret := filepath.Join(dir, "outside")
	if err := os.Mkdir(run, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		return "", err
	}
	// The probe's engine is this Go binary: its runtime reserves more
	// address space at start than a small limit's backstop allows (it
	// fails to start at 1.5 GiB now and then), so the default limits.
	path, args := Command(wrapper, Spec{Limits: Limits{Memory: DefaultLimits.Memory, CPU: 10 * time.Second}, Dir: run, Env: CleanEnv(run),
		Path: wrapper, Args: []string{probeArg, secret}})
	// A wrapper that is not one (a binary whose main does not call
	// RunIfWrapper) must not hold up the worker's start.
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	cmd.Env = append(os.Environ(), probingEnv+"=1")
	cmd.SysProcAttr = childAttr() // it dies with this process (Linux)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if !strings.Contains(text, "arbiter-sandbox probe ok") {
		return "", fmt.Errorf("the wrapper %s does not run (%v): %s", wrapper, err, clip(text))
	}
	features := []string{"rlimits", "clean environment", "own working directory"}
	if watchesMemory {
		features = append(features, "memory watchdog")
	}
	isolated := strings.Contains(text, "probe: pid 1\n")
	if isolated {
		features = append(features, "namespaces (user, PID, mount, network, IPC), tmpfs disk quota")
	} else if watchesMemory {
		features = append(features, "disk watchdog")
	}
	if abi := landlockABI(); abi > 0 {
		if !strings.Contains(text, "probe: outside refused") {
			return "", fmt.Errorf("Landlock (ABI %d) did not keep the engine from a file outside its directory: %s", abi, clip(text))
		}
		features = append(features, fmt.Sprintf("Landlock ABI %d (files, network)", abi))
	}
	if filtersForks {
		if !strings.Contains(text, "probe: memfd refused") {
			return "", fmt.Errorf("the seccomp filter did not refuse memfd_create: %s", clip(text))
		}
		verdict, ok := Verdict(text)
		if !ok || !strings.HasPrefix(verdict, "child process") {
			return "", fmt.Errorf("the fork filter did not stop a child process: %s", clip(text))
		}
		if !strings.Contains(text, "probe: socket refused") {
			return "", fmt.Errorf("the seccomp filter did not refuse a socket: %s", clip(text))
		}
		features = append(features, "fork filter", "no memfd or System V shared memory", "no sockets")
	}
	features = append(features, threadCap(text, isolated))
	return strings.Join(features, ", "), nil
}

// threadCap says what bounds a run's processes and threads, from what the
// probe's engine saw.
func threadCap(text string, isolated bool) string {
	limit := DefaultLimits.Threads
	m := regexp.MustCompile(`probe: nproc (\d+)\n`).FindStringSubmatch(text)
	switch {
	case strings.Contains(text, "probe: own pids cgroup"):
		return fmt.Sprintf("%d threads (pids cgroup)", limit)
	case !rlimitBoundsTasks() || m == nil:
	case isolated && m[1] == strconv.Itoa(limit):
		return fmt.Sprintf("%d threads (RLIMIT_NPROC in its user namespace)", limit)
	case !isolated && len(m[1]) < 10:
		return fmt.Sprintf("%d threads beyond the worker user's own (RLIMIT_NPROC %s)", limit, m[1])
	}
	return NoThreadCap
}

// NoThreadCap is the probe's feature where nothing bounds a run's
// processes and threads: a worker as root whose cgroup file system is
// read-only (a container), on Linux; macOS.
const NoThreadCap = "no thread cap"

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
