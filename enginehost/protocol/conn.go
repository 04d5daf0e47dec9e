package protocol

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// Errors of a conversation. Callers sort on them with errors.Is (the
// match runner's game loop decides a game's end by them); the messages
// are the match runner's.
var (
	// ErrCrash: the process exited, closed its output, or could not be
	// written to.
	ErrCrash = errors.New("engine crashed")
	// ErrHang: no answer within the time allowed (and, in a search, the
	// grace after the stop command).
	ErrHang = errors.New("engine did not reply in time")
	// ErrStartup: no uciok, feature done=1 or readyok in time.
	ErrStartup = errors.New("engine failed to start")
)

// Conn is an engine process as the protocols drive it: engineproc's
// process with the protocols' line conventions and errors.
//
// Invariants:
//   - Only the goroutine that drives the engine calls Conn's methods (a
//     context watch kills from elsewhere through engineproc, which
//     allows it).
//   - A search has a deadline: when it passes, the stop command (if any)
//     is sent and the engine gets the grace to answer; an engine that
//     still says nothing is killed (ErrHang). There are no timers: the
//     deadline is the read's.
//   - wbuf is reused for every command written, so a move costs no
//     allocation for its I/O.
//   - A paced search (see pace) starts with a quiet period; a search
//     under a clock is never paced.
type Conn struct {
	p    *engineproc.Proc
	wbuf []byte

	// The current search (BeginSearch).
	deadline time.Time
	stopCmd  string
	grace    time.Duration
	stopSent bool
	paced    bool

	pace pace
}

// Start starts the process of cfg.
func Start(cfg engineproc.Config) (*Conn, error) {
	p, err := engineproc.Start(cfg)
	if err != nil {
		return nil, err
	}
	return NewConn(p), nil
}

// NewConn drives a process started with engineproc.
func NewConn(p *engineproc.Proc) *Conn {
	return &Conn{p: p, wbuf: make([]byte, 0, 4096)}
}

// Proc is the process (its stderr, its exit).
func (c *Conn) Proc() *engineproc.Proc { return c.p }

func (c *Conn) write(b []byte) error {
	if err := c.p.Write(b); err != nil {
		return fmt.Errorf("%w: %v", ErrCrash, err)
	}
	return nil
}

// Send writes one command line.
func (c *Conn) Send(line []byte) error {
	c.wbuf = append(append(c.wbuf[:0], line...), '\n')
	return c.write(c.wbuf)
}

// Send2 writes two command lines with one system call.
func (c *Conn) Send2(a, b []byte) error {
	c.wbuf = append(append(c.wbuf[:0], a...), '\n')
	c.wbuf = append(append(c.wbuf, b...), '\n')
	return c.write(c.wbuf)
}

// SendString writes s (one or more lines) and a newline.
func (c *Conn) SendString(s string) error {
	c.wbuf = append(append(c.wbuf[:0], s...), '\n')
	return c.write(c.wbuf)
}

// readErr turns the end of a read into ErrHang or ErrCrash.
func (c *Conn) readErr(err error) error {
	switch {
	case errors.Is(err, engineproc.ErrTimeout):
		return ErrHang
	case errors.Is(err, engineproc.ErrEOF):
		return fmt.Errorf("%w: %s", ErrCrash, c.p.Describe())
	}
	return fmt.Errorf("%w: %v", ErrCrash, err)
}

// ReadLine returns the next line, waiting until deadline at most (the
// zero time: no limit): ErrHang after it, ErrCrash at the end of the
// output. The line is valid until the next read.
func (c *Conn) ReadLine(deadline time.Time) ([]byte, error) {
	line, err := c.p.ReadLine(deadline)
	if err != nil {
		return nil, c.readErr(err)
	}
	return line, nil
}

// WaitFor reads lines until one that begins with word, within timeout
// (ErrHang after it); other lines go to each.
func (c *Conn) WaitFor(word string, timeout time.Duration, each func([]byte)) error {
	return c.WaitForUntil(word, time.Now().Add(timeout), each)
}

// WaitForUntil is WaitFor with a deadline.
func (c *Conn) WaitForUntil(word string, deadline time.Time, each func([]byte)) error {
	for {
		line, err := c.ReadLine(deadline)
		if err != nil {
			return err
		}
		if HasWord(line, word) {
			return nil
		}
		if each != nil {
			each(line)
		}
	}
}

