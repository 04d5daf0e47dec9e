package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// uciEngine drives one UCI process for perft: "send, read lines until the
// total, or kill at the deadline" (the process layer is engineproc's).
//
// Invariants: after a timeout, crash or garbage the process is killed and
// the next query starts a fresh one, so one bad position never poisons the
// next; p is nil exactly when no process runs.
type uciEngine struct {
	spec    EngineSpec
	timeout time.Duration

	mu     sync.Mutex // one query at a time
	p      *engineproc.Proc
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
	if e.p != nil {
		err.Stderr = e.p.Stderr()
	}
	e.kill()
	return err
}

func (e *uciEngine) start(ctx context.Context) error {
	p, err := engineproc.Start(engineproc.Config{Path: e.spec.Cmd, Args: e.spec.Args, Dir: e.spec.Dir, StderrTail: 2048})
	if err != nil {
		return &EngineError{Engine: e.name, Kind: "start", Msg: err.Error()}
	}
	e.p = p
	e.cur960 = false
	p.Watch(ctx)
	defer p.Unwatch()

	deadline := time.Now().Add(max(startupTimeout, e.timeout))
	if err := p.WriteLine("uci"); err != nil {
		return e.fail(nil, "start", err.Error())
	}
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			return e.fail(nil, "start", "waiting for uciok: "+err.Error())
		}
		f := strings.Fields(string(line))
		switch {
		case len(f) >= 3 && f[0] == "id" && f[1] == "name":
			// Both: the engine's own name, and which command it was.
			e.name = strings.Join(f[2:], " ") + " [" + e.spec.String() + "]"
		case len(f) >= 3 && f[0] == "option" && f[1] == "name" && f[2] == "UCI_Chess960":
			e.has960 = true
		}
		if len(f) == 1 && f[0] == "uciok" {
			break
		}
	}
	for _, o := range e.spec.Options {
		if err := p.WriteLine("setoption name " + o.Name + " value " + o.Value); err != nil {
			return e.fail(nil, "start", err.Error())
		}
	}
	return e.ready(ctx, nil, deadline)
}

// ready sends isready and waits for readyok.
func (e *uciEngine) ready(ctx context.Context, q *Query, deadline time.Time) error {
	if err := e.p.WriteLine("isready"); err != nil {
		return e.fail(q, "crash", err.Error())
	}
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			kind := "crash"
			if errors.Is(err, engineproc.ErrTimeout) {
				kind = "timeout"
			}
			return e.fail(q, kind, "waiting for readyok: "+err.Error())
		}
		if strings.TrimSpace(string(line)) == "readyok" {
			return nil
		}
	}
}

// read returns the next line, or an error at the deadline
// (engineproc.ErrTimeout), on cancellation (ctx.Err()) or at the end of the
// engine's output (how it exited).
func (e *uciEngine) read(ctx context.Context, deadline time.Time) ([]byte, error) {
	line, err := e.p.ReadLine(deadline)
	switch {
	case err == nil:
		return line, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, engineproc.ErrEOF):
		e.p.WaitExit(100 * time.Millisecond)
		return nil, errors.New("the engine " + e.p.Exit().String())
	}
	return nil, err
}

// kill ends the process group; the next query starts a new process.
func (e *uciEngine) kill() {
	if e.p == nil {
		return
	}
	e.p.Stop("", 0)
	e.p = nil
}

// Divide runs `position fen ... moves ...` and `go perft N` and reads the
// divide lines up to the total.
func (e *uciEngine) Divide(ctx context.Context, q Query) (Divide, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if q.Depth < 1 {
		return Divide{}, fmt.Errorf("engine %s: depth %d: want at least 1", e.name, q.Depth)
	}
	if e.p == nil {
		if err := e.start(ctx); err != nil {
			return Divide{}, err
		}
	}
	// Cancelling the query kills the engine (it may be deep in a perft).
	e.p.Watch(ctx)
	defer func() {
		if e.p != nil {
			e.p.Unwatch()
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
		if err := e.p.WriteLine(fmt.Sprintf("setoption name UCI_Chess960 value %t", q.Chess960)); err != nil {
			return Divide{}, e.fail(&q, "crash", err.Error())
		}
		e.cur960 = q.Chess960
		if err := e.ready(ctx, &q, deadline); err != nil {
			return Divide{}, err
		}
	}
	pos := "position fen " + q.FEN
	if len(q.Moves) > 0 {
		pos += " moves " + strings.Join(q.Moves, " ")
	}
	if err := e.p.WriteLine(pos + "\n" + fmt.Sprintf("go perft %d", q.Depth)); err != nil {
		return Divide{}, e.fail(&q, "crash", err.Error())
	}
	var p divideParser
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			switch {
			case errors.Is(err, engineproc.ErrTimeout):
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
	if e.p != nil {
		e.p.Stop("quit", time.Second)
		e.p = nil
	}
	return nil
}
