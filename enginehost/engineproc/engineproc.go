// Package engineproc starts and talks to engine processes (UCI, xboard,
// perftree scripts): the one place where Arbiter spawns a program it does
// not own. It starts a process with its arguments, working directory and
// environment, writes lines to its stdin, reads its stdout line by line with
// a deadline, keeps the tail of its stderr for error messages, stops it
// politely and then kills its whole process group, and reports how it
// exited.
//
// Invariants:
//   - One goroutine owns a Proc (the "driver"): it alone calls Write,
//     ReadLine, CloseInput and Stop. Kill, Watch's callback and Alive are
//     safe from any goroutine.
//   - On Unix the driver's goroutine waits for output in the runtime's
//     network poller (parked, no thread held in a system call) and reads
//     and writes with raw system calls: no reader goroutine, no channel
//     hop, and nothing that wakes the runtime's monitor thread per line
//     (epollSource on Linux, pollSource on other Unix systems,
//     stdinWriter). Windows reads with a goroutine (chanSource).
//   - A read that times out returns ErrTimeout and consumes nothing, so a
//     partly written line is completed by the next read and the process
//     stays usable. Past its deadline ReadLine reads nothing, even output
//     that is waiting: an engine flooding its output still times out.
//   - A line returned by ReadLine is valid until the next ReadLine.
//   - The process runs in its own process group (Unix) or job object
//     (Windows) so that a kill takes its children with it.
package engineproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of ReadLine and Write. Both are final only for ErrEOF; after
// ErrTimeout the process is untouched and may be read again.
var (
	// ErrTimeout: no complete line arrived before the deadline.
	ErrTimeout = errors.New("no output line before the deadline")
	// ErrEOF: the process closed its output (it exited, was killed, or
	// closed stdout); lines read before it are all that will come.
	ErrEOF = errors.New("the engine closed its output")
	// ErrStopped: the Proc was stopped with Stop.
	ErrStopped = errors.New("the engine process was stopped")
)

// Config says how to start a process.
type Config struct {
	// Path is the program: a path (relative paths are relative to Dir) or a
	// name looked up in PATH.
	Path string
	Args []string
	// Dir is the working directory ("" = the current one).
	Dir string
	// Env is the environment; nil inherits this process's.
	Env []string
	// StderrTail is how many bytes of the end of stderr to keep for error
	// messages (default 4096; negative: discard stderr).
	StderrTail int
	// Trace, when set, receives every line written ("> ") and read ("< "),
	// for debugging an engine's conversation.
	Trace io.Writer
	// StderrCopy, when set, also receives everything the process writes
	// to stderr as it comes, from another goroutine: a caller that reads
	// all of a program's output (a bench) and bounds it.
	StderrCopy io.Writer

	// goroutineReader selects the reader Windows uses, so that its tests
	// run everywhere.
	goroutineReader bool
}

// maxLine bounds one line of output; the rest of a longer line is dropped
// (a garbage-spewing engine must not grow memory).
const maxLine = 64 << 10

// Proc is a running engine process.
type Proc struct {
	cmd   *exec.Cmd
	in    *os.File // our end of the process's stdin
	inw   stdinWriter
	lines lineReader
	tail  *tailBuffer
	trace io.Writer
	plat  platformProc

	exited     chan struct{}   // closed when the process has been reaped
	stderrDone <-chan struct{} // closed when our stderr reader is done (nil: none)
	exitErr    error           // cmd.Wait's result, valid after exited is closed
	killed     atomic.Bool     // we sent the kill
	stopped    bool            // Stop ran (driver only)
	inClosed   bool            // driver only

	watchMu sync.Mutex
	watched context.Context
	unwatch func() bool
}

