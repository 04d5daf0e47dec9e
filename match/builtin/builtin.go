// Package builtin is the embedded engine as a match player: no process, no
// protocol, the same search `arbiter uci` runs. It joins the chess engine
// and the match library, which know nothing of each other; programs that
// play the builtin engine hand New to the match runner (MatchConfig.Builtin)
// or to the worker (worker.Config.Builtin).
package builtin

import (
	"context"
	"fmt"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/engine/uci"
	"github.com/arbiter-chess/arbiter/match"
)

var _ match.BuiltinFactory = New

// Player is the embedded engine as a match.Player.
type Player struct {
	name     string
	eng      *search.Engine
	chess960 bool
}

// New creates an engine with the given option overrides (UCI option names,
// e.g. "Hash", "Threads", "RFPMargin"); an unknown option or an
// out-of-range value is an error that names it.
func New(name string, options map[string]string) (match.Player, error) {
	e, err := search.NewEngine(options)
	if err != nil {
		return nil, fmt.Errorf("engine %q: %w", name, err)
	}
	return &Player{name: name, eng: e}, nil
}

// Engine returns the underlying engine.
func (b *Player) Engine() *search.Engine { return b.eng }

// Name is the player's name.
func (b *Player) Name() string { return b.name }

// EngineID is what the embedded engine calls itself over UCI: a tournament
// names a builtin engine given without a name after it.
func (b *Player) EngineID() string { return uci.Name }

// NewGame clears the hash and the move-ordering tables.
func (b *Player) NewGame(ctx context.Context, chess960 bool) error {
	b.chess960 = chess960
	b.eng.NewGame()
	return nil
}

// Think replays the game and searches under the request's limits.
func (b *Player) Think(ctx context.Context, req *match.ThinkRequest) (match.Reply, error) {
	t0 := time.Now()
	pos := engine.StartPosition()
	if req.StartFEN != "" {
		p, err := engine.ParseFEN(req.StartFEN)
		if err != nil {
			return match.Reply{}, fmt.Errorf("%w: %v", match.ErrProtocol, err)
		}
		pos = p
	}
	if req.Chess960 || b.chess960 {
		pos.SetChess960(true)
	}
	history := make([]uint64, 0, len(req.Moves))
	for _, mv := range req.Moves {
		m, err := pos.ParseUCIMove(mv)
		if err != nil {
			return match.Reply{}, fmt.Errorf("%w: %v", match.ErrProtocol, err)
		}
		history = append(history, pos.Key())
		pos.MakeMove(m)
	}
	l := req.Limits
	lim := search.Limits{Depth: l.Depth, Nodes: l.Nodes, MoveTime: l.MoveTime}
	if l.HasClock() {
		lim.TimeSet = true
		lim.Time = req.Time
		lim.Inc = req.Inc
		lim.MovesToGo = req.MovesToGo
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	if req.OnInfo != nil {
		b.eng.OnInfo = func(i search.Info) {
			if len(i.PV) > 0 {
				req.OnInfo(replyInfo(i), pos.UCIMove(i.PV[0]))
			}
		}
		defer func() { b.eng.OnInfo = nil }()
	}
	m, info := b.eng.Go(ctx, pos, history, lim)
	rep := match.Reply{Elapsed: time.Since(t0)}
	if m == engine.NullMove {
		return rep, match.ErrNoBestmove
	}
	rep.Move = pos.UCIMove(m)
	rep.Info = replyInfo(info)
	return rep, nil
}

// replyInfo is a search report as the match library reports one.
func replyInfo(info search.Info) match.Info {
	r := match.Info{
		HasScore: info.Depth > 0,
		Score:    match.Score{CP: info.Score, Mate: info.Mate},
		Depth:    info.Depth,
		SelDepth: info.SelDepth,
		Nodes:    info.Nodes,
		Time:     info.Time,
	}
	if info.Mate != 0 {
		r.Score.CP = 0
	}
	return r
}

// Quit releases nothing: the engine is garbage-collected with the player.
func (b *Player) Quit() error { return nil }
