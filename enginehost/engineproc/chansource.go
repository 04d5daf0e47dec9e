package engineproc

import (
	"io"
	"os"
	"time"
)

// chanSource reads stdout with a goroutine, for systems where a pipe cannot
// be waited on with a deadline (Windows' anonymous pipes). The goroutine
// reads ahead into two buffers in turn: while the driver consumes one, the
// next read is already under way, so output that arrived is there at once.
// A buffer goes back to the goroutine (free) only when the driver has
// consumed it, so no buffer is written while it is read.
type chanSource struct {
	f     *os.File
	bufs  [2][]byte
	free  chan int      // buffers the goroutine may fill
	done  chan chanRead // filled buffers, in order
	have  []byte        // the unconsumed part of bufs[cur]
	cur   int           // -1: the driver holds no buffer
	err   error         // the end of the output, once reached
	timer *time.Timer
}

type chanRead struct {
	buf, n int
	err    error
}

func newChanSource(f *os.File) *chanSource {
	s := &chanSource{f: f, cur: -1, free: make(chan int, 2), done: make(chan chanRead, 2)}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, 16<<10)
		s.free <- i
	}
	go s.loop()
	return s
}

func (s *chanSource) loop() {
	for i := range s.free {
		n, err := s.f.Read(s.bufs[i])
		if err == nil && n == 0 {
			err = io.EOF
		}
		s.done <- chanRead{i, n, err} // room for both buffers: never blocks
		if err != nil {
			return
		}
	}
}

func (s *chanSource) read(p []byte, deadline time.Time) (int, error) {
	if len(s.have) == 0 && s.cur >= 0 {
		s.free <- s.cur
		s.cur = -1
	}
	if len(s.have) == 0 && s.err == nil {
		var r chanRead
		switch d := time.Until(deadline); {
		case deadline.IsZero():
			r = <-s.done
		case d <= 0:
			select {
			case r = <-s.done:
			default:
				return 0, ErrTimeout
			}
		default:
			if s.timer == nil {
				s.timer = time.NewTimer(d)
			} else {
				s.timer.Reset(d)
			}
			select {
			case r = <-s.done:
				s.timer.Stop()
			case <-s.timer.C:
				return 0, ErrTimeout
			}
		}
		s.have, s.cur, s.err = s.bufs[r.buf][:r.n], r.buf, r.err
	}
	n := copy(p, s.have)
	s.have = s.have[n:]
	if n == 0 && s.err != nil {
		return 0, s.err
	}
	return n, nil
}

func (s *chanSource) exited() {}

// quiet changes nothing: the goroutine reads ahead anyway.
func (s *chanSource) quiet(time.Time) {}

// close ends the goroutine: it is waiting for a free buffer, or finishing a
// read whose result goes to done and is dropped.
func (s *chanSource) close() error {
	close(s.free)
	return s.f.Close()
}
