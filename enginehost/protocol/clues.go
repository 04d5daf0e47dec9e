package protocol

import (
	"bytes"
	"fmt"
	"strconv"
)

// Clues is what an engine printed while the driver waited for its
// handshake: enough to tell a user who gave the wrong protocol what to
// change, instead of only "no uciok".
type Clues struct {
	lines  int
	uci    bool   // a line only a UCI engine prints (id, option, uciok, ...)
	xboard bool   // a line only an xboard engine prints (feature, tellics, ...)
	first  string // the first line that was not blank, cut short
}

var (
	uciWords    = []string{"id", "option", "uciok", "readyok", "info", "bestmove"}
	xboardWords = []string{"feature", "tellics", "telluser", "tellall", "tellopponent", "Illegal", "Error", "move", "pong"}
)

func (c *Clues) Note(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	c.lines++
	if c.first == "" {
		if len(line) > 80 {
			line = line[:80]
		}
		c.first = string(line)
	}
	for _, w := range uciWords {
		if HasWord(line, w) {
			c.uci = true
		}
	}
	for _, w := range xboardWords {
		if HasWord(line, w) {
			c.xboard = true
		}
	}
}

func (c *Clues) said() string {
	if c.lines == 0 {
		return "it printed nothing"
	}
	return "it printed " + strconv.Itoa(c.lines) + " line(s), the first " + strconv.Quote(c.first)
}

// UCIHint follows a failed UCI handshake: an engine that printed nothing
// UCI-like may well speak xboard.
func (c *Clues) UCIHint() string {
	if c.uci {
		return ""
	}
	return fmt.Sprintf("; %s, nothing UCI-like: if it is an xboard (CECP) engine, give proto=xboard", c.said())
}

// XboardHint follows a failed xboard handshake: an engine that printed
// UCI lines, or only complained about the command, may speak UCI.
func (c *Clues) XboardHint() string {
	if c.xboard && !c.uci {
		return ""
	}
	return fmt.Sprintf("; %s: if it is a UCI engine, give proto=uci (the default)", c.said())
}
