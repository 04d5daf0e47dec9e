package protocol

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Xboard drives an xboard (CECP v2) engine over a Conn.
//
// Invariants:
//   - Features and Options are what the engine declared in its last
//     Handshake; every feature is answered (accepted, or rejected for
//     san: moves are sent and read in coordinate notation).
//   - Protocol-1 engines (no features) are not supported: every xboard
//     engine in Debian speaks protocol 2.
type Xboard struct {
	*Conn
	Features map[string]string
	Options  Options
	Clues    Clues
	ping     int
}

// NewXboard drives the engine of c with xboard; call Handshake first.
func NewXboard(c *Conn) *Xboard { return &Xboard{Conn: c} }

// Handshake sends xboard and protover 2 and reads features until
// done=1, within timeout. The error wraps ErrStartup and, when the
// engine printed UCI lines, says it may speak UCI.
func (x *Xboard) Handshake(timeout time.Duration) error {
	x.Features, x.Options, x.Clues = map[string]string{}, Options{}, Clues{}
	if err := x.SendString("xboard\nprotover 2"); err != nil {
		return fmt.Errorf("%w: %v", ErrStartup, err)
	}
	x.BeginSearch(timeout, "", 0, false)
	for done := false; !done; {
		line, err := x.ReadSearch()
		if err != nil {
			return fmt.Errorf("%w: no `feature done=1` within %v (%w)%s", ErrStartup, timeout, err, x.Clues.XboardHint())
		}
		x.Clues.Note(line)
		if HasWord(line, "feature") {
			done = x.features(line)
		}
	}
	return nil
}

// features records and answers one feature line; done reports done=1.
func (x *Xboard) features(line []byte) (done bool) {
	for _, kv := range ParseFeatures(string(line)) {
		k, v := kv[0], kv[1]
		switch k {
		case "done":
			done = v == "1"
			continue
		case "option":
			if o, err := ParseXboardOption(v); err != nil {
				x.Options.addBroken(xboardOptionName(v), err)
			} else {
				x.Options.add(o)
			}
		default:
			x.Features[k] = v
		}
		reply := "accepted "
		if k == "san" && v == "1" {
			reply = "rejected " // we send and want coordinate moves
		}
		x.SendString(reply + k)
	}
	return done
}

// Feature returns a feature the engine declared ("" if none).
func (x *Xboard) Feature(name string) string { return x.Features[name] }

// Variant reports whether the engine declared variant v (variants=...).
func (x *Xboard) Variant(v string) bool {
	return strings.Contains(","+x.Features["variants"]+",", ","+v+",")
}

// SetOption sets a declared option after checking value by its type.
func (x *Xboard) SetOption(name, value string) error {
	if err := x.Options.Check(name, value); err != nil {
		return err
	}
	return x.SendString("option " + name + "=" + value)
}

// Sync waits until the engine has read everything sent (ping/pong); an
// engine without ping gets no guarantee, as in every GUI.
func (x *Xboard) Sync(timeout time.Duration) error {
	if x.Features["ping"] != "1" {
		return nil
	}
	x.ping++
	if err := x.SendString("ping " + strconv.Itoa(x.ping)); err != nil {
		return err
	}
	if err := x.WaitFor("pong", timeout, nil); err != nil {
		return fmt.Errorf("no pong within %v: %w", timeout, err)
	}
	return nil
}

// ParseFeatures splits `feature a=1 b="x y"` into pairs.
func ParseFeatures(s string) [][2]string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "feature"))
	var out [][2]string
	for s != "" {
		s = strings.TrimLeft(s, " \t")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			break
		}
		k := strings.TrimSpace(s[:eq])
		s = s[eq+1:]
		var v string
		if strings.HasPrefix(s, `"`) {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				v, s = s[1:], ""
			} else {
				v, s = s[1:1+end], s[2+end:]
			}
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			v, s = s[:end], s[end:]
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

// xboardTypes maps xboard's option types onto the typed options: a
// slider is a spin, a file or a path a string, save and reset buttons.
var xboardTypes = map[string]OptionType{"-spin": Spin, "-slider": Spin, "-check": Check, "-combo": Combo,
	"-string": String, "-file": String, "-path": String, "-button": Button, "-save": Button, "-reset": Button}

// xboardOptionName is the name of an option feature's value, `Name -type ...`.
func xboardOptionName(v string) string {
	if i := strings.Index(v, " -"); i > 0 {
		return strings.TrimSpace(v[:i])
	}
	return ""
}

// ParseXboardOption reads the value of an option feature: `Name -spin
// DEF MIN MAX`, `Name -check 0|1`, `Name -combo a /// *b /// c` (the
// starred value is the default), `Name -string TEXT`, `Name -button`.
func ParseXboardOption(v string) (Option, error) {
	bad := func(why string) error { return fmt.Errorf("xboard option %q: %s", v, why) }
	name := xboardOptionName(v)
	if name == "" {
		return Option{}, bad("no name before its -type")
	}
	typeWord, rest, _ := strings.Cut(strings.TrimSpace(v[len(name)+1:]), " ")
	t, ok := xboardTypes[typeWord]
	if !ok {
		return Option{}, bad(fmt.Sprintf("unknown type %q", typeWord))
	}
	o := Option{Name: name, Type: t, xboard: true}
	rest = strings.TrimSpace(rest)
	switch t {
	case Spin:
		f := strings.Fields(rest)
		if len(f) != 3 {
			return Option{}, bad("want a default, a min and a max")
		}
		o.Default, o.MinText, o.MaxText = f[0], f[1], f[2]
	case Combo:
		for _, val := range strings.Split(rest, "///") {
			val = strings.TrimSpace(val)
			if d, ok := strings.CutPrefix(val, "*"); ok {
				val, o.Default = d, d
			}
			if len(o.Vars) == maxVars {
				return Option{}, bad(fmt.Sprintf("more than %d values", maxVars))
			}
			o.Vars = append(o.Vars, val)
		}
	case Check, String:
		o.Default = rest
	}
	if err := o.validate(); err != nil {
		return Option{}, bad(err.Error())
	}
	return o, nil
}

// ParsePost reads xboard thinking output, "depth score time(cs) nodes
// pv...", into inf (its PV too); a line that is not one changes nothing. Scores
// follow the CECP mate convention (±100000 ± distance).
func ParsePost(line []byte, inf *Info) {
	var f [4][]byte
	rest := line
	for i := range f {
		f[i], rest = NextField(rest)
	}
	depth, ok1 := atoi(bytes.TrimRight(f[0], ".&"))
	score, ok2 := atoi(f[1])
	cs, ok3 := atoi(f[2])
	nodes, ok4 := atoi(f[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return
	}
	inf.Depth, inf.Nodes, inf.Time = int(depth), nodes, time.Duration(cs)*10*time.Millisecond
	inf.PV = append(inf.PV[:0], trimBlanks(rest)...)
	inf.HasScore = true
	switch {
	case score >= 100000-1000:
		inf.Score = Score{Mate: int(max((100000-score+1)/2, 1))}
	case score <= -100000+1000:
		inf.Score = Score{Mate: -int(max((100000+score+1)/2, 1))}
	default:
		inf.Score = Score{CP: int(score)}
	}
}
