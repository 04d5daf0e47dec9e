package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	if _, err := exec.LookPath(spec.Cmd); err != nil {
		return nil, &EngineError{Engine: spec.String(), Kind: "start", Msg: err.Error()}
	}
	return &perftreeEngine{spec: spec, timeout: timeout}, nil
}

func (e *perftreeEngine) Name() string { return e.spec.String() }
func (e *perftreeEngine) Close() error { return nil }

func (e *perftreeEngine) Divide(ctx context.Context, q Query) (Divide, error) {
	if q.Depth < 1 {
		return Divide{}, fmt.Errorf("engine %s: depth %d: want at least 1", e.Name(), q.Depth)
	}
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
		defer cancel()
	}
	args := append(append([]string(nil), e.spec.Args...), strconv.Itoa(q.Depth), q.FEN, strings.Join(q.Moves, " "))
	cmd := exec.CommandContext(ctx, e.spec.Cmd, args...)
	cmd.Dir = e.spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Kill the whole group: a shell script's children would otherwise keep
	// the pipes open past the deadline.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 2048}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	fail := func(kind, msg string) error {
		return &EngineError{Engine: e.Name(), Query: &q, Kind: kind, Msg: msg, Stderr: stderr.String()}
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && e.timeout > 0 {
			return Divide{}, fail("timeout", fmt.Sprintf("no answer after %v (killed)", e.timeout))
		}
		return Divide{}, ctx.Err()
	}
	if err != nil {
		return Divide{}, fail("crash", err.Error())
	}
	d, err := ParseDivideOutput(stdout.String())
	if err != nil {
		return Divide{}, fail("garbage", err.Error())
	}
	return d, nil
}
