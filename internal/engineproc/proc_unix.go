//go:build unix

package engineproc

import (
	"bytes"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// platformProc is nothing on Unix: the process group is the process's pid.
type platformProc struct{}

func attach(*os.Process) platformProc { return platformProc{} }

// kill ends the process group (the engine and every child it started), and
// the process itself in case it left the group.
func (platformProc) kill(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGKILL)
	p.Kill()
}

func (platformProc) release() {}

// quietPipe makes a pipe that the runtime's network poller does not watch.
// os.Pipe registers both ends with it, and then every write of the engine
// to a registered end is an event that wakes an idle thread of the runner
// sleeping in the poller (whenever a timer is pending, one is): measurably
// more runner CPU per game, for reads that never use the poller anyway.
func quietPipe() (r, w *os.File, err error) {
	var p [2]int
	syscall.ForkLock.RLock() // no fork may inherit the descriptors before close-on-exec is set
	err = syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, err
	}
	// Blocking descriptors: os.NewFile leaves them out of the poller.
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// ownStderrReader: stderr is read by a goroutine of ours (readStderr), not
// by os/exec's, whose pollable pipe would wake the runtime's network poller.
const ownStderrReader = true

// wakeSource reads stdout with plain blocking read(2) on the driver's
// goroutine: one system call per burst of output, as cheap as a read can
// be, and no reader goroutine. A deadline is a timer that, when it fires,
// writes a NUL byte into the same pipe through a write end of our own
// (wake): the blocked read returns, the NUL is dropped (an engine's NULs
// are garbage and dropped too), and the driver sees the time. A wait that
// ends without output is thus a timeout, and nothing is lost: the process
// stays usable. (poll(2) with a timeout would do the same with a second
// system call and a kernel timer per wait: measurably more CPU per game.)
//
// Invariants:
//   - wake holds the pipe open, so the end of output cannot be seen while
//     it does: when the process exits, exited puts /dev/null in its place
//     (dup2, so the descriptor number stays ours and a late wake write is
//     harmless), and the read then ends at the true end of output.
//   - The timer writes under mu; close takes mu before it closes wake, and
//     closes the read end first, so a wake write blocked on a full pipe
//     fails instead of holding mu forever.
//   - armed is the deadline the timer is set for; a new deadline resets it.
type wakeSource struct {
	out   *os.File
	fd    int
	mu    sync.Mutex
	wake  *os.File
	wfd   int
	timer *time.Timer
	armed time.Time
}

func newSource(stdout, wake *os.File) source {
	// Fd makes the descriptors blocking and leaves the runtime's poller
	// out: reads and writes are plain system calls from here on. (The
	// write end is the engine's stdout too: it must stay blocking.)
	return &wakeSource{out: stdout, fd: int(stdout.Fd()), wake: wake, wfd: int(wake.Fd())}
}

func (s *wakeSource) read(p []byte, deadline time.Time) (int, error) {
	if !deadline.IsZero() {
		if !time.Now().Before(deadline) {
			return 0, ErrTimeout
		}
		s.arm(deadline)
	}
	for {
		n, err := syscall.Read(s.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		if bytes.IndexByte(p[:n], 0) >= 0 {
			n = dropNULs(p[:n])
		}
		if n > 0 {
			return n, nil
		}
		// Only a wake-up: has the time come?
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return 0, ErrTimeout
		}
	}
}

// dropNULs removes the NUL bytes of b in place and returns the new length.
func dropNULs(b []byte) int {
	n := 0
	for _, c := range b {
		if c != 0 {
			b[n] = c
			n++
		}
	}
	return n
}

func (s *wakeSource) arm(deadline time.Time) {
	if deadline.Equal(s.armed) {
		return
	}
	s.armed = deadline
	if s.timer == nil {
		s.timer = time.AfterFunc(time.Until(deadline), s.wakeUp)
		return
	}
	s.timer.Reset(time.Until(deadline))
}

// wakeUp runs on the timer's goroutine. A stale wake-up (the read it was
// for is over) costs the next read one empty round.
func (s *wakeSource) wakeUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake != nil {
		syscall.Write(s.wfd, []byte{0})
	}
}

// exited lets the end of output through: see the invariants. It runs
// before close (Stop waits for the exit), so wake is still open; it takes
// no lock, since a wake write may hold mu while blocked on a full pipe.
func (s *wakeSource) exited() {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return
	}
	defer null.Close()
	unix.Dup2(int(null.Fd()), s.wfd)
}

func (s *wakeSource) close() error {
	if s.timer != nil {
		s.timer.Stop()
	}
	err := s.out.Close()
	s.mu.Lock()
	s.wake.Close()
	s.wake = nil
	s.mu.Unlock()
	return err
}

// readStderr copies stderr into the tail with blocking reads on a goroutine
// of its own (its thread sleeps in read(2) and costs nothing while the
// engine is quiet), and closes the pipe at its end.
func readStderr(f *os.File, tail *tailBuffer) <-chan struct{} {
	done := make(chan struct{})
	fd := int(f.Fd())
	go func() {
		defer close(done)
		defer f.Close()
		var buf [4096]byte
		for {
			n, err := syscall.Read(fd, buf[:])
			if n > 0 {
				tail.Write(buf[:n])
			}
			if err == syscall.EINTR {
				continue
			}
			if n <= 0 || err != nil {
				return
			}
		}
	}()
	return done
}