// Start starts the process of cfg. The error names the program when it does
// not exist, is not executable, or cannot be started.
func Start(cfg Config) (*Proc, error) {
	if _, err := LookPath(cfg.Path, cfg.Dir); err != nil {
		return nil, err
	}
	var files []*os.File // every pipe end, closed on a failed start
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func(mk func() (r, w *os.File, err error)) (r, w *os.File, err error) {
		if r, w, err = mk(); err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	// Our end of stdin stays out of the runtime's poller (quietPipe): a
	// registered write end would be woken by every line we write.
	inR, inW, err := pipe(quietPipe)
	if err != nil {
		return nil, fmt.Errorf("engine command %q: %w", cfg.Path, err)
	}
	// stdout is waited on in the poller (Unix: directly, or on Linux
	// through an epoll instance of its own); the write end is the engine's
	// alone once it runs (newSource closes ours), since a write end in the
	// poller would be woken by every line the engine writes.
	outR, outW, err := pipe(stdoutPipe)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("engine command %q: %w", cfg.Path, err)
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Dir = cfg.Dir
	cmd.Env = cfg.Env
	cmd.Stdin = inR
	cmd.Stdout = outW
	p := &Proc{cmd: cmd, in: inW, inw: newStdinWriter(inW), trace: cfg.Trace, exited: make(chan struct{})}
	switch {
	case cfg.StderrTail < 0 && cfg.StderrCopy == nil:
		// nil: /dev/null. Unread stderr must never block an engine.
	case cfg.StderrTail <= 0:
		p.tail = &tailBuffer{max: 4096, copy: cfg.StderrCopy}
	default:
		p.tail = &tailBuffer{max: cfg.StderrTail, copy: cfg.StderrCopy}
	}
	// On Unix a goroutine of ours reads stderr with blocking reads. os/exec
	// would copy it through a pollable pipe, which wakes the runtime's
	// network poller: every idle thread then polls it, and that costs the
	// runner CPU on every line.
	var errR, errW *os.File
	switch {
	case p.tail == nil:
	case ownStderrReader && !cfg.goroutineReader:
		if errR, errW, err = pipe(quietPipe); err != nil {
			closeAll()
			return nil, fmt.Errorf("engine command %q: %w", cfg.Path, err)
		}
		cmd.Stderr = errW
	default:
		cmd.Stderr = p.tail
		// The copy ends when every holder of the pipe is gone; a child
		// that escaped the kill must not hold Wait forever.
		cmd.WaitDelay = time.Second
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("engine command %q: %w", cfg.Path, err)
	}
	inR.Close()
	if errW != nil {
		errW.Close()
		p.stderrDone = readStderr(errR, p.tail)
	}
	p.plat = attach(cmd.Process)
	var src source
	if cfg.goroutineReader {
		outW.Close()
		src = newChanSource(outR)
	} else {
		src = newSource(outR, outW) // closes outW: the engine's alone now
	}
	p.lines = lineReader{src: src, buf: make([]byte, 16<<10)}
	go func() {
		p.exitErr = cmd.Wait()
		src.exited()
		close(p.exited)
	}()
	return p, nil
}

// LookPath resolves the program Start would run for path and dir, or says
// why there is none (missing, not executable): callers check engines this
// way before they accept them.
func LookPath(path, dir string) (string, error) {
	if path == "" {
		return "", errors.New("engine command is empty")
	}
	look := path
	hasDir := strings.ContainsRune(path, '/') || strings.ContainsRune(path, filepath.Separator)
	if dir != "" && hasDir && !filepath.IsAbs(path) {
		// os/exec runs a relative path from Dir. Join cleans "./sf" in
		// "." to "sf", which LookPath would search $PATH for.
		look = filepath.Join(dir, path)
		if !strings.ContainsRune(look, filepath.Separator) {
			look = "." + string(filepath.Separator) + look
		}
	}
	resolved, err := exec.LookPath(look)
	if err != nil {
		return "", fmt.Errorf("engine command %q: %w", path, err)
	}
	return resolved, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Write writes b, which holds complete lines, with one system call.
func (p *Proc) Write(b []byte) error {
	if p.stopped || p.inClosed {
		return ErrStopped
	}
	if p.trace != nil {
		fmt.Fprintf(p.trace, "> %s", b)
	}
	if err := p.inw.write(b); err != nil {
		return fmt.Errorf("write to the engine: %w", err)
	}
	return nil
}

// WriteLine writes s and a newline (one system call).
func (p *Proc) WriteLine(s string) error {
	b := make([]byte, 0, len(s)+1)
	return p.Write(append(append(b, s...), '\n'))
}

// ReadLine returns the next line of output without its line ending. It waits
// until deadline at most (the zero time: no limit) and then returns
// ErrTimeout, consuming nothing. At the end of the output it returns ErrEOF.
// The line is valid until the next call.
func (p *Proc) ReadLine(deadline time.Time) ([]byte, error) {
	if p.stopped {
		return nil, ErrStopped
	}
	line, err := p.lines.readLine(deadline)
	if err != nil {
		return nil, err
	}
	if p.trace != nil {
		fmt.Fprintf(p.trace, "< %s\n", line)
	}
	return line, nil
}

// QuietUntil asks that the next wait for output start no sooner than t:
// lines the engine writes meanwhile wait in the pipe and are read together
// then, with one wake-up instead of one each. Only for output whose timing
// nothing depends on; the engine's exit or the read's deadline end the
// quiet period early.
func (p *Proc) QuietUntil(t time.Time) { p.lines.src.quiet(t) }

// CloseInput closes the process's stdin (it reads EOF); for programs that
// take their input from arguments.
func (p *Proc) CloseInput() {
	if !p.inClosed {
		p.inClosed = true
		p.in.Close()
	}
}

// Alive reports whether the process has not exited (and was not stopped).
func (p *Proc) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return !p.killed.Load()
	}
}

// Kill kills the process and its process group at once; safe from any
// goroutine. The driver's pending read then ends with ErrEOF (or its
// deadline), and the driver calls Stop to reap the process.
func (p *Proc) Kill() {
	select {
	case <-p.exited:
		// Reaped: its pid (and group id) may belong to someone else now.
		return
	default:
	}
	p.killed.Store(true)
	p.plat.kill(p.cmd.Process)
}

