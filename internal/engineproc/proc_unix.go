//go:build unix

package engineproc

import (
	"io"
	"os"
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

// pollSource reads stdout with poll(2) and read(2) on a blocking descriptor,
// both on the driver's goroutine: a wait for output is one blocking system
// call, as a plain blocking read would be, with a deadline, and without the
// scheduler round trip of the runtime's network poller.
type pollSource struct {
	f   *os.File
	fd  int
	pfd [1]unix.PollFd // kept here so that a wait allocates nothing
}

func newSource(f *os.File) source {
	// Fd switches the descriptor to blocking mode and out of the runtime
	// poller's hands: reads are plain system calls from here on.
	fd := int(f.Fd())
	s := &pollSource{f: f, fd: fd}
	s.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	return s
}

func (s *pollSource) read(p []byte, deadline time.Time) (int, error) {
	if !deadline.IsZero() {
		if err := s.wait(deadline); err != nil {
			return 0, err
		}
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
		return n, nil
	}
}

// wait returns when the output is readable (or at its end, or in error:
// the read tells which), or ErrTimeout at the deadline.
func (s *pollSource) wait(deadline time.Time) error {
	for {
		ms := 0
		if d := time.Until(deadline); d > 0 {
			// Round up: never give up before the deadline.
			ms = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		s.pfd[0].Revents = 0
		n, err := unix.Poll(s.pfd[:], ms)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n > 0:
			return nil
		case ms == 0:
			return ErrTimeout
		}
	}
}

func (s *pollSource) close() error { return s.f.Close() }
