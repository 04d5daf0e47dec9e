//go:build unix

package engineproc

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

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

// quietPipe makes a pipe that the runtime's network poller does not watch
// (os.Pipe registers both ends with it). A registered end is woken by every
// write into the pipe, whichever side writes, and each wake-up costs the
// runner a thread switch: stdin's write end (ours) and stderr stay out.
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
}

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

func (s *pollSource) read(p []byte, deadline time.Time) (int, error) {
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
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, ErrTimeout
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (s *pollSource) exited()      {}
func (s *pollSource) close() error { return s.f.Close() }

// fileSource reads with the file's own Read, without deadlines.
type fileSource struct{ f *os.File }

func (s *fileSource) read(p []byte, _ time.Time) (int, error) { return s.f.Read(p) }
func (s *fileSource) exited()                                 {}
func (s *fileSource) close() error                            { return s.f.Close() }

// stdinWriter writes to the engine's stdin (a quietPipe end, made
// non-blocking) with raw system calls, for the reason pollSource reads
// with them. A full pipe (an engine that stopped reading 64 KB ago) is
// waited out with poll(2), an ordinary call, as a blocking write would.
type stdinWriter struct{ fd int }

func newStdinWriter(f *os.File) stdinWriter {
	fd := int(f.Fd()) // a blocking file: Fd changes nothing
	syscall.SetNonblock(fd, true)
	return stdinWriter{fd}
}

func (w stdinWriter) write(b []byte) error {
	for len(b) > 0 {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(w.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			b = b[r:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(fds, 100); err != nil && err != unix.EINTR {
				return err
			}
		default:
			return e
		}
	}
	return nil
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
