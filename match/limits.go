package match

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// Limits is how long one engine may think on each move. The fields combine
// as UCI's `go` does: a clock (Base > 0, optionally with Inc and MovesToGo)
// can be joined by Nodes, Depth or MoveTime, and all of them are sent.
// A zero Limits is invalid (see Validate).
type Limits struct {
	Base      time.Duration // clock at the start of the game (and added again every MovesToGo moves)
	Inc       time.Duration // increment per move
	MovesToGo int           // moves per period for repeating controls (40/60); 0 = sudden death
	Nodes     int64         // nodes per move
	Depth     int           // plies per move
	MoveTime  time.Duration // fixed time per move
}

// HasClock reports whether the limits include a game clock.
func (l Limits) HasClock() bool { return l.Base > 0 }

// Clockless reports whether no clock or move time limits a search (only
// nodes or depth do): how soon the runner sees a move then changes nothing
// in the game.
func (l Limits) Clockless() bool { return !l.HasClock() && l.MoveTime == 0 }

// Validate reports a limit that cannot be played.
func (l Limits) Validate() error {
	switch {
	case l.Base < 0 || l.Inc < 0 || l.MovesToGo < 0 || l.Nodes < 0 || l.Depth < 0 || l.MoveTime < 0:
		return fmt.Errorf("negative time control value")
	case l.Base == 0 && (l.Inc > 0 || l.MovesToGo > 0):
		return fmt.Errorf("increment or moves-to-go without a base time")
	case l.Base == 0 && l.Nodes == 0 && l.Depth == 0 && l.MoveTime == 0:
		return fmt.Errorf("no limit: give tc=, st=, nodes=, depth= or movetime= (tc=inf needs one of the others)")
	}
	return nil
}

// PGNTimeControl is the PGN TimeControl tag value: "40/60+0.5", "10+0.1",
// or "-" when there is no clock (fixed nodes, depth or move time).
func (l Limits) PGNTimeControl() string {
	if !l.HasClock() {
		return "-"
	}
	s := fmtSeconds(l.Base)
	if l.MovesToGo > 0 {
		s = strconv.Itoa(l.MovesToGo) + "/" + s
	}
	if l.Inc > 0 {
		s += "+" + fmtSeconds(l.Inc)
	}
	return s
}

// String is a short human description, in the syntax ParseLimit accepts.
func (l Limits) String() string {
	var parts []string
	if l.HasClock() {
		parts = append(parts, "tc="+l.PGNTimeControl())
	}
	if l.Nodes > 0 {
		parts = append(parts, "nodes="+strconv.FormatInt(l.Nodes, 10))
	}
	if l.Depth > 0 {
		parts = append(parts, "depth="+strconv.Itoa(l.Depth))
	}
	if l.MoveTime > 0 {
		parts = append(parts, "movetime="+strconv.FormatInt(l.MoveTime.Milliseconds(), 10))
	}
	return strings.Join(parts, ",")
}

func fmtSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// ParseLimit sets one limit from a key=value pair, in the units fastchess
// and cutechess-cli use: tc=[MOVES/]SECONDS[+INC] (SECONDS may be MIN:SEC)
// or tc=inf (no clock), st=SECONDS per move (fractions allowed), nodes=N,
// depth=D, and movetime=MS (milliseconds, UCI's unit). ok is false when key
// is not a limit key, so that callers can handle their other keys.
func (l *Limits) ParseLimit(key, value string) (ok bool, err error) {
	switch key {
	case "tc":
		return true, l.parseTC(value)
	case "nodes":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n <= 0 {
			return true, fmt.Errorf("nodes=%s: want a positive integer", apierr.Q(value))
		}
		l.Nodes = n
	case "depth":
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 || n > 1000 {
			return true, fmt.Errorf("depth=%s: want an integer in 1..1000", apierr.Q(value))
		}
		l.Depth = n
	case "movetime":
		ms, err := strconv.ParseInt(value, 10, 64)
		if err != nil || ms <= 0 || ms > 1e10 {
			return true, fmt.Errorf("movetime=%s: want positive milliseconds", apierr.Q(value))
		}
		l.MoveTime = time.Duration(ms) * time.Millisecond
	case "st":
		// Seconds, as in fastchess and cutechess-cli; engines are told
		// whole milliseconds (UCI movetime), so that is the resolution.
		sec, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(sec) || sec < 0.001 || sec > 1e7 {
			return true, fmt.Errorf("st=%s: want seconds per move, at least 0.001 (e.g. st=0.5)", apierr.Q(value))
		}
		l.MoveTime = time.Duration(math.Round(sec*1000)) * time.Millisecond
	default:
		return false, nil
	}
	return true, nil
}

func (l *Limits) parseTC(s string) error {
	bad := func(why string) error {
		return fmt.Errorf("tc=%s: %s (want [MOVES/]SECONDS[+INC], e.g. 10+0.1, 40/60+0.6, 1:30+1, or inf)", apierr.Q(s), why)
	}
	if strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinite") {
		// No clock: the engine's other limits (nodes=, depth=, st=) end its
		// search, as with cutechess-cli's tc=inf.
		l.Base, l.Inc, l.MovesToGo = 0, 0, 0
		return nil
	}
	rest := s
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n <= 0 {
			return bad("moves-to-go is not a positive integer")
		}
		l.MovesToGo = n
		rest = rest[i+1:]
	}
	inc, hasInc := "", false
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		rest, inc, hasInc = rest[:i], rest[i+1:], true
	}
	base, err := parseSeconds(rest)
	if err != nil || base <= 0 {
		return bad("base time is not a positive number of seconds")
	}
	l.Base = base
	if hasInc {
		d, err := parseSeconds(inc)
		if err != nil || d < 0 {
			return bad("increment is not a number of seconds")
		}
		l.Inc = d
	}
	return nil
}

// parseSeconds reads "12.5" or "1:30" (minutes:seconds).
func parseSeconds(s string) (time.Duration, error) {
	mins := 0.0
	if i := strings.IndexByte(s, ':'); i >= 0 {
		m, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, err
		}
		mins, s = m, s[i+1:]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	f += mins * 60
	if !(f >= 0 && f <= 1e7) { // NaN fails too
		return 0, fmt.Errorf("out of range")
	}
	return time.Duration(f * float64(time.Second)), nil
}
