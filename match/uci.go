package match

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/protocol"
)

// UCIPlayer drives a UCI engine process through enginehost/protocol.
//
// Invariants:
//   - After ErrCrash or ErrHang the process is killed; NewGame restarts it.
//   - info is the search being read; its PV buffer is reused move after
//     move (only its numbers reach the Reply).
type UCIPlayer struct {
	cfg      EngineConfig
	u        *protocol.UCI
	chess960 bool
	restarts int // engine processes started after the first one
	info     protocol.Info
	g        protocol.Go
}

// NewUCIPlayer starts the engine and sets its options.
func NewUCIPlayer(cfg EngineConfig) (*UCIPlayer, error) {
	u := &UCIPlayer{cfg: cfg}
	if err := u.start(); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *UCIPlayer) Name() string { return u.cfg.Name }

// EngineID is the engine's own name ("id name").
func (u *UCIPlayer) EngineID() string { return u.u.ID.Name }

// EngineAuthor is the engine's author ("id author").
func (u *UCIPlayer) EngineAuthor() string { return u.u.ID.Author }

// Restarts counts the engine processes started after the first (after a
// crash or a hang): the game loop records each as an incident.
func (u *UCIPlayer) Restarts() int { return u.restarts }

func (u *UCIPlayer) start() error {
	c, err := protocol.Start(engineproc.Config{Path: u.cfg.Cmd, Args: u.cfg.Args, Dir: u.cfg.Dir})
	if err != nil {
		return fmt.Errorf("engine %s: %w", u.cfg.label(), err)
	}
	u.u = protocol.NewUCI(c)
	u.chess960 = false
	if err := u.u.Handshake(u.cfg.startTimeout()); err != nil {
		c.Kill()
		return fmt.Errorf("engine %s (%s): %w", u.cfg.label(), u.cfg.Cmd, err)
	}
	opts := u.cfg.Options
	if u.cfg.ChooseOptions != nil {
		opts = u.cfg.ChooseOptions(u.declared(), slices.Clone(u.cfg.Options))
	}
	for _, o := range opts {
		set := u.u.SetOption
		if u.cfg.ChooseOptions != nil {
			set = u.u.SetOptionUnchecked // chosen knowing what the engine declared
		}
		if err := set(o.Name, o.Value); err != nil {
			c.Kill()
			return fmt.Errorf("engine %s: %w", u.cfg.label(), err)
		}
	}
	if err := u.u.IsReady(u.cfg.readyTimeout()); err != nil {
		c.Kill()
		return fmt.Errorf("engine %s: %w: %v", u.cfg.label(), ErrStartup, err)
	}
	return nil
}

// declared is every option the engine declared, as written.
func (u *UCIPlayer) declared() []DeclaredOption {
	list := u.u.Options.List()
	out := make([]DeclaredOption, len(list))
	for i, o := range list {
		out[i] = DeclaredOption{Name: o.Name, Type: string(o.Type), Default: o.Default, Min: o.MinText, Max: o.MaxText,
			Vars: slices.Clone(o.Vars)}
	}
	return out
}

// NewGame restarts a dead engine, switches Chess960, and sends ucinewgame.
// An engine that does not answer isready is restarted once.
func (u *UCIPlayer) NewGame(ctx context.Context, chess960 bool) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if !u.u.Alive() {
			u.u.Kill()
			if err = u.start(); err != nil {
				continue
			}
			u.restarts++
		}
		if err = u.newGame(chess960); err == nil {
			return nil
		}
		u.u.Kill()
	}
	return fmt.Errorf("engine %s: new game: %w", u.cfg.label(), err)
}

func (u *UCIPlayer) newGame(chess960 bool) error {
	if chess960 != u.chess960 {
		if _, ok := u.u.Options.Lookup("UCI_Chess960"); !ok && chess960 {
			return fmt.Errorf("%w: no UCI_Chess960 option", ErrUnsupport)
		}
		if err := u.u.SetOptionUnchecked("UCI_Chess960", strconv.FormatBool(chess960)); err != nil {
			return err
		}
		u.chess960 = chess960
	}
	if err := u.u.NewGame(); err != nil {
		return err
	}
	return u.u.IsReady(u.cfg.readyTimeout())
}

// Think sends position and go, and reads until bestmove.
func (u *UCIPlayer) Think(ctx context.Context, req *ThinkRequest) (Reply, error) {
	var r Reply
	if !u.u.Alive() {
		return r, ErrCrash
	}
	u.u.SetPosition(req.StartFEN, req.Moves)
	l := req.Limits
	u.g = protocol.Go{Clock: l.HasClock(), Time: req.Time, Inc: req.Inc, MovesToGo: req.MovesToGo,
		Nodes: l.Nodes, Depth: l.Depth, MoveTime: l.MoveTime}
	// position and go in one write: one system call per move.
	if err := u.u.Go(&u.g); err != nil {
		u.u.Kill()
		return r, ErrCrash
	}
	t0 := time.Now()
	// Out of time, stop is sent; an engine that does not answer within the
	// grace is hung (protocol.Conn.ReadSearch).
	u.u.BeginSearch(req.Timeout, "stop", u.cfg.stopGrace(), l.Clockless())
	u.u.Watch(ctx)
	u.info = protocol.Info{PV: u.info.PV[:0]}
	var onPV func(*protocol.Info)
	if req.OnInfo != nil {
		onPV = func(in *protocol.Info) { req.OnInfo(infoOf(in), string(protocol.FirstMove(in.PV))) }
	}
	u.u.OnInfo = req.OnInfoLine
	mv, _, err := u.u.ReadBestmove(&u.info, onPV)
	u.u.OnInfo = nil
	r.Elapsed = time.Since(t0)
	r.Info = infoOf(&u.info)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, protocol.ErrNoMove) {
			return r, ErrStopped
		}
		return r, err
	}
	r.Move = string(mv)
	u.u.EndSearch(r.Elapsed)
	return r, nil
}

// infoOf is what the game loop keeps of a search's report.
func infoOf(in *protocol.Info) Info {
	return Info{HasScore: in.HasScore, Score: Score{CP: in.Score.CP, Mate: in.Score.Mate}, Depth: in.Depth,
		SelDepth: in.SelDepth, Nodes: in.Nodes, Time: in.Time}
}

// Quit sends quit and waits a moment for the process to exit.
func (u *UCIPlayer) Quit() error {
	if u == nil || u.u == nil {
		return nil
	}
	u.u.Quit("quit", time.Second)
	return nil
}

var _ Player = (*UCIPlayer)(nil)
