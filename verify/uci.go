package verify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/protocol"
)

// uciEngine drives one UCI process for perft: "send, read lines until the
// total, or kill at the deadline" (the process layer is engineproc's, the
// protocol enginehost/protocol's).
//
// Invariants: after a timeout, crash or garbage the process is killed and
// the next query starts a fresh one, so one bad position never poisons the
// next; u is nil exactly when no process runs.
type uciEngine struct {
	spec    EngineSpec
	timeout time.Duration

	mu     sync.Mutex // one query at a time
	u      *protocol.UCI
	name   string
	has960 bool
	cur960 bool
}

// startupTimeout bounds uci/uciok and isready/readyok.
const startupTimeout = 10 * time.Second

func openUCI(ctx context.Context, spec EngineSpec, timeout time.Duration) (*uciEngine, error) {
	e := &uciEngine{spec: spec, timeout: timeout, name: spec.String()}
	if err := e.start(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *uciEngine) Name() string { return e.name }

// fail kills the process and describes what went wrong with q.
func (e *uciEngine) fail(q *Query, kind, msg string) error {
	err := &EngineError{Engine: e.name, Query: q, Kind: kind, Msg: msg}
	if e.u != nil {
		err.Stderr = e.u.Proc().Stderr()
	}
	e.kill()
	return err
}

func (e *uciEngine) start(ctx context.Context) error {
	c, err := protocol.Start(engineproc.Config{Path: e.spec.Cmd, Args: e.spec.Args, Dir: e.spec.Dir, StderrTail: 2048})
	if err != nil {
		return &EngineError{Engine: e.name, Kind: "start", Msg: err.Error()}
	}
	e.u = protocol.NewUCI(c)
	e.cur960 = false
	c.Watch(ctx)
	defer c.Unwatch()

	wait := max(startupTimeout, e.timeout)
	if err := e.u.Handshake(wait); err != nil {
		if ctx.Err() != nil {
			return e.fail(nil, "start", "waiting for uciok: "+ctx.Err().Error())
		}
		return e.fail(nil, "start", err.Error())
	}
	if e.u.ID.Name != "" {
		// Both: the engine's own name, and which command it was.
		e.name = e.u.ID.Name + " [" + e.spec.String() + "]"
	}
	_, e.has960 = e.u.Options.Lookup("UCI_Chess960")
	for _, o := range e.spec.Options {
		if err := e.u.SetOptionUnchecked(o.Name, o.Value); err != nil {
			return e.fail(nil, "start", err.Error())
		}
	}
	return e.ready(ctx, nil, wait)
}

// ready sends isready and waits for readyok.
func (e *uciEngine) ready(ctx context.Context, q *Query, wait time.Duration) error {
	err := e.u.IsReady(wait)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return e.fail(q, "crash", "waiting for readyok: "+ctx.Err().Error())
	case errors.Is(err, protocol.ErrHang):
		return e.fail(q, "timeout", "waiting for readyok: "+err.Error())
	}
	return e.fail(q, "crash", "waiting for readyok: "+err.Error())
}

// read returns the next line, or an error at the deadline
// (protocol.ErrHang), on cancellation (ctx.Err()) or at the end of the
// engine's output (how it exited).
func (e *uciEngine) read(ctx context.Context, deadline time.Time) ([]byte, error) {
	line, err := e.u.ReadLine(deadline)
	switch {
	case err == nil:
		return line, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, protocol.ErrCrash):
		p := e.u.Proc()
		p.WaitExit(100 * time.Millisecond)
		return nil, errors.New("the engine " + p.Exit().String())
	}
	return nil, err
}

// kill ends the process group; the next query starts a new process.
func (e *uciEngine) kill() {
	if e.u == nil {
		return
	}
	e.u.Kill()
	e.u = nil
}

// Divide runs `position fen ... moves ...` and `go perft N` and reads the
// divide lines up to the total.
func (e *uciEngine) Divide(ctx context.Context, q Query) (Divide, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if q.Depth < 1 {
		return Divide{}, fmt.Errorf("engine %s: depth %d: want at least 1", e.name, q.Depth)
	}
	if e.u == nil {
		if err := e.start(ctx); err != nil {
			return Divide{}, err
		}
	}
	// Cancelling the query kills the engine (it may be deep in a perft).
	e.u.Watch(ctx)
	defer func() {
		if e.u != nil {
			e.u.Unwatch()
		}
	}()
	var deadline time.Time
	if e.timeout > 0 {
		deadline = time.Now().Add(e.timeout)
	}
	if q.Chess960 != e.cur960 {
		if q.Chess960 && !e.has960 {
			return Divide{}, &EngineError{Engine: e.name, Query: &q, Kind: "protocol", Msg: "the position is Chess960 but the engine has no UCI_Chess960 option"}
		}
		if err := e.u.SetOptionUnchecked("UCI_Chess960", strconv.FormatBool(q.Chess960)); err != nil {
			return Divide{}, e.fail(&q, "crash", err.Error())
		}
		e.cur960 = q.Chess960
		if err := e.ready(ctx, &q, time.Until(deadline)); err != nil {
			return Divide{}, err
		}
	}
	e.u.ForgetPosition() // each query is a position of its own
	e.u.SetPosition(q.FEN, q.Moves)
	if err := e.u.Go(&protocol.Go{Perft: q.Depth}); err != nil {
		return Divide{}, e.fail(&q, "crash", err.Error())
	}
	var p divideParser
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			switch {
			case errors.Is(err, protocol.ErrHang):
				return Divide{}, e.fail(&q, "timeout", fmt.Sprintf("no total after %v (killed)", e.timeout))
			case ctx.Err() != nil:
				e.kill()
				return Divide{}, ctx.Err()
			}
			return Divide{}, e.fail(&q, "crash", err.Error()+" before printing the total")
		}
		done, err := p.feed(string(line))
		if err != nil {
			return Divide{}, e.fail(&q, "garbage", err.Error())
		}
		if done {
			return p.d, nil
		}
	}
}

// Close asks the engine to quit, then kills it.
func (e *uciEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.u != nil {
		e.u.Quit("quit", time.Second)
		e.u = nil
	}
	return nil
}
