package gamepairs

// The movegen gate on a worker: before it plays a batch, the worker runs
// verify's gate through each engine of the batch with movegen_gate set,
// once per build of the engine (cached by the build's hash: a test's other
// batches and later tests of the same build skip it).
//
// passMovegenGates decides (play calls it once the engines are ready),
// Run answers the lease:
//
//   - passed: the batch is played;
//   - failed (a finding the coordinator can check, or an engine that does
//     not answer `go perft`): the batch is answered with the failure
//     instead of games, and the coordinator fails the test with it;
//   - a failure without a wrong move (counts only) or an engine that
//     crashed, hung or did not start: the worker refuses the batch
//     (cannot_run) saying why, so another worker tries; a crash is not
//     cached.
//
// A worker killed during the gate holds only a lease: the batch goes to
// another worker, which runs the gate again. The verdicts are the
// runner's on one worker (runner.gates), kept as long as the worker.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/filehash"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
	"github.com/arbiter-chess/arbiter/worker"
)

// gateQueryTimeout bounds one perft query of the gate (the suite's depths
// take an engine milliseconds; a loaded worker may need seconds).
const gateQueryTimeout = 60 * time.Second

// gateCache holds the gate's verdicts by build key, and the hashes of
// program files by path, size and time (a 50 MB engine is hashed once).
type gateCache struct {
	mu       sync.Mutex
	verdicts map[string]*gateEntry
	files    map[fileStamp]string
}

// gateEntry is one build's verdict; done closes when it is known, so
// slots leasing batches of one test at once run the gate once.
type gateEntry struct {
	done chan struct{}
	v    verify.GateVerdict
}

type fileStamp struct {
	path string
	size int64
	mod  time.Time
}

// gateFailedError is a batch answered by a failed movegen gate: its
// result is the failure, which fails the test on the coordinator.
type gateFailedError struct{ failure *arbiterv1.MovegenGateFailure }

func (e *gateFailedError) Error() string { return e.failure.GetMessage() }

// passMovegenGates gates the engines that ask for it: leased are the
// batch's engines as leased (an uploaded engine names its artifact
// there), engines the same engines ready to start. It returns nil when
// every gate passed, a *gateFailedError when one failed with a verdict
// the coordinator can check, a refusal (worker.Refuse) when this worker cannot
// check an engine (it crashed, hung or did not start, or its verdict has
// no wrong move), or ctx's error when the worker is stopping.
func (c *gateCache) pass(ctx context.Context, leased, engines []*arbiterv1.EngineSpec, log *zap.Logger) error {
	for i, e := range engines {
		if e.GetMovegenGate() == "" {
			continue
		}
		start := time.Now()
		v := c.verdict(ctx, leased[i], e)
		switch {
		case v.Outcome == verify.GatePassed:
			log.Info("movegen gate passed", zap.String("engine", e.GetName()), zap.Duration("elapsed", time.Since(start)))
		case ctx.Err() != nil:
			return ctx.Err()
		case v.Outcome == verify.GateFailed && (v.NoPerft || hasWrongMove(v)):
			return &gateFailedError{failure: verifyproto.GateFailureToProto(v)}
		default:
			return worker.Refuse(errors.New(v.Message))
		}
	}
	return nil
}

// hasWrongMove reports whether a failed verdict names a move the
// coordinator can check (an illegal or a missed one).
func hasWrongMove(v verify.GateVerdict) bool {
	f := v.Finding()
	return f != nil && len(f.Illegal)+len(f.Missed) > 0
}

// verdict is the gate's verdict on engine e (as played; orig as leased),
// from the cache or run now. An unsure verdict is not kept.
func (c *gateCache) verdict(ctx context.Context, orig, e *arbiterv1.EngineSpec) verify.GateVerdict {
	key, err := c.buildKey(orig, e)
	if err != nil {
		return verify.GateVerdict{Outcome: verify.GateUnsure, Engine: e.GetName(),
			Message: "movegen gate of engine " + e.GetName() + ": " + err.Error()}
	}
	c.mu.Lock()
	if c.verdicts == nil {
		c.verdicts = map[string]*gateEntry{}
	}
	ent, ok := c.verdicts[key]
	if !ok {
		ent = &gateEntry{done: make(chan struct{})}
		c.verdicts[key] = ent
	}
	c.mu.Unlock()
	if ok {
		select {
		case <-ent.done:
			return ent.v
		case <-ctx.Done():
			return verify.GateVerdict{Outcome: verify.GateUnsure, Engine: e.GetName(), Message: ctx.Err().Error()}
		}
	}
	ent.v = verify.GateEngine(ctx, gateSpec(e), e.GetName(), gateQueryTimeout, 1)
	if ent.v.Outcome == verify.GateUnsure {
		c.mu.Lock()
		delete(c.verdicts, key)
		c.mu.Unlock()
	}
	close(ent.done)
	return ent.v
}

// gateSpec is verify's engine for e as the batch plays it: its program
// (in the sandbox for an uploaded one), arguments, directory and options
// (in name order).
func gateSpec(e *arbiterv1.EngineSpec) verify.EngineSpec {
	return matchspec.GateEngine(matchspec.EngineFromProto(e))
}

// buildKey names the build the gate checks: the uploaded artifact's hash
// (with its build command), or the SHA-256 of the installed program's
// file, with the arguments, options and net that change what it runs.
func (c *gateCache) buildKey(orig, e *arbiterv1.EngineSpec) (string, error) {
	h := sha256.New()
	field := func(s string) { io.WriteString(h, s); h.Write([]byte{0}) }
	if a := orig.GetArtifact(); a != nil {
		field("artifact")
		field(a.GetSha256())
		field(a.GetBuild())
		field(a.GetExe())
		field(orig.GetNet().GetSha256())
		for _, arg := range orig.GetArgs() {
			field(arg)
		}
	} else {
		sum, err := c.fileHash(e.GetCommand(), e.GetDir())
		if err != nil {
			return "", err
		}
		field("program")
		field(sum)
		field(e.GetDir())
		for _, arg := range e.GetArgs() {
			field(arg)
		}
	}
	for _, o := range gateSpec(orig).Options {
		field(o.Name)
		field(o.Value)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileHash is the SHA-256 of the program cmd names (looked up as the
// match runner does), hashed again only when its size or time changed.
func (c *gateCache) fileHash(cmd, dir string) (string, error) {
	path, err := engineproc.LookPath(cmd, dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	stamp := fileStamp{path: path, size: st.Size(), mod: st.ModTime()}
	c.mu.Lock()
	sum, ok := c.files[stamp]
	c.mu.Unlock()
	if ok {
		return sum, nil
	}
	if sum, err = filehash.SHA256(path); err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.files == nil {
		c.files = map[fileStamp]string{}
	}
	c.files[stamp] = sum
	c.mu.Unlock()
	return sum, nil
}