// Watch kills the process when ctx ends, so that a cancelled caller never
// waits for an engine. One registration serves every call with the same
// context (registering per move would cost more than the move's I/O); a new
// context replaces the old one.
func (p *Proc) Watch(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	p.watchMu.Lock()
	defer p.watchMu.Unlock()
	if ctx == p.watched {
		return
	}
	if p.unwatch != nil {
		p.unwatch()
	}
	p.watched = ctx
	p.unwatch = context.AfterFunc(ctx, p.Kill)
}

// Unwatch ends the current Watch: a process kept for later (an idle engine
// in a pool) must outlive the request that used it.
func (p *Proc) Unwatch() {
	p.watchMu.Lock()
	defer p.watchMu.Unlock()
	if p.unwatch != nil {
		p.unwatch()
	}
	p.watched, p.unwatch = nil, nil
}

// Stop ends the process: it writes quit (if not empty and the process is
// alive), closes stdin, waits up to grace for the process to exit, then kills
// its process group, and releases everything. It reports how the process
// exited. Stop is idempotent; after it, reads and writes fail with
// ErrStopped.
func (p *Proc) Stop(quit string, grace time.Duration) Exit {
	if p.stopped {
		return p.exit()
	}
	p.Unwatch()
	if quit != "" && p.Alive() && !p.inClosed {
		p.WriteLine(quit)
	}
	p.CloseInput()
	exited := p.WaitExit(0)
	if !exited && grace > 0 {
		t := time.NewTimer(grace)
		select {
		case <-p.exited:
			exited = true
		case <-t.C:
		}
		t.Stop()
	}
	if !exited {
		p.Kill()
	}
	<-p.exited
	p.plat.release()
	p.lines.src.close()
	p.stopped = true
	return p.exit()
}

// WaitExit waits up to d for the process to exit on its own (after ErrEOF,
// to tell a crash's exit status) and reports whether it did.
func (p *Proc) WaitExit(d time.Duration) bool { return waitClosed(p.exited, d) }

// waitClosed waits up to d for ch to be closed and reports whether it was.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
		if d <= 0 {
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// Exit is how a process ended.
type Exit struct {
	// Exited is false while the process runs.
	Exited bool
	// Code is the exit status, -1 when a signal ended the process.
	Code int
	// State is the system's description: "exit status 3", "signal: killed".
	State string
	// Killed: this package killed it (Kill, a context, or Stop's grace ran out).
	Killed bool
}

func (e Exit) String() string {
	switch {
	case !e.Exited:
		return "still running"
	case e.Killed:
		return "killed by arbiter"
	case e.Code >= 0:
		return fmt.Sprintf("exited with status %d", e.Code)
	case e.State != "":
		return "ended by " + e.State // "signal: segmentation fault"
	}
	return "ended"
}

// Exit reports how the process ended so far (Exited false while it runs).
func (p *Proc) Exit() Exit {
	select {
	case <-p.exited:
		return p.exit()
	default:
		return Exit{Killed: p.killed.Load()}
	}
}

func (p *Proc) exit() Exit {
	e := Exit{Exited: true, Code: -1, Killed: p.killed.Load()}
	if ps := p.cmd.ProcessState; ps != nil {
		e.Code = ps.ExitCode()
		e.State = ps.String()
	} else if p.exitErr != nil {
		e.State = p.exitErr.Error()
	}
	return e
}

// Stderr is the end of what the process wrote to stderr, trimmed. Once the
// process has exited it waits a moment for the last of it.
func (p *Proc) Stderr() string {
	if p.stderrDone != nil && p.WaitExit(0) {
		waitClosed(p.stderrDone, 100*time.Millisecond)
	}
	return p.tail.String()
}

// WaitStderr waits up to d for the end of stderr once the process has
// exited (a caller that reads all of it through StderrCopy); it reports
// whether stderr ended. A child that escaped the kill and holds stderr
// open keeps it from ending.
func (p *Proc) WaitStderr(d time.Duration) bool {
	if !p.WaitExit(d) {
		return false
	}
	if p.stderrDone == nil {
		return true // os/exec's copy ends before the exit is reported
	}
	return waitClosed(p.stderrDone, d)
}

// Describe says why the output ended, for an error message: the exit (after
// waiting up to a moment for it) and the end of stderr.
func (p *Proc) Describe() string {
	p.WaitExit(100 * time.Millisecond)
	s := p.Exit().String()
	if st := p.Stderr(); st != "" {
		s += " (stderr: " + st + ")"
	}
	return s
}

// tailBuffer keeps the last max bytes written (an engine's stderr), and
// hands every write to copy when set.
type tailBuffer struct {
	mu   sync.Mutex
	buf  []byte
	max  int
	copy io.Writer
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	if t.copy != nil {
		t.copy.Write(b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(b) >= t.max {
		t.buf = append(t.buf[:0], b[len(b)-t.max:]...)
		return len(b), nil
	}
	if len(t.buf)+len(b) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)+len(b)-t.max:]...)
	}
	t.buf = append(t.buf, b...)
	return len(b), nil
}

func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
