package epd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

// Limit is how long each position is searched: exactly one field is set.
type Limit struct {
	MoveTime time.Duration
	Nodes    int64
	Depth    int
}

// Bounds of a limit (a submitter's number becomes a search's length).
const (
	MaxMoveTime = 10 * time.Minute
	MaxNodes    = 10_000_000_000
	MaxDepth    = 100
)

// ParseLimit reads "movetime=MS", "nodes=N" or "depth=D".
func ParseLimit(s string) (Limit, error) {
	key, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return Limit{}, fmt.Errorf("--each %q: want movetime=MS, nodes=N or depth=D", s)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
	bad := func(max int64) error {
		return fmt.Errorf("--each %s=%q: want a whole number from 1 to %d", key, val, max)
	}
	switch strings.TrimSpace(key) {
	case "movetime":
		if err != nil || n < 1 || n > MaxMoveTime.Milliseconds() {
			return Limit{}, bad(MaxMoveTime.Milliseconds())
		}
		return Limit{MoveTime: time.Duration(n) * time.Millisecond}, nil
	case "nodes":
		if err != nil || n < 1 || n > MaxNodes {
			return Limit{}, bad(MaxNodes)
		}
		return Limit{Nodes: n}, nil
	case "depth":
		if err != nil || n < 1 || n > MaxDepth {
			return Limit{}, bad(MaxDepth)
		}
		return Limit{Depth: int(n)}, nil
	}
	return Limit{}, fmt.Errorf("--each %q: unknown limit %q: want movetime=MS, nodes=N or depth=D", s, key)
}

// Validate reports a limit that is not exactly one field in range.
func (l Limit) Validate() error {
	set := 0
	for _, on := range []bool{l.MoveTime != 0, l.Nodes != 0, l.Depth != 0} {
		if on {
			set++
		}
	}
	switch {
	case set != 1:
		return fmt.Errorf("limit: exactly one of movetime, nodes and depth must be set, got %d", set)
	case l.MoveTime < 0 || l.MoveTime > MaxMoveTime || l.MoveTime%time.Millisecond != 0:
		return fmt.Errorf("limit: movetime %v: want whole milliseconds from 1 ms to %v", l.MoveTime, MaxMoveTime)
	case l.Nodes < 0 || l.Nodes > MaxNodes:
		return fmt.Errorf("limit: nodes %d: want 1 to %d", l.Nodes, MaxNodes)
	case l.Depth < 0 || l.Depth > MaxDepth:
		return fmt.Errorf("limit: depth %d: want 1 to %d", l.Depth, MaxDepth)
	}
	return nil
}

// String is the limit as ParseLimit reads it.
func (l Limit) String() string {
	switch {
	case l.MoveTime > 0:
		return "movetime=" + strconv.FormatInt(l.MoveTime.Milliseconds(), 10)
	case l.Nodes > 0:
		return "nodes=" + strconv.FormatInt(l.Nodes, 10)
	}
	return "depth=" + strconv.Itoa(l.Depth)
}

func (l Limit) match() match.Limits {
	return match.Limits{MoveTime: l.MoveTime, Nodes: l.Nodes, Depth: l.Depth}
}

// searchTimeout is when a search that has not answered is a hang: the
// move time and a margin, or, at nodes or depth, a bound no sane search of
// one position reaches.
func (l Limit) searchTimeout() time.Duration {
	if l.MoveTime > 0 {
		return l.MoveTime + 5*time.Second + l.MoveTime/4
	}
	return 10 * time.Minute
}

// Result is one engine's search of one position.
type Result struct {
	Engine   int // index of the engine
	Position int // index into the suite's positions
	Solved   bool
	Move     string // the engine's move, as it wrote it ("" when none)
	// When solved: the engine's time and depth at the first report from
	// which its pv's first move stayed a solving move to the end (the
	// final report's when no pv report shows it).
	SolveTime  time.Duration
	SolveDepth int
	Nodes      int64
	Depth      int
	HasScore   bool
	Score      match.Score
	Elapsed    time.Duration // wall time of the search, measured here
	Error      string        // why the engine gave no move (crash, hang)
}

// solveWatch follows the pv reports of one search: since is the first
// report of the current run of solving pv moves (nil while the latest
// report's move does not solve).
type solveWatch struct {
	pos   *Position
	since *match.Info
}

func (w *solveWatch) report(info match.Info, pvMove string) {
	if !w.pos.SolvesUCI(pvMove) {
		w.since = nil
		return
	}
	if w.since == nil {
		i := info
		w.since = &i
	}
}

// Solve searches one position with p under limit. A player is reused
// position after position: NewGame before each clears its hash, so every
// position is searched as the first (and the embedded engine's results at
// nodes=N on one thread are the same every run). An engine failure (crash,
// hang, no move) is the position's result, unsolved with Error set; the
// player restarts at the next NewGame. Only a cancelled ctx is an error.
func Solve(ctx context.Context, p match.Player, pos *Position, limit Limit) (Result, error) {
	var r Result
	if err := p.NewGame(ctx, pos.Chess960); err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Error = err.Error()
		return r, nil
	}
	w := &solveWatch{pos: pos}
	req := &match.ThinkRequest{
		StartFEN: pos.FEN,
		Chess960: pos.Chess960,
		Limits:   limit.match(),
		White:    pos.pos.SideToMove() == engine.White,
		Timeout:  limit.searchTimeout(),
		OnInfo:   w.report,
	}
	rep, err := p.Think(ctx, req)
	r.Elapsed = rep.Elapsed
	r.Nodes, r.Depth, r.HasScore, r.Score = rep.Info.Nodes, rep.Info.Depth, rep.Info.HasScore, rep.Info.Score
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, match.ErrStopped) {
			return r, fmt.Errorf("position %s: %w", pos.ID, context.Canceled)
		}
		r.Error = err.Error()
		return r, nil
	}
	r.Move = rep.Move
	r.Solved = pos.SolvesUCI(rep.Move)
	if r.Solved {
		r.SolveTime, r.SolveDepth = rep.Info.Time, rep.Info.Depth
		if r.SolveTime == 0 {
			r.SolveTime = rep.Elapsed
		}
		if w.since != nil {
			r.SolveTime, r.SolveDepth = w.since.Time, w.since.Depth
		}
	}
	return r, nil
}
