package match

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// UCIPlayer drives a UCI engine process.
//
// Invariants:
//   - posBuf holds the last `position` command sent, for posFEN and the first
//     posN moves; the next command appends only new moves (posN < 0: rebuild).
//   - After ErrCrash or ErrHang the process is killed; NewGame restarts it.
type UCIPlayer struct {
	cfg      EngineConfig
	p        *proc
	id       string               // "id name" of the engine
	declared map[string]uciOption // options the engine declared, by lower-case name
	// declaredInOrder: every option line, as declared (ChooseOptions).
	declaredInOrder []DeclaredOption
	chess960        bool
	restarts        int // engine processes started after the first one

	posBuf []byte
	posFEN string
	posN   int
	goBuf  []byte
}

type uciOption struct {
	name, typ string
	min, max  int64
	hasRange  bool
	vars      []string
	// As written: the default, min and max.
	def, minText, maxText string
}

// NewUCIPlayer starts the engine and sets its options.
func NewUCIPlayer(cfg EngineConfig) (*UCIPlayer, error) {
	u := &UCIPlayer{cfg: cfg, posBuf: make([]byte, 0, 2048), goBuf: make([]byte, 0, 128), posN: -1}
	if err := u.start(); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *UCIPlayer) Name() string { return u.cfg.Name }

// EngineID is the engine's own name ("id name").
func (u *UCIPlayer) EngineID() string { return u.id }

// Restarts counts the engine processes started after the first (after a
// crash or a hang): the game loop records each as an incident.
func (u *UCIPlayer) Restarts() int { return u.restarts }

func (u *UCIPlayer) start() error {
	p, err := startProc(&u.cfg)
	if err != nil {
		return fmt.Errorf("engine %s: %w", u.cfg.label(), err)
	}
	u.p = p
	u.chess960 = false
	u.posN = -1
	u.declared = make(map[string]uciOption)
	u.declaredInOrder = nil
	if err := p.sendString("uci"); err != nil {
		p.kill()
		return fmt.Errorf("engine %s: %w: %v", u.cfg.label(), ErrStartup, err)
	}
	var seen protoClues
	err = p.waitFor("uciok", u.cfg.startTimeout(), func(line []byte) {
		seen.note(line)
		s := strings.TrimSpace(string(line))
		if rest, ok := strings.CutPrefix(s, "id name "); ok {
			u.id = strings.TrimSpace(rest)
		} else if strings.HasPrefix(s, "option ") {
			if o, ok := parseUCIOption(s); ok {
				u.declared[strings.ToLower(o.name)] = o
				u.declaredInOrder = append(u.declaredInOrder, DeclaredOption{Name: o.name, Type: o.typ,
					Default: o.def, Min: o.minText, Max: o.maxText, Vars: o.vars})
			}
		}
	})
	if err != nil {
		p.kill()
		return fmt.Errorf("engine %s (%s): %w: no uciok within %v (%v)%s", u.cfg.label(), u.cfg.Cmd, ErrStartup, u.cfg.startTimeout(), err, seen.uciHint())
	}
	opts := u.cfg.Options
	if u.cfg.ChooseOptions != nil {
		opts = u.cfg.ChooseOptions(slices.Clone(u.declaredInOrder), slices.Clone(u.cfg.Options))
	}
	for _, o := range opts {
		if u.cfg.ChooseOptions == nil {
			if err := u.checkOption(o); err != nil {
				p.kill()
				return err
			}
		}
		if err := p.sendString("setoption name " + o.Name + " value " + o.Value); err != nil {
			p.kill()
			return fmt.Errorf("engine %s: %w", u.cfg.label(), err)
		}
	}
	if err := u.sync(); err != nil {
		p.kill()
		return fmt.Errorf("engine %s: %w: %v", u.cfg.label(), ErrStartup, err)
	}
	return nil
}

// checkOption refuses an option the engine did not declare or a value out of its range.
func (u *UCIPlayer) checkOption(o Option) error {
	d, ok := u.declared[strings.ToLower(o.Name)]
	if !ok {
		names := make([]string, 0, len(u.declared))
		for _, d := range u.declared {
			names = append(names, d.name)
		}
		return fmt.Errorf("engine %s: option %q: the engine has no such option (it has: %s)", u.cfg.label(), o.Name, strings.Join(names, ", "))
	}
	switch d.typ {
	case "spin":
		n, err := strconv.ParseInt(o.Value, 10, 64)
		if err != nil {
			return fmt.Errorf("engine %s: option %q=%q: want an integer", u.cfg.label(), o.Name, o.Value)
		}
		if d.hasRange && (n < d.min || n > d.max) {
			return fmt.Errorf("engine %s: option %q=%d: out of range %d..%d", u.cfg.label(), o.Name, n, d.min, d.max)
		}
	case "check":
		if o.Value != "true" && o.Value != "false" {
			return fmt.Errorf("engine %s: option %q=%q: want true or false", u.cfg.label(), o.Name, o.Value)
		}
	case "combo":
		for _, v := range d.vars {
			if strings.EqualFold(v, o.Value) {
				return nil
			}
		}
		return fmt.Errorf("engine %s: option %q=%q: want one of %s", u.cfg.label(), o.Name, o.Value, strings.Join(d.vars, ", "))
	}
	return nil
}

