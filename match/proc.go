package match

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is an engine process with line-based pipes.
//
// Invariants:
//   - Reading happens only in the goroutine that drives the player (no reader
//     goroutine, no channel per line): the read end of stdout is a pollable
//     os.Pipe file, so a read deadline wakes the reader without polling.
//   - A line returned by readLine is valid until the next read.
//   - After kill, every read and write fails; the process is reaped by the
//     goroutine started in startProc.
type proc struct {
	cmd    *exec.Cmd
	in     *os.File
	out    *os.File
	rd     *bufio.Reader
	wbuf   []byte
	exited chan struct{}
	dead   bool
	// trace, when set, receives every line in and out (debugging).
	trace io.Writer
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
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
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
	p := &proc{cmd: cmd, in: inW, out: outR, rd: bufio.NewReaderSize(outR, 8192), exited: make(chan struct{}), wbuf: make([]byte, 0, 4096)}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// send writes one command line. It uses one write system call.
func (p *proc) send(line []byte) error {
	if p.dead {
		return ErrCrash
	}
	if p.trace != nil {
		fmt.Fprintf(p.trace, "> %s\n", line)
	}
	p.wbuf = append(p.wbuf[:0], line...)
	p.wbuf = append(p.wbuf, '\n')
	if _, err := p.in.Write(p.wbuf); err != nil {
		return fmt.Errorf("%w: write: %v", ErrCrash, err)
	}
	return nil
}

// send2 writes two command lines with one system call.
func (p *proc) send2(a, b []byte) error {
	if p.dead {
		return ErrCrash
	}
	if p.trace != nil {
		fmt.Fprintf(p.trace, "> %s\n> %s\n", a, b)
	}
	p.wbuf = append(p.wbuf[:0], a...)
	p.wbuf = append(p.wbuf, '\n')
	p.wbuf = append(p.wbuf, b...)
	p.wbuf = append(p.wbuf, '\n')
	if _, err := p.in.Write(p.wbuf); err != nil {
		return fmt.Errorf("%w: write: %v", ErrCrash, err)
	}
	return nil
}

func (p *proc) sendString(s string) error {
	if p.dead {
		return ErrCrash
	}
	p.wbuf = append(p.wbuf[:0], s...)
	return p.send(p.wbuf)
}

// setDeadline bounds the following reads; the zero time removes the bound.
func (p *proc) setDeadline(t time.Time) { p.out.SetReadDeadline(t) }

// readLine returns the next line without its line ending. Errors: ErrCrash
// at end of output, ErrHang when the deadline passes.
func (p *proc) readLine() ([]byte, error) {
	if p.dead {
		return nil, ErrCrash
	}
	line, err := p.rd.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long line (long PVs, garbage): keep the first buffer's worth and
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
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ErrHang
		}
		if len(line) == 0 || err != io.EOF {
			return nil, fmt.Errorf("%w: %v", ErrCrash, err)
		}
	}
	line = bytes.TrimRight(line, "\r\n")
	if p.trace != nil {
		fmt.Fprintf(p.trace, "< %s\n", line)
	}
	return line, nil
}

// waitFor reads lines until one that begins with prefix (as a whole word),
// within timeout; other lines go to each (which may be nil).
func (p *proc) waitFor(prefix string, timeout time.Duration, each func([]byte)) error {
	p.setDeadline(time.Now().Add(timeout))
	defer p.setDeadline(time.Time{})
	for {
		line, err := p.readLine()
		if err != nil {
			return err
		}
		if hasWord(line, prefix) {
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

// kill ends the process group at once.
func (p *proc) kill() {
	if p.dead {
		return
	}
	p.dead = true
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.cmd.Process.Kill()
	}
	p.in.Close()
	<-p.exited
	p.out.Close()
}

// quit asks politely (the protocol's quit command, sent by the caller), waits
// up to grace for the exit, then kills.
func (p *proc) quit(grace time.Duration) {
	if p.dead {
		return
	}
	p.in.Close()
	t := time.NewTimer(grace)
	select {
	case <-p.exited:
		t.Stop()
		p.dead = true
		p.out.Close()
	case <-t.C:
		p.kill()
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

// watchContext kills the process when ctx ends during a blocking read; the
// returned stop function must be called when the read is over.
func (p *proc) watchContext(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() { p.setDeadline(time.Unix(1, 0)) })
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
