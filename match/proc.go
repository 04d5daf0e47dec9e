package match

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// proc is an engine process with line-based pipes.
//
// Invariants:
//   - The engine's stdout is a blocking pipe read only by the goroutine that
//     drives the player: a read is one system call that returns whatever the
//     engine wrote, with no poller round trip and no reader goroutine.
//   - Time limits are timers, not read deadlines: when one fires it writes
//     the stop command (if any) and, after the grace, kills the process
//     group; the blocked read then ends at EOF and readLine's caller asks
//     expired() whether that was a timeout. disarm() makes a pending timer
//     a no-op (generation counter), so a late timer never touches the next
//     search.
//   - Writes are serialized by mu (the timer goroutine may write "stop").
//   - A line returned by readLine is valid until the next read.
type proc struct {
	cmd    *exec.Cmd
	in     *os.File
	out    *os.File
	rd     *bufio.Reader
	exited chan struct{}
	dead   bool // set by the driving goroutine after kill or quit

	mu      sync.Mutex
	wbuf    []byte
	gen     uint64 // incremented by every arm and disarm
	timer   *time.Timer
	stage   int // 0 armed, 1 stop sent, 2 killed (under mu, for gen)
	expired atomic.Bool
	// trace, when set, receives every line in and out (debugging).
	trace io.Writer

	watched context.Context // the context watchContext registered for
	unwatch func() bool
}

// maxLine bounds one line from an engine; longer lines are cut (garbage-proof).
const maxLine = 64 << 10

