package match

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// XboardPlayer drives an xboard (CECP v2) engine.
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
	p        *proc
	features map[string]string
	options  map[string]string // declared option name -> type ("-spin", ...)
	chess960 bool
	limits   Limits
	levelSet bool
	restarts int // engine processes started after the first one

	sentFEN string
	sentN   int
	ping    int
	buf     []byte
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
func (x *XboardPlayer) Feature(name string) string { return x.features[name] }

// EngineID is the engine's own name (`feature myname`), "" if it gave none.
func (x *XboardPlayer) EngineID() string { return x.features["myname"] }

// Restarts counts the engine processes started after the first (after a
// crash or a hang): the game loop records each as an incident.
func (x *XboardPlayer) Restarts() int { return x.restarts }

func (x *XboardPlayer) start() error {
	p, err := startProc(&x.cfg)
	if err != nil {
		return fmt.Errorf("engine %s: %w", x.cfg.label(), err)
	}
	x.p = p
	x.features = map[string]string{}
	x.options = map[string]string{}
	x.sentN = -1
	fail := func(format string, args ...any) error {
		p.kill()
		return fmt.Errorf("engine %s (%s): %w: %s", x.cfg.label(), x.cfg.Cmd, ErrStartup, fmt.Sprintf(format, args...))
	}
	if err := p.sendString("xboard\nprotover 2"); err != nil {
		return fail("%v", err)
	}
	// Read features until done=1. Protocol-1 engines (no features) are not
	// supported: every xboard engine in Debian speaks protocol 2.
	p.beginSearch(x.cfg.startTimeout(), "", 0, false)
	var seen protoClues
	for done := false; !done; {
		line, err := p.readSearch()
		if err != nil {
			return fail("no `feature done=1` within %v (%v)%s", x.cfg.startTimeout(), err, seen.xboardHint())
		}
		seen.note(line)
		if !hasWord(line, "feature") {
			continue
		}
		for _, kv := range parseFeatures(string(line)) {
			k, v := kv[0], kv[1]
			switch k {
			case "done":
				done = v == "1"
				continue
			case "option":
				if name, typ, ok := parseXboardOption(v); ok {
					x.options[name] = typ
				}
			}
			if k != "option" {
				x.features[k] = v
			}
			reply := "accepted "
			if k == "san" && v == "1" {
				reply = "rejected " // we send and want coordinate moves
			}
			p.sendString(reply + k)
		}
	}
	for _, o := range x.cfg.Options {
		typ, ok := x.options[o.Name]
		if !ok {
			names := make([]string, 0, len(x.options))
			for n := range x.options {
				names = append(names, n)
			}
			p.kill()
			return fmt.Errorf("engine %s: option %q: the engine has no such option (it has: %s)", x.cfg.label(), o.Name, strings.Join(names, ", "))
		}
		if typ == "-spin" || typ == "-slider" {
			if _, err := strconv.Atoi(o.Value); err != nil {
				p.kill()
				return fmt.Errorf("engine %s: option %q=%q: want an integer", x.cfg.label(), o.Name, o.Value)
			}
		}
		p.sendString("option " + o.Name + "=" + o.Value)
	}
	if err := x.sync(); err != nil {
		return fail("%v", err)
	}
	return nil
}

// parseFeatures splits `feature a=1 b="x y"` into pairs.
func parseFeatures(s string) [][2]string {
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

// parseXboardOption reads `Name -type ...` from an option feature.
func parseXboardOption(v string) (name, typ string, ok bool) {
	i := strings.Index(v, " -")
	if i <= 0 {
		return "", "", false
	}
	name = strings.TrimSpace(v[:i])
	typ, _, _ = strings.Cut(v[i+1:], " ")
	return name, typ, true
}

// sync waits until the engine has read everything sent (ping/pong); an
// engine without ping gets no guarantee, as in every GUI.
func (x *XboardPlayer) sync() error {
	if x.features["ping"] != "1" {
		return nil
	}
	x.ping++
	n := strconv.Itoa(x.ping)
	if err := x.p.sendString("ping " + n); err != nil {
		return err
	}
	err := x.p.waitFor("pong", x.cfg.readyTimeout(), nil)
	if err != nil {
		return fmt.Errorf("no pong within %v: %w", x.cfg.readyTimeout(), err)
	}
	return nil
}

// NewGame restarts a dead engine and resets the board.
func (x *XboardPlayer) NewGame(ctx context.Context, chess960 bool) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if !x.p.alive() {
			x.p.kill()
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
		x.p.kill()
	}
	return fmt.Errorf("engine %s: new game: %w", x.cfg.label(), err)
}

