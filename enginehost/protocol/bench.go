package protocol

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// An engine's bench is its signature: the node count of a fixed search
// set. It runs on the engine's command line ("ENGINE bench") or, when a
// net must be loaded first, in a UCI session (BenchSession). Either way
// the engine's output is read to its end and each line handed to the
// caller, which keeps what it needs (BenchCount, the engine's errors).

// BenchSession is a bench that loads a net first: the engine is given
// its options with the net's first (an option that switches to the net,
// UseNNUE, needs it loaded), asked isready, then bench when a signature
// is to be checked, then quit. Options are sent unchecked: an engine
// that does not take one says so in its output, which the caller reads.
type BenchSession struct {
	// NetOption names the option that takes the net's path (EvalFile).
	NetOption string
	// Options are every option to set, the net's included.
	Options map[string]string
	// Bench: send bench after readyok.
	Bench bool
}

// Run runs the session on c within timeout, every line the engine writes
// to onLine, until the engine ends its output. ready reports that the
// engine answered isready after its options; err is a hang, or the
// engine's exit when it was not status 0.
func (s *BenchSession) Run(c *Conn, timeout time.Duration, onLine func([]byte)) (ready bool, err error) {
	deadline := time.Now().Add(timeout)
	u := NewUCI(c)
	u.OnLine = onLine
	if err := u.Handshake(timeout); err != nil {
		return false, err
	}
	if err := u.SetOptionUnchecked(s.NetOption, s.Options[s.NetOption]); err != nil {
		return false, err
	}
	names := make([]string, 0, len(s.Options))
	for k := range s.Options {
		if k != s.NetOption {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		if err := u.SetOptionUnchecked(k, s.Options[k]); err != nil {
			return false, err
		}
	}
	if err := u.IsReady(time.Until(deadline)); err != nil {
		return false, err
	}
	cmds := "quit"
	if s.Bench {
		cmds = "bench\nquit"
	}
	if err := u.SendString(cmds); err != nil {
		return true, err
	}
	return true, DrainOutput(c, deadline, onLine)
}

// DrainOutput reads c's output to its end by deadline, every line to
// onLine. It returns nil when the engine then exited with status 0, the
// exit otherwise, and ErrHang (the engine killed) at the deadline.
func DrainOutput(c *Conn, deadline time.Time, onLine func([]byte)) error {
	for {
		line, err := c.ReadLine(deadline)
		if err == nil {
			onLine(line)
			continue
		}
		if errors.Is(err, ErrHang) {
			c.Kill()
			return err
		}
		p := c.Proc()
		p.WaitExit(time.Second)
		if ex := p.Exit(); ex.Exited && ex.Code != 0 {
			return errors.New(ex.String())
		}
		if !p.WaitExit(0) {
			return err
		}
		return nil
	}
}

// benchNodes finds the node count in a bench's output: Stockfish's
// "Nodes searched  : N", or the last "nodes N" / "N nodes" line of
// others, in this order of trust.
var benchNodes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)nodes searched\s*:\s*(\d+)`),
	regexp.MustCompile(`(?im)^\s*(?:total\s+)?nodes\s*[:=]?\s*(\d+)\s*$`),
	regexp.MustCompile(`(?im)^\s*(\d+)\s+nodes\b`),
}

// BenchCount keeps the node count of a bench's output, line by line.
type BenchCount struct {
	last [3]string // the last count each of benchNodes found
}

// Line looks at one line of output.
func (b *BenchCount) Line(line string) {
	for i, re := range benchNodes {
		if m := re.FindStringSubmatch(line); m != nil {
			b.last[i] = m[1]
		}
	}
}

// Nodes is the bench's node count: the last count of the most trusted
// form found.
func (b *BenchCount) Nodes() (uint64, error) {
	for _, n := range b.last {
		if n == "" {
			continue
		}
		if v, err := strconv.ParseUint(n, 10, 64); err == nil {
			return v, nil
		}
	}
	return 0, errors.New("no node count in its output")
}

// StartBench starts "ENGINE ARGS" for a bench on its command line: its
// input is closed at once (a bench reads nothing).
func StartBench(cfg engineproc.Config) (*Conn, error) {
	c, err := Start(cfg)
	if err != nil {
		return nil, err
	}
	c.Proc().CloseInput()
	return c, nil
}
