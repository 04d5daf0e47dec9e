package match

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/protocol"
)

// XboardPlayer drives an xboard (CECP v2) engine through
// enginehost/protocol.
//
// Invariants:
//   - Between moves the engine is in force mode: every Think sends `force`,
//     the moves it has not seen, the clocks, then `go`; so the engine never
//     starts thinking on its own and never sees a move twice.
//   - sentN counts the moves of the current game the engine has on its
//     board, its own replies included (sentN < 0: set the board up again).
//   - Moves are sent in coordinate notation (feature san is rejected).
//   - An engine without setboard can only start from the standard position;
//     openings for it must be move sequences (PGN books).
type XboardPlayer struct {
	cfg      EngineConfig
	x        *protocol.Xboard
	chess960 bool
	limits   Limits
	levelSet bool
	restarts int // engine processes started after the first one

	sentFEN string
	sentN   int
	buf     []byte
	info    protocol.Info
}

// NewXboardPlayer starts the engine, negotiates features and sets options.
func NewXboardPlayer(cfg EngineConfig) (*XboardPlayer, error) {
	x := &XboardPlayer{cfg: cfg, sentN: -1, buf: make([]byte, 0, 256)}
	if err := x.start(); err != nil {
		return nil, err
	}
	return x, nil
}

func (x *XboardPlayer) Name() string { return x.cfg.Name }

// Feature returns a feature the engine declared ("" if none).
func (x *XboardPlayer) Feature(name string) string { return x.x.Feature(name) }

// EngineID is the engine's own name (`feature myname`), "" if it gave none.
func (x *XboardPlayer) EngineID() string { return x.x.Feature("myname") }

// Restarts counts the engine processes started after the first (after a
// crash or a hang): the game loop records each as an incident.
func (x *XboardPlayer) Restarts() int { return x.restarts }

func (x *XboardPlayer) start() error {
	c, err := protocol.Start(engineproc.Config{Path: x.cfg.Cmd, Args: x.cfg.Args, Dir: x.cfg.Dir})
	if err != nil {
		return fmt.Errorf("engine %s: %w", x.cfg.label(), err)
	}
	x.x = protocol.NewXboard(c)
	x.sentN = -1
	if err := x.x.Handshake(x.cfg.startTimeout()); err != nil {
		c.Kill()
		return fmt.Errorf("engine %s (%s): %w", x.cfg.label(), x.cfg.Cmd, err)
	}
	for _, o := range x.cfg.Options {
		if err := x.x.SetOption(o.Name, o.Value); err != nil {
			c.Kill()
			return fmt.Errorf("engine %s: %w", x.cfg.label(), err)
		}
	}
	if err := x.x.Sync(x.cfg.readyTimeout()); err != nil {
		c.Kill()
		return fmt.Errorf("engine %s (%s): %w: %v", x.cfg.label(), x.cfg.Cmd, ErrStartup, err)
	}
	return nil
}

// NewGame restarts a dead engine and resets the board.
func (x *XboardPlayer) NewGame(ctx context.Context, chess960 bool) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if !x.x.Alive() {
			x.x.Kill()
			if err = x.start(); err != nil {
				continue
			}
			x.restarts++
		}
		if err = x.newGame(chess960); err == nil {
			return nil
		}
		if errors.Is(err, ErrUnsupport) {
			return err
		}
		x.x.Kill()
	}
	return fmt.Errorf("engine %s: new game: %w", x.cfg.label(), err)
}

func (x *XboardPlayer) newGame(chess960 bool) error {
	if chess960 && !x.x.Variant("fischerandom") {
		return fmt.Errorf("engine %s: %w: Chess960 (no fischerandom variant)", x.cfg.label(), ErrUnsupport)
	}
	cmds := "new\nforce\neasy\npost"
	if chess960 {
		cmds += "\nvariant fischerandom"
	}
	if err := x.x.SendString(cmds); err != nil {
		return err
	}
	x.chess960 = chess960
	x.sentN = -1
	x.levelSet = false
	return x.x.Sync(x.cfg.readyTimeout())
}

