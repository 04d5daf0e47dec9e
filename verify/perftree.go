package verify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// perftreeEngine runs a script once per query the way perftree does:
//
//	./script DEPTH "FEN" "MOVES"
//
// (MOVES space-separated, empty at the root) and reads divide lines
// ("e2e4 20"), a blank line and the total. Extra args of the spec come
// before DEPTH, so one binary can serve as several scripts.
type perftreeEngine struct {
	spec    EngineSpec
	timeout time.Duration
}

func openPerftree(spec EngineSpec, timeout time.Duration) (*perftreeEngine, error) {
	if _, err := engineproc.LookPath(spec.Cmd, spec.Dir); err != nil {
		return nil, &EngineError{Engine: spec.String(), Kind: "start", Msg: err.Error()}
	}
	return &perftreeEngine{spec: spec, timeout: timeout}, nil
}

func (e *perftreeEngine) Name() string { return e.spec.String() }
func (e *perftreeEngine) Close() error { return nil }

// maxPerftreeOutput bounds what one run may print (a runaway script).
const maxPerftreeOutput = 16 << 20

func (e *perftreeEngine) Divide(ctx context.Context, q Query) (Divide, error) {
	if q.Depth < 1 {
		return Divide{}, fmt.Errorf("engine %s: depth %d: want at least 1", e.Name(), q.Depth)
	}
	args := append(append([]string(nil), e.spec.Args...), strconv.Itoa(q.Depth), q.FEN, strings.Join(q.Moves, " "))
	p, err := engineproc.Start(engineproc.Config{Path: e.spec.Cmd, Args: args, Dir: e.spec.Dir, StderrTail: 2048})
	if err != nil {
		return Divide{}, &EngineError{Engine: e.Name(), Query: &q, Kind: "start", Msg: err.Error()}
	}
	// The script's input is its arguments; a script that reads stdin gets EOF.
	p.CloseInput()
	p.Watch(ctx)
	var deadline time.Time
	if e.timeout > 0 {
		deadline = time.Now().Add(e.timeout)
	}
	fail := func(kind, msg string) error {
		stderr := p.Stderr()
		p.Stop("", 0)
		return &EngineError{Engine: e.Name(), Query: &q, Kind: kind, Msg: msg, Stderr: stderr}
	}
	var out strings.Builder
	for {
		line, err := p.ReadLine(deadline)
		if errors.Is(err, engineproc.ErrEOF) {
			break
		}
		switch {
		case ctx.Err() != nil:
			p.Stop("", 0)
			return Divide{}, ctx.Err()
		case errors.Is(err, engineproc.ErrTimeout):
			return Divide{}, fail("timeout", fmt.Sprintf("no answer after %v (killed)", e.timeout))
		case err != nil:
			return Divide{}, fail("crash", err.Error())
		case out.Len() > maxPerftreeOutput:
			return Divide{}, fail("garbage", fmt.Sprintf("more than %d MB of output", maxPerftreeOutput>>20))
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	// The output is complete; the script's exit status decides whether it
	// counts (a script that fails after printing is not trusted).
	if !p.WaitExit(time.Second) && ctx.Err() == nil {
		return Divide{}, fail("crash", "closed its output but did not exit")
	}
	ex := p.Stop("", 0)
	if ctx.Err() != nil {
		return Divide{}, ctx.Err()
	}
	if ex.Code != 0 {
		return Divide{}, &EngineError{Engine: e.Name(), Query: &q, Kind: "crash", Msg: ex.String(), Stderr: p.Stderr()}
	}
	d, err := ParseDivideOutput(out.String())
	if err != nil {
		return Divide{}, &EngineError{Engine: e.Name(), Query: &q, Kind: "garbage", Msg: err.Error(), Stderr: p.Stderr()}
	}
	return d, nil
}
