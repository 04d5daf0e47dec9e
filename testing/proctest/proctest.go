// Package proctest runs a real program for a test and reads what it says:
// its stderr is kept (shown when the test fails) and offered line by line
// to WaitLine and WaitFor; the test's cleanup ends it with SIGTERM, then
// SIGKILL after 30 s. The end-to-end tests that start the arbiter binary
// (coordinators, workers) use it.
package proctest

import (
	"bufio"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"os/exec"
)

// Process is a started program.
type Process struct {
	Cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	lines  chan string
	exited chan struct{}
}

// Start starts cmd (not started yet, its Stderr unset) and ends it when
// the test ends; label names it in the test's log.
func Start(t testing.TB, cmd *exec.Cmd, label string) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, lines: make(chan string, 1024), exited: make(chan struct{})}
	r, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s stderr (last 4000 bytes):\n%s", label, Tail(p.Log(), 4000))
		}
	})
	return p
}

// Log is what the program wrote to stderr so far.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Exited is closed once the program has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// WaitLine waits up to a minute for a stderr line with prefix and returns
// the rest of it; lines read before the call are not seen again.
func (p *Process) WaitLine(t testing.TB, prefix string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest
			}
		case <-p.exited:
			t.Fatalf("process exited (%v) before printing %q:\n%s", p.Cmd.ProcessState, prefix, p.Log())
		case <-timeout:
			t.Fatalf("no %q within a minute:\n%s", prefix, p.Log())
		}
	}
}

// WaitFor waits until the whole stderr so far matches re and returns the
// first match's submatches.
func (p *Process) WaitFor(t testing.TB, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := re.FindStringSubmatch(p.Log()); m != nil {
			return m
		}
		select {
		case <-p.exited:
			t.Fatalf("process exited while waiting for %q:\n%s", re, Tail(p.Log(), 4000))
		default:
		}
	}
	t.Fatalf("no %q within %v:\n%s", re, within, Tail(p.Log(), 4000))
	return nil
}

// Kill ends the program with SIGKILL and waits for it.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
