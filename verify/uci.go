package verify

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// uciEngine drives one UCI process for perft. It is a small driver of its
// own rather than match's: match's process type is unexported and built
// around search clocks (stop, then kill after a grace); perft needs only
// "send, read lines until the total, or kill at the deadline".
//
// Invariants: lines is fed by one reader goroutine per process and closed
// at the process's end of output; after a timeout, crash or garbage the
// process is killed and the next query starts a fresh one, so one bad
// position never poisons the next.
type uciEngine struct {
	spec    EngineSpec
	timeout time.Duration

	mu      sync.Mutex // one query at a time
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string
	exit    chan error // the process's Wait result, after its output ends
	stderr  *tailBuffer
	name    string
	has960  bool
	cur960  bool
	started bool
}

// startupTimeout bounds uci/uciok and isready/readyok.
const startupTimeout = 10 * time.Second

func openUCI(ctx context.Context, spec EngineSpec, timeout time.Duration) (*uciEngine, error) {
	if _, err := exec.LookPath(spec.Cmd); err != nil {
		return nil, &EngineError{Engine: spec.String(), Kind: "start", Msg: err.Error()}
	}
	e := &uciEngine{spec: spec, timeout: timeout, name: spec.String()}
	if err := e.start(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *uciEngine) Name() string { return e.name }

func (e *uciEngine) fail(q *Query, kind, msg string) error {
	err := &EngineError{Engine: e.name, Query: q, Kind: kind, Msg: msg, Stderr: e.stderr.String()}
	e.kill()
	return err
}

func (e *uciEngine) start(ctx context.Context) error {
	cmd := exec.Command(e.spec.Cmd, e.spec.Args...)
	cmd.Dir = e.spec.Dir
	// Own process group, so that a hung engine dies with its children;
	// Pdeathsig, so that engines die with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	e.stderr = &tailBuffer{max: 2048}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		return &EngineError{Engine: e.name, Kind: "start", Msg: err.Error()}
	}
	e.cmd, e.stdin, e.started = cmd, stdin, true
	lines, exit := make(chan string, 512), make(chan error, 1)
	e.lines, e.exit = lines, exit
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		// Wait only after the last read (os/exec's rule for pipes).
		exit <- cmd.Wait()
		close(lines)
	}()
	e.cur960 = false

	deadline := time.Now().Add(max(startupTimeout, e.timeout))
	if err := e.send("uci"); err != nil {
		return e.fail(nil, "start", err.Error())
	}
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			return e.fail(nil, "start", "waiting for uciok: "+err.Error())
		}
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "id" && f[1] == "name":
			// Both: the engine's own name, and which command it was.
			e.name = strings.Join(f[2:], " ") + " [" + e.spec.String() + "]"
		case len(f) >= 3 && f[0] == "option" && f[1] == "name" && f[2] == "UCI_Chess960":
			e.has960 = true
		}
		if line == "uciok" || strings.TrimSpace(line) == "uciok" {
			break
		}
	}
	for _, o := range e.spec.Options {
		if err := e.send("setoption name " + o.Name + " value " + o.Value); err != nil {
			return e.fail(nil, "start", err.Error())
		}
	}
	if err := e.ready(ctx, nil, deadline); err != nil {
		return err
	}
	return nil
}

// ready sends isready and waits for readyok.
func (e *uciEngine) ready(ctx context.Context, q *Query, deadline time.Time) error {
	if err := e.send("isready"); err != nil {
		return e.fail(q, "crash", err.Error())
	}
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			kind := "crash"
			if errors.Is(err, errTimeout) {
				kind = "timeout"
			}
			return e.fail(q, kind, "waiting for readyok: "+err.Error())
		}
		if strings.TrimSpace(line) == "readyok" {
			return nil
		}
	}
}

var errTimeout = errors.New("timed out")

// read returns the next line, or an error at the deadline, on cancellation
// or at the end of the engine's output.
func (e *uciEngine) read(ctx context.Context, deadline time.Time) (string, error) {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	select {
	case line, ok := <-e.lines:
		if !ok {
			return "", e.exitError()
		}
		return line, nil
	case <-timer:
		return "", errTimeout
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// exitError describes how the process ended (it closed its output).
func (e *uciEngine) exitError() error {
	select {
	case err := <-e.exit:
		if err == nil {
			return errors.New("the engine exited (status 0)")
		}
		return fmt.Errorf("the engine exited: %v", err)
	default:
		return errors.New("the engine closed its output")
	}
}

func (e *uciEngine) send(line string) error {
	_, err := io.WriteString(e.stdin, line+"\n")
	if err != nil {
		return fmt.Errorf("write %q: %v", line, err)
	}
	return nil
}

// kill ends the process group; the next query starts a new process.
func (e *uciEngine) kill() {
	e.started = false
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	e.cmd.Process.Kill()
	e.stdin.Close()
	// Drain, so that the reader goroutine reaches Wait and ends.
	go func(lines chan string) {
		for range lines {
		}
	}(e.lines)
	e.cmd = nil
}

// Divide runs `position fen ... moves ...` and `go perft N` and reads the
// divide lines up to the total.
func (e *uciEngine) Divide(ctx context.Context, q Query) (Divide, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if q.Depth < 1 {
		return Divide{}, fmt.Errorf("engine %s: depth %d: want at least 1", e.name, q.Depth)
	}
	if !e.started {
		if err := e.start(ctx); err != nil {
			return Divide{}, err
		}
	}
	var deadline time.Time
	if e.timeout > 0 {
		deadline = time.Now().Add(e.timeout)
	}
	if q.Chess960 != e.cur960 {
		if q.Chess960 && !e.has960 {
			return Divide{}, &EngineError{Engine: e.name, Query: &q, Kind: "protocol", Msg: "the position is Chess960 but the engine has no UCI_Chess960 option"}
		}
		if err := e.send(fmt.Sprintf("setoption name UCI_Chess960 value %t", q.Chess960)); err != nil {
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
	if err := e.send(pos); err != nil {
		return Divide{}, e.fail(&q, "crash", err.Error())
	}
	if err := e.send(fmt.Sprintf("go perft %d", q.Depth)); err != nil {
		return Divide{}, e.fail(&q, "crash", err.Error())
	}
	var p divideParser
	for {
		line, err := e.read(ctx, deadline)
		if err != nil {
			switch {
			case errors.Is(err, errTimeout):
				return Divide{}, e.fail(&q, "timeout", fmt.Sprintf("no total after %v (killed)", e.timeout))
			case ctx.Err() != nil:
				e.kill()
				return Divide{}, ctx.Err()
			}
			return Divide{}, e.fail(&q, "crash", err.Error()+" before printing the total")
		}
		done, err := p.feed(line)
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
	if !e.started {
		return nil
	}
	e.send("quit")
	select {
	case <-e.exit:
	case <-time.After(time.Second):
	}
	e.kill()
	return nil
}

// tailBuffer keeps the last max bytes written (an engine's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