// parseUCIOption reads "option name N type T [default D] [min A] [max B] [var V]...".
// Names and values may contain spaces, so keywords split the line.
func parseUCIOption(s string) (uciOption, bool) {
	f := strings.Fields(s)
	var o uciOption
	key := ""
	var val []string
	flush := func() {
		v := strings.Join(val, " ")
		switch key {
		case "name":
			o.name = v
		case "type":
			o.typ = v
		case "default":
			o.def = v
		case "min":
			o.min, _ = strconv.ParseInt(v, 10, 64)
			o.minText = v
			o.hasRange = true
		case "max":
			o.max, _ = strconv.ParseInt(v, 10, 64)
			o.maxText = v
		case "var":
			o.vars = append(o.vars, v)
		}
		val = val[:0]
	}
	for _, w := range f[1:] {
		switch w {
		case "name", "type", "default", "min", "max", "var":
			if !(key == "name" && w != "type") { // a name may contain keywords, up to "type"
				flush()
				key = w
				continue
			}
		}
		val = append(val, w)
	}
	flush()
	return o, o.name != ""
}

// sync sends isready and waits for readyok.
func (u *UCIPlayer) sync() error {
	if err := u.p.sendString("isready"); err != nil {
		return err
	}
	if err := u.p.waitFor("readyok", u.cfg.readyTimeout(), nil); err != nil {
		return fmt.Errorf("no readyok within %v: %w", u.cfg.readyTimeout(), err)
	}
	return nil
}

// NewGame restarts a dead engine, switches Chess960, and sends ucinewgame.
// An engine that does not answer isready is restarted once.
func (u *UCIPlayer) NewGame(ctx context.Context, chess960 bool) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if !u.p.alive() {
			u.p.kill()
			if err = u.start(); err != nil {
				continue
			}
			u.restarts++
		}
		if err = u.newGame(chess960); err == nil {
			return nil
		}
		u.p.kill()
	}
	return fmt.Errorf("engine %s: new game: %w", u.cfg.label(), err)
}

func (u *UCIPlayer) newGame(chess960 bool) error {
	if chess960 != u.chess960 {
		if _, ok := u.declared["uci_chess960"]; !ok && chess960 {
			return fmt.Errorf("%w: no UCI_Chess960 option", ErrUnsupport)
		}
		if err := u.p.sendString("setoption name UCI_Chess960 value " + strconv.FormatBool(chess960)); err != nil {
			return err
		}
		u.chess960 = chess960
	}
	u.posN = -1
	if err := u.p.sendString("ucinewgame"); err != nil {
		return err
	}
	return u.sync()
}

// Think sends position and go, and reads until bestmove.
func (u *UCIPlayer) Think(ctx context.Context, req *ThinkRequest) (Reply, error) {
	var r Reply
	if !u.p.alive() {
		return r, ErrCrash
	}
	u.buildPosition(req)
	u.buildGo(req)
	// position and go in one write: one system call per move.
	if err := u.p.send2(u.posBuf, u.goBuf); err != nil {
		u.p.kill()
		return r, ErrCrash
	}
	t0 := time.Now()
	// Out of time, stop is sent; an engine that does not answer within the
	// grace is hung (readSearch).
	u.p.beginSearch(req.Timeout, "stop", u.cfg.stopGrace(), req.Limits.Clockless())
	u.p.watchContext(ctx)
	for {
		line, err := u.p.readSearch()
		if err != nil {
			r.Elapsed = time.Since(t0)
			if ctx.Err() != nil {
				return r, ErrStopped
			}
			return r, err
		}
		if len(line) < 4 {
			continue
		}
		switch {
		case hasWord(line, "info"):
			parseUCIInfo(line, &r.Info)
			if req.OnInfo != nil {
				if mv := primaryPVMove(line); mv != nil {
					req.OnInfo(r.Info, string(mv))
				}
			}
		case hasWord(line, "bestmove"):
			r.Elapsed = time.Since(t0)
			_, rest := nextField(bytes.TrimLeft(line, " \t"))
			mv, _ := nextField(rest)
			if len(mv) == 0 || string(mv) == "(none)" || string(mv) == "0000" || string(mv) == "none" {
				return r, ErrNoBestmove
			}
			r.Move = string(mv)
			u.p.endSearch(r.Elapsed)
			return r, nil
		}
	}
}