func (x *XboardPlayer) newGame(chess960 bool) error {
	if chess960 && !strings.Contains(","+x.features["variants"]+",", ",fischerandom,") {
		return fmt.Errorf("engine %s: %w: Chess960 (no fischerandom variant)", x.cfg.label(), ErrUnsupport)
	}
	cmds := "new\nforce\neasy\npost"
	if chess960 {
		cmds += "\nvariant fischerandom"
	}
	if err := x.p.sendString(cmds); err != nil {
		return err
	}
	x.chess960 = chess960
	x.sentN = -1
	x.levelSet = false
	return x.sync()
}

// Think sends the new moves, the clocks and go, and reads until move.
func (x *XboardPlayer) Think(ctx context.Context, req *ThinkRequest) (Reply, error) {
	var r Reply
	if !x.p.alive() {
		return r, ErrCrash
	}
	b := append(x.buf[:0], "force"...)
	if x.sentN < 0 || x.sentFEN != req.StartFEN || len(req.Moves) < x.sentN {
		if x.sentN >= 0 {
			b = append(b, "\nnew\nforce"...)
		}
		if req.StartFEN != "" {
			if x.features["setboard"] != "1" {
				return r, fmt.Errorf("%w: engine %s has no setboard: use openings that are move sequences from the start position (PGN)", ErrUnsupport, x.cfg.label())
			}
			b = append(b, "\nsetboard "...)
			b = append(b, req.StartFEN...)
		}
		x.sentFEN, x.sentN = req.StartFEN, 0
	}
	usermove := x.features["usermove"] == "1"
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
	if err := x.p.send(b); err != nil {
		x.p.kill()
		return r, ErrCrash
	}
	t0 := time.Now()
	// Out of time, "?" (move now) is sent, then the engine gets the grace:
	// see UCIPlayer.Think.
	x.p.beginSearch(req.Timeout, "?", x.cfg.stopGrace(), req.Limits.Clockless())
	x.p.watchContext(ctx)
	for {
		line, err := x.p.readSearch()
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
			parseXboardPost(line, &r.Info)
			continue
		}
		var mv []byte
		switch {
		case hasWord(line, "move"):
			_, rest := nextField(line)
			mv, _ = nextField(rest)
		case bytes.HasPrefix(line, []byte("My move is")):
			_, rest, _ := bytes.Cut(line, []byte(":"))
			mv, _ = nextField(rest)
		case hasWord(line, "resign"):
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
		x.p.endSearch(r.Elapsed)
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
		if x.features["nps"] != "1" {
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

// parseXboardPost reads thinking output: "depth score time(cs) nodes pv...".
func parseXboardPost(line []byte, inf *Info) {
	var f [4][]byte
	rest := line
	for i := range f {
		f[i], rest = nextField(rest)
	}
	depth, ok1 := atoi(bytes.TrimRight(f[0], ".&"))
	score, ok2 := atoi(f[1])
	cs, ok3 := atoi(f[2])
	nodes, ok4 := atoi(f[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return
	}
	inf.Depth, inf.Nodes, inf.Time = int(depth), nodes, time.Duration(cs)*10*time.Millisecond
	inf.HasScore = true
	// CECP mate convention: ±100000 ± distance in plies or moves.
	switch {
	case score >= 100000-1000:
		inf.Score = Score{Mate: int(max((100000-score+1)/2, 1))}
	case score <= -100000+1000:
		inf.Score = Score{Mate: -int(max((100000+score+1)/2, 1))}
	default:
		inf.Score = Score{CP: int(score)}
	}
}

// Quit sends quit and waits a moment for the process to exit.
func (x *XboardPlayer) Quit() error {
	if x == nil || x.p == nil {
		return nil
	}
	x.p.quit("quit", time.Second)
	return nil
}

var _ Player = (*XboardPlayer)(nil)
