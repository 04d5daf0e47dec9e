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

// readResult turns a raw read in the poller (the bytes read, the read's
// errno, the poller's error) into what source.read returns.
func readResult(n int, errno syscall.Errno, err error) (int, error) {
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

// fileSource reads with the file's own Read, without deadlines.
type fileSource struct{ f *os.File }

func (s *fileSource) read(p []byte, _ time.Time) (int, error) { return s.f.Read(p) }
func (s *fileSource) exited()                                 {}
func (s *fileSource) close() error                            { return s.f.Close() }
func (s *fileSource) quiet(time.Time)                         {}

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
