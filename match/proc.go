package match

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// proc is an engine process as the players drive it: engineproc's process
// with the protocol's line conventions and the game loop's errors.
//
// Invariants:
//   - Only the goroutine that drives the player calls proc's methods (the
//     context watch kills from elsewhere through engineproc, which allows it).
//   - A search has a deadline: when it passes, the stop command (if any) is
//     sent and the engine gets the grace to answer; an engine that still
//     says nothing is killed (ErrHang). There are no timers: the deadline is
//     the read's.
//   - wbuf is reused for every command written, so a move costs no
//     allocation for its I/O.
//   - A paced search (see pace) starts with a quiet period; a search under
//     a clock is never paced.
type proc struct {
	p    *engineproc.Proc
	wbuf []byte

	// The current search (beginSearch).
	deadline time.Time
	stopCmd  string
	grace    time.Duration
	stopSent bool
	paced    bool

	pace pace
}

func startProc(cfg *EngineConfig) (*proc, error) {
	p, err := engineproc.Start(engineproc.Config{Path: cfg.Cmd, Args: cfg.Args, Dir: cfg.Dir})
	if err != nil {
		return nil, err
	}
	return &proc{p: p, wbuf: make([]byte, 0, 4096)}, nil
}

func (p *proc) write(b []byte) error {
	if err := p.p.Write(b); err != nil {
		return fmt.Errorf("%w: %v", ErrCrash, err)
	}
	return nil
}

// send writes one command line.
func (p *proc) send(line []byte) error {
	p.wbuf = append(append(p.wbuf[:0], line...), '\n')
	return p.write(p.wbuf)
}

// send2 writes two command lines with one system call.
func (p *proc) send2(a, b []byte) error {
	p.wbuf = append(append(p.wbuf[:0], a...), '\n')
	p.wbuf = append(append(p.wbuf, b...), '\n')
	return p.write(p.wbuf)
}

func (p *proc) sendString(s string) error {
	p.wbuf = append(append(p.wbuf[:0], s...), '\n')
	return p.write(p.wbuf)
}

// readErr turns the end of a read into the game loop's errors.
func (p *proc) readErr(err error) error {
	switch {
	case errors.Is(err, engineproc.ErrTimeout):
		return ErrHang
	case errors.Is(err, engineproc.ErrEOF):
		return fmt.Errorf("%w: %s", ErrCrash, p.p.Describe())
	}
	return fmt.Errorf("%w: %v", ErrCrash, err)
}

// waitFor reads lines until one that begins with word, within timeout
// (ErrHang after it); other lines go to each.
func (p *proc) waitFor(word string, timeout time.Duration, each func([]byte)) error {
	deadline := time.Now().Add(timeout)
	for {
		line, err := p.p.ReadLine(deadline)
		if err != nil {
			return p.readErr(err)
		}
		if hasWord(line, word) {
			return nil
		}
		if each != nil {
			each(line)
		}
	}
}

// beginSearch starts the clock of a search: its answer is due within
// timeout; then stopCmd (if not empty) is sent and grace more is allowed.
// A paced search (limits without a clock: see pace) first sleeps through
// the engine's quiet period.
func (p *proc) beginSearch(timeout time.Duration, stopCmd string, grace time.Duration, paced bool) {
	now := time.Now()
	p.deadline = now.Add(timeout)
	p.stopCmd, p.grace, p.stopSent = stopCmd, grace, false
	p.paced = paced
	if !paced {
		return
	}
	if q := p.pace.quiet(); q > 0 {
		p.p.QuietUntil(now.Add(q))
	}
}

// endSearch records how long a search that ended with a move took.
func (p *proc) endSearch(elapsed time.Duration) {
	if p.paced {
		p.pace.record(elapsed)
	}
}

// readSearch returns the next line of the current search. Out of time it
// sends the stop command once: an engine that answers within the grace is
// only late (the game loop judges its clock); one that does not is hung.
// After an error the process is dead (killed here or by itself).
func (p *proc) readSearch() ([]byte, error) {
	for {
		line, err := p.p.ReadLine(p.deadline)
		if err == nil {
			return line, nil
		}
		if errors.Is(err, engineproc.ErrTimeout) && !p.stopSent && p.stopCmd != "" {
			p.stopSent = true
			p.deadline = time.Now().Add(p.grace)
			if p.sendString(p.stopCmd) == nil {
				continue
			}
		}
		err = p.readErr(err)
		p.kill()
		return nil, err
	}
}

// kill ends the process group at once and releases the pipes.
func (p *proc) kill() { p.p.Stop("", 0) }

// quit sends the protocol's quit (when the engine is alive), waits up to
// grace for the exit, then kills.
func (p *proc) quit(cmd string, grace time.Duration) { p.p.Stop(cmd, grace) }

// alive reports whether the process runs.
func (p *proc) alive() bool { return p.p.Alive() }

// watchContext kills the process when ctx ends (a stopped match does not
// wait for engines); one registration serves every search with ctx.
func (p *proc) watchContext(ctx context.Context) { p.p.Watch(ctx) }

// Small allocation-free parsers for protocol tokens.

// hasWord reports whether line (after leading blanks) starts with word followed by a blank or end of line.
func hasWord(line []byte, word string) bool {
	for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		line = line[1:]
	}
	if len(line) < len(word) || string(line[:len(word)]) != word {
		return false
	}
	return len(line) == len(word) || line[len(word)] == ' ' || line[len(word)] == '\t'
}

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

// pace keeps the runner from waking for every line of a search whose
// timing nothing depends on.
//
// Under a clock (tc=, st=, movetime=) the runner waits on the engine's
// output from the moment it sends go: the time it sees the move is the
// time it charges, so it must see it at once. Under nodes= or depth= alone
// nothing is charged, and waking for every info line was most of the
// runner's CPU: Stockfish writes about 11 lines a move at nodes=5000, each
// its own write(2) and wake-up, and a wake-up costs tens of microseconds
// on a virtual machine. There a search first sleeps for quietShare % of the
// shortest of the engine's last len(recent) searches — a time in which, on its own
// record, the engine does not move — and then reads what has gathered in
// the pipe with one wake-up. Iterative deepening writes most of its lines
// early (each iteration takes about twice the one before), so most of a
// search's lines arrive during the sleep. A move that comes sooner is seen
// at the end of the sleep: its recorded time (PGN comments) is then late,
// which changes nothing in a game without a clock.
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
