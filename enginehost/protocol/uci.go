package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrNoMove: the engine ended its search without a move ("bestmove
// (none)", "bestmove 0000", "bestmove").
var ErrNoMove = errors.New("engine sent no move")

// ID is what an engine calls itself (UCI "id name", "id author").
type ID struct{ Name, Author string }

// UCI drives a UCI engine over a Conn.
//
// Invariants:
//   - Options, ID and Clues are what the engine said in its last
//     Handshake; a new process (a restart) needs a new Handshake.
//   - posBuf holds the last position command built, for posFEN and the
//     first posN moves; the next one appends only new moves (posN < 0:
//     rebuild). NewGame and Handshake reset it.
type UCI struct {
	*Conn
	ID      ID
	Options Options
	// Clues is what the engine printed during the handshake, for the
	// error of one that does not speak UCI.
	Clues Clues
	// OnLine, when set, sees every line Handshake and IsReady read (an
	// engine's complaint about an option comes before readyok).
	OnLine func(line []byte)
	// OnInfo, when set, sees every info line ReadBestmove reads, as the
	// engine wrote it (the bytes are valid only during the call).
	OnInfo func(line []byte)

	posBuf []byte
	posFEN string
	posN   int
	goBuf  []byte
}

// NewUCI drives the engine of c with UCI; call Handshake first.
func NewUCI(c *Conn) *UCI {
	return &UCI{Conn: c, posBuf: make([]byte, 0, 2048), goBuf: make([]byte, 0, 128), posN: -1}
}

// Handshake sends uci and reads the engine's id and option lines until
// uciok, within timeout. The error wraps ErrStartup and, when the engine
// printed nothing UCI-like, says it may speak xboard.
func (u *UCI) Handshake(timeout time.Duration) error {
	u.ID, u.Options, u.Clues, u.posN = ID{}, Options{}, Clues{}, -1
	if err := u.SendString("uci"); err != nil {
		return fmt.Errorf("%w: %v", ErrStartup, err)
	}
	err := u.WaitFor("uciok", timeout, func(line []byte) {
		u.seen(line)
		u.Clues.Note(line)
		s := strings.TrimSpace(string(line))
		if rest, ok := strings.CutPrefix(s, "id name "); ok {
			u.ID.Name = strings.TrimSpace(rest)
		} else if rest, ok := strings.CutPrefix(s, "id author "); ok {
			u.ID.Author = strings.TrimSpace(rest)
		} else if strings.HasPrefix(s, "option ") {
			u.Options.AddLine(s)
		}
	})
	if err != nil {
		return fmt.Errorf("%w: no uciok within %v (%w)%s", ErrStartup, timeout, err, u.Clues.UCIHint())
	}
	return nil
}

func (u *UCI) seen(line []byte) {
	if u.OnLine != nil {
		u.OnLine(line)
	}
}

// SetOption sets a declared option after checking value against its
// type (Options.Check): the error names the option and the value.
func (u *UCI) SetOption(name, value string) error {
	if err := u.Options.Check(name, value); err != nil {
		return err
	}
	return u.SetOptionUnchecked(name, value)
}

// SetOptionUnchecked sends setoption as given: for a caller that decided
// itself what to send (an engine that declares nothing, the fastchess
// drop-in's warnings). A declared button given no value is pressed
// without one, as UCI writes it.
func (u *UCI) SetOptionUnchecked(name, value string) error {
	if o, ok := u.Options.Lookup(name); ok && o.Type == Button && value == "" {
		return u.SendString("setoption name " + name)
	}
	return u.SendString("setoption name " + name + " value " + value)
}

// IsReady sends isready and waits for readyok within timeout.
func (u *UCI) IsReady(timeout time.Duration) error {
	if err := u.SendString("isready"); err != nil {
		return err
	}
	if err := u.WaitFor("readyok", timeout, u.OnLine); err != nil {
		return fmt.Errorf("no readyok within %v: %w", timeout, err)
	}
	return nil
}

// NewGame sends ucinewgame; the next position is sent whole.
func (u *UCI) NewGame() error {
	u.posN = -1
	return u.SendString("ucinewgame")
}

// Go is what a go command asks.
type Go struct {
	// Clock: wtime, btime (at least 1 ms), winc and binc when either is
	// given, movestogo when > 0.
	Clock     bool
	Time, Inc [2]time.Duration // white, black
	MovesToGo int
	Nodes     int64
	Depth     int
	MoveTime  time.Duration
	Perft     int  // go perft N (the engine's divide), alone
	Ponder    bool // go ponder: think on the opponent's time
}

// SetPosition builds the position command for the game since startFEN
// ("" for the standard start position): only the moves the last one did
// not have are appended. The moves must continue the last call's game
// (the same start, the same first moves) or be fewer: a caller that asks
// about unrelated positions calls ForgetPosition first.
func (u *UCI) SetPosition(startFEN string, moves []string) {
	if u.posN < 0 || u.posFEN != startFEN || len(moves) < u.posN {
		b := u.posBuf[:0]
		if startFEN == "" {
			b = append(b, "position startpos"...)
		} else {
			b = append(b, "position fen "...)
			b = append(b, startFEN...)
		}
		u.posBuf, u.posFEN, u.posN = b, startFEN, 0
	}
	for _, m := range moves[u.posN:] {
		if u.posN == 0 {
			u.posBuf = append(u.posBuf, " moves"...)
		}
		u.posBuf = append(u.posBuf, ' ')
		u.posBuf = append(u.posBuf, m...)
		u.posN++
	}
}

// ForgetPosition makes the next SetPosition build its command whole.
func (u *UCI) ForgetPosition() { u.posN = -1 }

// setGo builds the go command of g.
func (u *UCI) setGo(g *Go) {
	b := append(u.goBuf[:0], "go"...)
	if g.Ponder {
		b = append(b, " ponder"...)
	}
	if g.Perft > 0 {
		b = append(b, " perft "...)
		u.goBuf = strconv.AppendInt(b, int64(g.Perft), 10)
		return
	}
	if g.Clock {
		b = appendNum(b, " wtime ", max(g.Time[0].Milliseconds(), 1))
		b = appendNum(b, " btime ", max(g.Time[1].Milliseconds(), 1))
		if g.Inc[0] > 0 || g.Inc[1] > 0 {
			b = appendNum(b, " winc ", g.Inc[0].Milliseconds())
			b = appendNum(b, " binc ", g.Inc[1].Milliseconds())
		}
		if g.MovesToGo > 0 {
			b = appendNum(b, " movestogo ", int64(g.MovesToGo))
		}
	}
	if g.Nodes > 0 {
		b = appendNum(b, " nodes ", g.Nodes)
	}
	if g.Depth > 0 {
		b = appendNum(b, " depth ", int64(g.Depth))
	}
	if g.MoveTime > 0 {
		b = appendNum(b, " movetime ", g.MoveTime.Milliseconds())
	}
	u.goBuf = b
}

// appendNum appends a keyword and a number.
func appendNum(b []byte, kw string, n int64) []byte {
	return strconv.AppendInt(append(b, kw...), n, 10)
}

// Go sends the position SetPosition built and the go command of g with
// one system call.
func (u *UCI) Go(g *Go) error {
	u.setGo(g)
	return u.Send2(u.posBuf, u.goBuf)
}

// PonderHit tells a pondering engine that the expected move was played.
func (u *UCI) PonderHit() error { return u.SendString("ponderhit") }

// ReadBestmove reads the current search (Conn.BeginSearch set its
// deadline) until bestmove, folding its info lines into inf; onPV, when
// set, is called with inf after every line that gives the main line a PV
// (the search so far, as the engine reports it). The move and the ponder
// move are valid until the next read; a bestmove without a move is
// ErrNoMove.
func (u *UCI) ReadBestmove(inf *Info, onPV func(inf *Info)) (move, ponder []byte, err error) {
	for {
		line, err := u.ReadSearch()
		if err != nil {
			return nil, nil, err
		}
		if len(line) < 4 {
			continue
		}
		switch {
		case HasWord(line, "info"):
			if u.OnInfo != nil {
				u.OnInfo(line)
			}
			if ParseInfo(line, inf) && onPV != nil {
				onPV(inf)
			}
		case HasWord(line, "bestmove"):
			move, ponder = SplitBestmove(line)
			if move == nil {
				return nil, nil, ErrNoMove
			}
			return move, ponder, nil
		}
	}
}