// BeginSearch starts the clock of a search: its answer is due within
// timeout; then stopCmd (if not empty) is sent and grace more is allowed.
// A paced search (limits without a clock: see pace) first sleeps through
// the engine's quiet period.
func (c *Conn) BeginSearch(timeout time.Duration, stopCmd string, grace time.Duration, paced bool) {
	now := time.Now()
	c.deadline = now.Add(timeout)
	c.stopCmd, c.grace, c.stopSent = stopCmd, grace, false
	c.paced = paced
	if !paced {
		return
	}
	if q := c.pace.quiet(); q > 0 {
		c.p.QuietUntil(now.Add(q))
	}
}

// EndSearch records how long a search that ended with a move took.
func (c *Conn) EndSearch(elapsed time.Duration) {
	if c.paced {
		c.pace.record(elapsed)
	}
}

// ReadSearch returns the next line of the current search. Out of time it
// sends the stop command once: an engine that answers within the grace
// is only late (the game loop judges its clock); one that does not is
// hung. After an error the process is dead (killed here or by itself).
func (c *Conn) ReadSearch() ([]byte, error) {
	for {
		line, err := c.p.ReadLine(c.deadline)
		if err == nil {
			return line, nil
		}
		if errors.Is(err, engineproc.ErrTimeout) && !c.stopSent && c.stopCmd != "" {
			c.stopSent = true
			c.deadline = time.Now().Add(c.grace)
			if c.SendString(c.stopCmd) == nil {
				continue
			}
		}
		err = c.readErr(err)
		c.Kill()
		return nil, err
	}
}

// Kill ends the process group at once and releases the pipes.
func (c *Conn) Kill() { c.p.Stop("", 0) }

// Quit sends the protocol's quit (when the engine is alive), waits up to
// grace for the exit, then kills.
func (c *Conn) Quit(cmd string, grace time.Duration) { c.p.Stop(cmd, grace) }

// Alive reports whether the process runs.
func (c *Conn) Alive() bool { return c.p.Alive() }

// Watch kills the process when ctx ends (a stopped match does not wait
// for engines); one registration serves every search with ctx.
func (c *Conn) Watch(ctx context.Context) { c.p.Watch(ctx) }

// Unwatch ends Watch (a process kept past the request that used it).
func (c *Conn) Unwatch() { c.p.Unwatch() }

// pace keeps the runner from waking for every line of a search whose
// timing nothing depends on.
//
// Under a clock (tc=, st=, movetime=) the runner waits on the engine's
// output from the moment it sends go: the time it sees the move is the
// time it charges, so it must see it at once. Under nodes= or depth= alone
// nothing is charged, and waking for every info line was most of the
// runner's CPU: Stockfish writes about 11 lines a move at nodes=5000, each
// its own write(2) and wake-up, and a wake-up costs tens of microseconds
// on a virtual machine. There a search first sleeps for quietShare % of
// the shortest of the engine's last len(recent) searches — a time in
// which, on its own record, the engine does not move — and then reads
// what has gathered in the pipe with one wake-up. Iterative deepening
// writes most of its lines early (each iteration takes about twice the
// one before), so most of a search's lines arrive during the sleep. A move
// that comes sooner is seen at the end of the sleep: its recorded time
// (PGN comments) is then late, which changes nothing in a game without a
// clock.
type pace struct {
	recent [8]time.Duration // the last paced searches; 0: not yet played
	next   int
}

// quietShare is the quiet period in percent of the shortest recent search.
const quietShare = 90

// maxQuiet bounds the sleep: a stopped match waits at most this long for
// a sleeping game, and a slow search still gets its output read while it
// runs.
const maxQuiet = 200 * time.Millisecond

// quiet is the sleep before reading a search: 0 until len(recent)
// searches are on record.
func (s *pace) quiet() time.Duration {
	shortest := s.recent[0]
	for _, d := range s.recent {
		if d <= 0 {
			return 0
		}
		shortest = min(shortest, d)
	}
	return min(shortest*quietShare/100, maxQuiet)
}

func (s *pace) record(d time.Duration) {
	s.recent[s.next] = max(d, time.Nanosecond)
	s.next = (s.next + 1) % len(s.recent)
}