func (u *UCIPlayer) buildPosition(req *ThinkRequest) {
	if u.posN < 0 || u.posFEN != req.StartFEN || len(req.Moves) < u.posN {
		b := u.posBuf[:0]
		if req.StartFEN == "" {
			b = append(b, "position startpos"...)
		} else {
			b = append(b, "position fen "...)
			b = append(b, req.StartFEN...)
		}
		u.posBuf, u.posFEN, u.posN = b, req.StartFEN, 0
	}
	for _, m := range req.Moves[u.posN:] {
		if u.posN == 0 {
			u.posBuf = append(u.posBuf, " moves"...)
		}
		u.posBuf = append(u.posBuf, ' ')
		u.posBuf = append(u.posBuf, m...)
		u.posN++
	}
}

func (u *UCIPlayer) buildGo(req *ThinkRequest) {
	b := append(u.goBuf[:0], "go"...)
	l := req.Limits
	if l.HasClock() {
		b = append(b, " wtime "...)
		b = strconv.AppendInt(b, max(req.Time[0].Milliseconds(), 1), 10)
		b = append(b, " btime "...)
		b = strconv.AppendInt(b, max(req.Time[1].Milliseconds(), 1), 10)
		if req.Inc[0] > 0 || req.Inc[1] > 0 {
			b = append(b, " winc "...)
			b = strconv.AppendInt(b, req.Inc[0].Milliseconds(), 10)
			b = append(b, " binc "...)
			b = strconv.AppendInt(b, req.Inc[1].Milliseconds(), 10)
		}
		if req.MovesToGo > 0 {
			b = append(b, " movestogo "...)
			b = strconv.AppendInt(b, int64(req.MovesToGo), 10)
		}
	}
	if l.Nodes > 0 {
		b = append(b, " nodes "...)
		b = strconv.AppendInt(b, l.Nodes, 10)
	}
	if l.Depth > 0 {
		b = append(b, " depth "...)
		b = strconv.AppendInt(b, int64(l.Depth), 10)
	}
	if l.MoveTime > 0 {
		b = append(b, " movetime "...)
		b = strconv.AppendInt(b, l.MoveTime.Milliseconds(), 10)
	}
	u.goBuf = b
}

// parseUCIInfo folds one info line into inf. Unknown tokens and garbage are
// skipped; lines for a second PV (multipv > 1) do not change the score.
func parseUCIInfo(line []byte, inf *Info) {
	_, rest := nextField(line) // "info"
	var (
		f         []byte
		cur       = *inf
		hasScore  bool
		score     Score
		secondary bool
	)
	for {
		f, rest = nextField(rest)
		if len(f) == 0 {
			break
		}
		switch string(f) {
		case "depth", "seldepth", "nodes", "time", "multipv":
			var v []byte
			v, rest = nextField(rest)
			n, ok := atoi(v)
			if !ok {
				continue
			}
			switch string(f) {
			case "depth":
				cur.Depth = int(n)
			case "seldepth":
				cur.SelDepth = int(n)
			case "nodes":
				cur.Nodes = n
			case "time":
				cur.Time = time.Duration(n) * time.Millisecond
			case "multipv":
				secondary = n > 1
			}
		case "score":
			var kind, v []byte
			kind, rest = nextField(rest)
			v, rest = nextField(rest)
			n, ok := atoi(v)
			if !ok {
				continue
			}
			switch string(kind) {
			case "cp":
				score, hasScore = Score{CP: int(n)}, true
			case "mate":
				if n == 0 { // "mate 0": the engine is mated; treat as being mated now
					n = -1
				}
				score, hasScore = Score{Mate: int(n)}, true
			}
		case "pv", "string", "refutation", "currline":
			rest = nil // the rest of the line is moves or text
		}
	}
	if secondary {
		return
	}
	if hasScore {
		cur.Score, cur.HasScore = score, true
	}
	*inf = cur
}

// primaryPVMove is the first move of an info line's pv, or nil when the
// line has none or reports a second pv (multipv > 1).
func primaryPVMove(line []byte) []byte {
	_, rest := nextField(line) // "info"
	var f []byte
	for {
		f, rest = nextField(rest)
		switch string(f) {
		case "":
			return nil
		case "string": // free text to the end of the line
			return nil
		case "multipv":
			var v []byte
			v, rest = nextField(rest)
			if n, ok := atoi(v); ok && n > 1 {
				return nil
			}
		case "pv":
			mv, _ := nextField(rest)
			if len(mv) == 0 {
				return nil
			}
			return mv
		}
	}
}

// Quit sends quit and waits a moment for the process to exit.
func (u *UCIPlayer) Quit() error {
	if u == nil || u.p == nil {
		return nil
	}
	u.p.quit("quit", time.Second)
	return nil
}

var _ Player = (*UCIPlayer)(nil)