// Think sends the new moves, the clocks and go, and reads until move.
func (x *XboardPlayer) Think(ctx context.Context, req *ThinkRequest) (Reply, error) {
	var r Reply
	if !x.x.Alive() {
		return r, ErrCrash
	}
	b := append(x.buf[:0], "force"...)
	if x.sentN < 0 || x.sentFEN != req.StartFEN || len(req.Moves) < x.sentN {
		if x.sentN >= 0 {
			b = append(b, "\nnew\nforce"...)
		}
		if req.StartFEN != "" {
			if x.x.Features["setboard"] != "1" {
				return r, fmt.Errorf("%w: engine %s has no setboard: use openings that are move sequences from the start position (PGN)", ErrUnsupport, x.cfg.label())
			}
			b = append(b, "\nsetboard "...)
			b = append(b, req.StartFEN...)
		}
		x.sentFEN, x.sentN = req.StartFEN, 0
	}
	usermove := x.x.Features["usermove"] == "1"
	for _, m := range req.Moves[x.sentN:] {
		b = append(b, '\n')
		if usermove {
			b = append(b, "usermove "...)
		}
		b = append(b, m...)
	}
	x.sentN = len(req.Moves)
	if !x.levelSet || x.limits != req.Limits {
		var err error
		if b, err = x.appendLevel(b, req.Limits); err != nil {
			return r, err
		}
		x.limits, x.levelSet = req.Limits, true
	}
	if req.Limits.HasClock() {
		own, opp := req.Time[0], req.Time[1]
		if !req.White {
			own, opp = opp, own
		}
		b = append(b, "\ntime "...)
		b = strconv.AppendInt(b, max(own.Milliseconds()/10, 1), 10)
		b = append(b, "\notim "...)
		b = strconv.AppendInt(b, max(opp.Milliseconds()/10, 1), 10)
	}
	b = append(b, "\ngo"...)
	x.buf = b
	if err := x.x.Send(b); err != nil {
		x.x.Kill()
		return r, ErrCrash
	}
	t0 := time.Now()
	// Out of time, "?" (move now) is sent, then the engine gets the grace:
	// see UCIPlayer.Think.
	x.x.BeginSearch(req.Timeout, "?", x.cfg.stopGrace(), req.Limits.Clockless())
	x.x.Watch(ctx)
	x.info = protocol.Info{PV: x.info.PV[:0]}
	for {
		line, err := x.x.ReadSearch()
		if err != nil {
			r.Elapsed = time.Since(t0)
			if ctx.Err() != nil {
				return r, ErrStopped
			}
			return r, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] >= '0' && line[0] <= '9' {
			protocol.ParsePost(line, &x.info)
			r.Info = infoOf(&x.info)
			continue
		}
		var mv []byte
		switch {
		case protocol.HasWord(line, "move"):
			_, rest := protocol.NextField(line)
			mv, _ = protocol.NextField(rest)
		case bytes.HasPrefix(line, []byte("My move is")):
			_, rest, _ := bytes.Cut(line, []byte(":"))
			mv, _ = protocol.NextField(rest)
		case protocol.HasWord(line, "resign"):
			r.Elapsed = time.Since(t0)
			return r, ErrResign
		default:
			continue // tellics, Illegal move replies to commands, result claims, offers
		}
		r.Elapsed = time.Since(t0)
		if len(mv) == 0 {
			return r, ErrNoBestmove
		}
		r.Move = string(mv)
		x.sentN++ // the engine made its own move on its board
		x.x.EndSearch(r.Elapsed)
		return r, nil
	}
}

// appendLevel adds the time control commands for l.
func (x *XboardPlayer) appendLevel(b []byte, l Limits) ([]byte, error) {
	if l.HasClock() {
		b = append(b, "\nlevel "...)
		b = strconv.AppendInt(b, int64(l.MovesToGo), 10)
		sec := l.Base.Seconds()
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(sec)/60, 10)
		if s := sec - float64(int64(sec)/60*60); s != 0 {
			b = append(b, ':')
			if s < 10 {
				b = append(b, '0')
			}
			b = strconv.AppendFloat(b, s, 'f', -1, 64)
		}
		b = append(b, ' ')
		b = strconv.AppendFloat(b, l.Inc.Seconds(), 'f', -1, 64)
	}
	if l.MoveTime > 0 {
		b = append(b, "\nst "...)
		b = strconv.AppendFloat(b, l.MoveTime.Seconds(), 'f', -1, 64)
	}
	if l.Depth > 0 {
		b = append(b, "\nsd "...)
		b = strconv.AppendInt(b, int64(l.Depth), 10)
	}
	if l.Nodes > 0 {
		if x.x.Features["nps"] != "1" {
			return b, fmt.Errorf("%w: engine %s cannot search a fixed number of nodes (no `feature nps=1`)", ErrUnsupport, x.cfg.label())
		}
		// CECP: with nps set, the engine counts nodes as time; one
		// second per move is then a node budget.
		b = append(b, "\nnps "...)
		b = strconv.AppendInt(b, l.Nodes, 10)
		if !l.HasClock() && l.MoveTime == 0 {
			b = append(b, "\nst 1"...)
		}
	}
	return b, nil
}

// Quit sends quit and waits a moment for the process to exit.
func (x *XboardPlayer) Quit() error {
	if x == nil || x.x == nil {
		return nil
	}
	x.x.Quit("quit", time.Second)
	return nil
}

var _ Player = (*XboardPlayer)(nil)
