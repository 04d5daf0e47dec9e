package worker

// Engines made ready for a unit (Host.ReadyEngines): an installed engine
// becomes the one the worker's operator allows under its name, an uploaded
// one (or one with a net) is fetched, built and checked for the sandbox
// (artifacts.go), and each must be present here. An engine the worker
// cannot run (a program that is missing or not executable, an option its
// operator does not allow) is a refusal: the lease is released with
// cannot_run and the coordinator stops offering the job to this worker.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// engineCapabilities are what the worker offers for the engines it has,
// whichever kind plays them: the embedded engine (Config.Builtin), and
// Syzygy tables up to their most pieces (Config.Syzygy).
func (w *Worker) engineCapabilities() []string {
	var caps []string
	if w.cfg.Builtin != nil {
		caps = append(caps, capability.Builtin)
	}
	if w.cfg.Syzygy != nil {
		for n := 3; n <= w.cfg.Syzygy.MaxPieces(); n++ {
			caps = append(caps, capability.Syzygy(n))
		}
	}
	return caps
}

// cannotRun says why this worker cannot play an engine, or "".
func cannotRun(e *arbiterv1.EngineSpec, builtin match.BuiltinFactory) string {
	if matchspec.IsBuiltin(e) {
		if builtin == nil {
			return fmt.Sprintf("engine %q: the embedded engine is not in this worker", e.GetName())
		}
		return ""
	}
	if _, err := engineproc.LookPath(e.GetCommand(), e.GetDir()); err != nil {
		return fmt.Sprintf("engine %q: command %q is not present or not executable on this worker: %v", e.GetName(), e.GetCommand(), err)
	}
	return ""
}

// allowedEngines replaces each installed engine (cmd=) with the one the
// worker's operator allows under that name: the client chooses which
// engine, never the program, its arguments or its working directory. An
// error (a refusal) says what is not allowed. The embedded engine and
// uploaded ones (run in the sandbox) pass as they are; engines is not
// changed.
func allowedEngines(engines []*arbiterv1.EngineSpec, allowed *engineallow.List) ([]*arbiterv1.EngineSpec, error) {
	out := slices.Clone(engines)
	for i, e := range engines {
		if e == nil || matchspec.IsBuiltin(e) || e.GetArtifact() != nil {
			continue
		}
		a, err := allowed.Resolve(e.GetCommand(), e.GetArgs(), e.GetDir())
		if err == nil {
			err = a.CheckOptions(e.GetOptions())
		}
		if err != nil {
			return nil, &refusalError{fmt.Errorf("engine %q: %v", e.GetName(), err)}
		}
		r := proto.Clone(e).(*arbiterv1.EngineSpec)
		r.Command, r.Args, r.Dir = a.Cmd, slices.Clone(a.Args), a.Dir
		out[i] = r
	}
	return out, nil
}

// refuseUnit releases a lease the worker cannot run, saying so.
func (w *Worker) refuseUnit(ctx context.Context, leaseID, reason string) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w.mu.Lock()
	w.stats.Released++
	w.mu.Unlock()
	if _, err := w.worker.Release(cctx, &arbiterv1.ReleaseRequest{WorkerId: w.workerID(), LeaseId: leaseID, Reason: reason, CannotRun: true}); err != nil {
		w.log.Warn("release failed", zap.String("lease_id", leaseID), zap.Error(err))
	}
}

// readyEngines makes engines ready to play for a unit of job jobID (the
// Host's ReadyEngines, whose doc says what that takes): it returns them
// in order, ready to start, and done, which unpins the uploaded ones. An
// error is a refusal, or errStopping.
func (w *Worker) readyEngines(ctx context.Context, jobID string, engines []*arbiterv1.EngineSpec, log *zap.Logger) ([]*arbiterv1.EngineSpec, func(), error) {
	engines, err := allowedEngines(engines, w.cfg.Engines)
	if err != nil {
		return nil, nil, err
	}
	engines, done, err := w.prepareArtifacts(ctx, jobID, engines, log)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range engines {
		if why := cannotRun(e, w.cfg.Builtin); why != "" {
			done()
			return nil, nil, &refusalError{errors.New(why)}
		}
	}
	return engines, done, nil
}

// prepareArtifacts fetches, builds and verifies the uploaded engines
// (and nets) among engines and returns them as programs to start (in the
// sandbox); done unpins them. An error is a refusal, or errStopping.
func (w *Worker) prepareArtifacts(ctx context.Context, jobID string, engines []*arbiterv1.EngineSpec, log *zap.Logger) ([]*arbiterv1.EngineSpec, func(), error) {
	needs := func(e *arbiterv1.EngineSpec) bool { return e.GetArtifact() != nil || e.GetNet() != nil }
	if !slices.ContainsFunc(engines, needs) {
		return engines, func() {}, nil
	}
	if w.arts == nil {
		return nil, nil, &refusalError{errors.New("this worker runs no uploaded engines and keeps no nets (its operator gave no --data)")}
	}
	out := slices.Clone(engines)
	var preps []*prepared
	done := func() {
		for _, p := range preps {
			w.arts.done(p)
		}
	}
	for i, e := range engines {
		if !needs(e) {
			continue
		}
		p, err := w.arts.prepare(ctx, w.workerID(), jobID, e)
		if err != nil {
			done()
			if ctx.Err() != nil {
				return nil, nil, errStopping
			}
			log.Warn("uploaded engine refused", zap.Error(err))
			why := err.Error()
			var r *refusal
			if errors.As(err, &r) {
				why = r.reason()
			}
			return nil, nil, &refusalError{errors.New(why)}
		}
		preps = append(preps, p)
		out[i] = p.spec
	}
	return out, done, nil
}

// refusalError is a unit this worker cannot run (an engine it cannot
// start, a rule it cannot apply); Refuse makes one.
type refusalError struct{ err error }

func (e *refusalError) Error() string { return e.err.Error() }
func (e *refusalError) Unwrap() error { return e.err }