func startProc(path string, args []string, dir string) (*proc, error) {
	if _, err := exec.LookPath(path); err != nil {
		return nil, fmt.Errorf("engine command %q: %w", path, err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// stdout: a blocking pipe (see the invariants), made with pipe2 directly
	// because os.Pipe registers non-blocking ends with the poller.
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	outR, outW := os.NewFile(uintptr(fds[0]), "engine-stdout"), os.NewFile(uintptr(fds[1]), "engine-stdout-w")
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = nil // /dev/null: unread stderr must never block an engine
	// Own process group so that a hung engine is killed with its children;
	// Pdeathsig so that engines die with the runner.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("engine command %q: %w", path, err)
	}
	inR.Close()
	outW.Close()
	p := &proc{cmd: cmd, in: inW, out: outR, rd: bufio.NewReaderSize(outR, 16<<10), exited: make(chan struct{}), wbuf: make([]byte, 0, 4096)}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// write sends b (complete lines) with one system call.
func (p *proc) write(b []byte) error {
	if p.trace != nil {
		fmt.Fprintf(p.trace, "> %s", b)
	}
	if _, err := p.in.Write(b); err != nil {
		return fmt.Errorf("%w: write: %v", ErrCrash, err)
	}
	return nil
}

// send writes one command line.
func (p *proc) send(line []byte) error {
	if p.dead {
		return ErrCrash
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wbuf = append(append(p.wbuf[:0], line...), '\n')
	return p.write(p.wbuf)
}

// send2 writes two command lines with one system call.
func (p *proc) send2(a, b []byte) error {
	if p.dead {
		return ErrCrash
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wbuf = append(append(p.wbuf[:0], a...), '\n')
	p.wbuf = append(append(p.wbuf, b...), '\n')
	return p.write(p.wbuf)
}

func (p *proc) sendString(s string) error {
	if p.dead {
		return ErrCrash
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wbuf = append(append(p.wbuf[:0], s...), '\n')
	return p.write(p.wbuf)
}

// arm starts a time limit: after d, stopCmd is sent (if not empty) and
// after a further grace the process is killed; with an empty stopCmd the
// kill comes after d.
func (p *proc) arm(d time.Duration, stopCmd string, grace time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	gen := p.gen
	p.stage = 0
	p.expired.Store(false)
	var fire func()
	fire = func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.gen != gen {
			return
		}
		p.expired.Store(true)
		if p.stage == 0 && stopCmd != "" {
			p.stage = 1
			p.write([]byte(stopCmd + "\n"))
			p.timer = time.AfterFunc(grace, fire)
			return
		}
		p.stage = 2
		p.signalKill()
	}
	p.timer = time.AfterFunc(d, fire)
}

// disarm cancels the current time limit; it reports whether the limit had
// expired (the stop command was sent or the process killed).
func (p *proc) disarm() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	return p.expired.Load()
}

// signalKill kills the process group; safe from any goroutine. The driving
// goroutine's read then ends and it cleans up with kill.
func (p *proc) signalKill() {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.cmd.Process.Kill()
	}
}

// readLine returns the next line without its line ending; ErrCrash at the
// end of the output (the process died, or a timer killed it: see expired).
func (p *proc) readLine() ([]byte, error) {
	if p.dead {
		return nil, ErrCrash
	}
	line, err := p.rd.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long line (long PVs, garbage): keep the first maxLine bytes and
		// skip the rest. The copy is rare, so its allocation does not matter.
		head := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull && len(head) < maxLine {
			line, err = p.rd.ReadSlice('\n')
			head = append(head, line...)
		}
		for err == bufio.ErrBufferFull {
			_, err = p.rd.ReadSlice('\n')
		}
		line = head
	}
	if err != nil && (len(line) == 0 || err != io.EOF) {
		if p.expired.Load() {
			return nil, ErrHang
		}
		return nil, fmt.Errorf("%w: %v", ErrCrash, err)
	}
	line = bytes.TrimRight(line, "\r\n")
	if p.trace != nil {
		fmt.Fprintf(p.trace, "< %s\n", line)
	}
	return line, nil
}

// waitFor reads lines until one that begins with word, within timeout (the
// process is killed when it passes: ErrHang); other lines go to each.
func (p *proc) waitFor(word string, timeout time.Duration, each func([]byte)) error {
	p.arm(timeout, "", 0)
	defer p.disarm()
	for {
		line, err := p.readLine()
		if err != nil {
			return err
		}
		if hasWord(line, word) {
			return nil
		}
		if each != nil {
			each(line)
		}
	}
}

// hasWord reports whether line (after leading blanks) starts with word followed by a blank or end of line.
func hasWord(line []byte, word string) bool {
	line = bytes.TrimLeft(line, " \t")
	if len(line) < len(word) || string(line[:len(word)]) != word {
		return false
	}
	return len(line) == len(word) || line[len(word)] == ' ' || line[len(word)] == '\t'
}

// kill ends the process group at once and releases the pipes; called by
// the driving goroutine only.
func (p *proc) kill() {
	if p.dead {
		return
	}
	p.disarm()
	if p.unwatch != nil {
		p.unwatch()
	}
	p.dead = true
	p.signalKill()
	p.in.Close()
	<-p.exited
	p.out.Close()
}

// quit closes the engine's input (the caller has sent the protocol's quit),
// waits up to grace for the exit, then kills.
func (p *proc) quit(grace time.Duration) {
	if p.dead {
		return
	}
	p.disarm()
	if p.unwatch != nil {
		p.unwatch()
	}
	p.in.Close()
	t := time.NewTimer(grace)
	select {
	case <-p.exited:
		t.Stop()
		p.dead = true
		p.out.Close()
	case <-t.C:
		p.dead = false
		p.signalKill()
		<-p.exited
		p.dead = true
		p.out.Close()
	}
}

// alive reports whether the process has not exited.
func (p *proc) alive() bool {
	if p.dead {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// watchContext kills the process when ctx ends (a stopped match does not
// wait for engines). One registration serves every search with the same
// context: registering per move would cost more than the move's I/O.
func (p *proc) watchContext(ctx context.Context) {
	if ctx.Done() == nil || ctx == p.watched {
		return
	}
	if p.unwatch != nil {
		p.unwatch()
	}
	p.watched = ctx
	p.unwatch = context.AfterFunc(ctx, p.signalKill)
}

// Small allocation-free parsers for protocol tokens.

// nextField returns the first blank-separated field of s and the rest.
func nextField(s []byte) (field, rest []byte) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	return s[i:j], s[j:]
}

// atoi parses a decimal integer; ok is false for anything else.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
