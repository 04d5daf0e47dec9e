package engineproc

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stdoutPipe: on Linux the read end stays out of the runtime's poller;
// epollSource watches it through an epoll instance of its own.
var stdoutPipe = quietPipe

// epollSource reads stdout through a private epoll instance that holds the
// pipe and a timerfd, and that is itself waited on in the runtime's network
// poller. It reads and waits as pollSource does (see there: a parked
// goroutine, raw system calls), and adds one thing the runtime's poller
// cannot do: take the pipe out of the wait for a while.
//
// Why: every write(2) of the engine wakes whoever waits on the pipe, and
// each wake-up costs the runner a thread switch and a pass through the
// runtime's scheduler (Stockfish writes about 11 lines a move at
// nodes=5000). A search whose timing nothing depends on (see
// match's pace) asks for a quiet period: the pipe's events are switched
// off, the timer is set to its end, and the lines written meanwhile wait
// in the pipe until one read takes them all. A pipe in the runtime's own
// poller would still wake its poller thread on every write, and a Go timer
// wakes the poller to re-arm it; the private instance avoids both.
//
// Each system call counts: the runner wakes on a CPU that an engine has
// just used, so every call runs with cold caches (several microseconds
// each, measured). Hence the pipe is armed again only when a read must
// wait, the end of a quiet period is told by the clock, and the engine's
// death by the goroutine that reaps it (exited): a quiet period never asks
// ep which event woke it.
//
// Invariants:
//   - The pipe is in ep with EPOLLIN|EPOLLET when armed, with no events
//     otherwise. It is switched off when a quiet period begins and
//     armed before the next wait for its output.
//   - A wait parks only after a read, made after the poller forgot its
//     readiness, found the armed pipe empty: output after that makes ep
//     readable, which the poller records, so none is missed.
//   - A deadline is ep's read deadline, set only when it changes.
//   - dead is set before exited fires the timer, and a quiet period's wait
//     checks dead after the poller forgot its readiness: an exit before
//     that check is seen by it, and one after it fires the timer into the
//     wait. Either way the exit ends the quiet period at once.
type epollSource struct {
	out   *os.File // our end of stdout (it owns pipe)
	pipe  int      // out's descriptor, non-blocking
	timer int      // timerfd: the end of a quiet period
	epfd  int      // ep's descriptor (ep.Fd would make ep blocking)
	ep    *os.File // in the runtime's poller
	rc    syscall.RawConn
	armed bool
	until time.Time // the quiet period asked for, not begun yet
	dl    time.Time // ep's read deadline
	dead  atomic.Bool

	// The callbacks rc.Read calls and what they share, made once: a
	// closure per call would be an allocation per search.
	readFn, sleepFn func(uintptr) bool
	p               []byte
	n               int
	errno           syscall.Errno
}

func newSource(stdout, stdoutW *os.File) source {
	stdoutW.Close()
	if s, err := newEpollSource(stdout); err == nil {
		return s
	}
	// No epoll or timerfd (a sandbox may refuse them): a blocking read
	// without deadlines still reads.
	syscall.SetNonblock(int(stdout.Fd()), false)
	return &fileSource{stdout}
}

func newEpollSource(stdout *os.File) (*epollSource, error) {
	pipe := int(stdout.Fd())
	if err := syscall.SetNonblock(pipe, true); err != nil {
		return nil, err
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	timer, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	s := &epollSource{out: stdout, pipe: pipe, timer: timer, epfd: epfd, armed: true}
	fail := func(err error) (*epollSource, error) {
		unix.Close(timer)
		if s.ep != nil {
			s.ep.Close()
		} else {
			unix.Close(epfd)
		}
		return nil, err
	}
	for _, fd := range []int{pipe, timer} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(fd)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return fail(err)
		}
	}
	// Non-blocking, so os.NewFile puts it in the runtime's poller.
	if err := syscall.SetNonblock(epfd, true); err != nil {
		return fail(err)
	}
	s.ep = os.NewFile(uintptr(epfd), "epoll")
	// A file the poller refused takes no deadline: then it is no use.
	if err := s.ep.SetReadDeadline(time.Time{}); err != nil {
		return fail(err)
	}
	if s.rc, err = s.ep.SyscallConn(); err != nil {
		return fail(err)
	}
	s.readFn, s.sleepFn = s.readReady, s.quietOver
	return s, nil
}

func (s *epollSource) quiet(until time.Time) { s.until = until }

func (s *epollSource) read(p []byte, deadline time.Time) (int, error) {
	if !deadline.Equal(s.dl) {
		if err := s.ep.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		s.dl = deadline
	}
	if !s.until.IsZero() {
		err := s.sleep()
		s.until = time.Time{}
		if err != nil {
			return 0, err
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return 0, ErrTimeout // the deadline ended the quiet period
		}
		// What the engine wrote meanwhile is read with the pipe still
		// off: a search that ended within the period never arms it.
		if n, errno := s.readPipe(p); errno != syscall.EAGAIN {
			return readResult(n, errno, nil)
		}
	}
	if err := s.arm(true); err != nil {
		return 0, err
	}
	// The poller forgets readiness when a wait begins, so the read inside
	// comes first: it sees output that came before.
	s.p = p
	err := s.rc.Read(s.readFn)
	s.p = nil
	return readResult(s.n, s.errno, err)
}

// readReady is rc.Read's callback in read: false asks it to wait in the
// poller and call again.
func (s *epollSource) readReady(uintptr) bool {
	s.n, s.errno = s.readPipe(s.p)
	return s.errno != syscall.EAGAIN
}

// readPipe reads once from the pipe, retrying EINTR.
func (s *epollSource) readPipe(p []byte) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(s.pipe), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}

// sleep waits, with the pipe switched off, until the quiet period ends,
// the engine exits, or the read deadline passes.
func (s *epollSource) sleep() error {
	d := time.Until(s.until)
	if d <= 0 {
		return nil
	}
	if err := s.arm(false); err != nil {
		return err
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(s.timer, 0, &spec, nil); err != nil {
		return err
	}
	err := s.rc.Read(s.sleepFn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil // the read that follows reports the timeout
	}
	return err
}

// quietOver is rc.Read's callback in sleep: over when the engine died or
// the clock has passed the period's end (the timer's event may stay in ep:
// harmless). Anything else that wakes the wait (the pipe's hang-up, which
// the reaper's timer follows) waits again.
func (s *epollSource) quietOver(uintptr) bool {
	return s.dead.Load() || !time.Now().Before(s.until)
}

// arm switches the pipe's events on or off.
func (s *epollSource) arm(on bool) error {
	if s.armed == on {
		return nil
	}
	ev := unix.EpollEvent{Fd: int32(s.pipe)}
	if on {
		ev.Events = unix.EPOLLIN | unix.EPOLLET
	}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, s.pipe, &ev); err != nil {
		return err
	}
	s.armed = on
	return nil
}

// exited ends a quiet period that has begun or is about to: the timer,
// fired now, wakes a wait in progress, and dead stops one about to begin.
// Stop closes the source only after this returns, so the timer is ours.
func (s *epollSource) exited() {
	s.dead.Store(true)
	now := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
	unix.TimerfdSettime(s.timer, 0, &now, nil)
}

func (s *epollSource) close() error {
	err := s.ep.Close()
	unix.Close(s.timer)
	s.out.Close()
	return err
}
