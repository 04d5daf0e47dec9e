//go:build unix && !linux

package engineproc

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// pollSource reads stdout, a pipe in the runtime's network poller. A wait
// for output parks the driver's goroutine in the poller; the read itself is
// a raw system call (it never blocks: the descriptor is non-blocking).
//
// Why not a plain blocking read(2): a goroutine that sits in system calls
// keeps its P, so the runtime's monitor thread (sysmon) keeps polling it
// every 20µs-10ms and hands its P to another thread once it has run for
// 10ms without a reschedule; measured, that was most of the runner's CPU.
// Why raw: an ordinary system call wakes sysmon from its deep sleep (the
// state it is in while every goroutine waits), and it then polls again.
// A parked goroutine and raw calls leave it asleep.
//
// A deadline is the file's read deadline, set only when it changes (once
// per search, not per line). A read that times out consumes nothing.
type pollSource struct {
	f     *os.File
	rc    syscall.RawConn
	armed time.Time // the read deadline set on f
	until time.Time // a quiet period asked for, not slept yet
}

// stdoutPipe: the read end goes into the runtime's poller (pollSource).
var stdoutPipe = os.Pipe

func newSource(stdout, stdoutW *os.File) source {
	stdoutW.Close()
	rc, err := stdout.SyscallConn()
	if err != nil {
		// Not pollable after all (cannot happen with os.Pipe): a plain
		// file still reads, without deadlines.
		return &fileSource{stdout}
	}
	return &pollSource{f: stdout, rc: rc}
}

// quiet: a plain sleep here (the pipe stays in the poller, which wakes on
// every write meanwhile); epollSource (Linux) does better.
func (s *pollSource) quiet(until time.Time) { s.until = until }

func (s *pollSource) read(p []byte, deadline time.Time) (int, error) {
	if !s.until.IsZero() {
		d := time.Until(s.until)
		if !deadline.IsZero() {
			d = min(d, time.Until(deadline))
		}
		time.Sleep(d)
		s.until = time.Time{}
	}
	if !deadline.Equal(s.armed) {
		if err := s.f.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		s.armed = deadline
	}
	var (
		n     int
		errno syscall.Errno
	)
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(r), e
			return e != syscall.EAGAIN // false: wait in the poller, then call again
		}
	})
	return readResult(n, errno, err)
}

func (s *pollSource) exited()      {}
func (s *pollSource) close() error { return s.f.Close() }
