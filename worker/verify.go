package worker

// Verify units (`arbiter verify --coordinator`): one engine-under-test query
// each, answered by a local engine the worker advertised with
// Config.VerifyEngines. Engines are kept running between units (a UCI
// engine answers one query at a time, so a slot that finds none idle for
// its spec starts another); an engine failure is a result (the client's
// report names it), not a reason to release the lease.

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/capability"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// verifyEngines holds the worker's engines under test and idle processes.
type verifyEngines struct {
	byName map[string]verifyproto.LocalEngine
	mu     sync.Mutex
	idle   map[string][]verify.Engine // by resolved spec and timeout
	closed bool
}

func newVerifyEngines(list []verifyproto.LocalEngine) *verifyEngines {
	v := &verifyEngines{byName: map[string]verifyproto.LocalEngine{}, idle: map[string][]verify.Engine{}}
	for _, e := range list {
		v.byName[e.Name] = e
	}
	return v
}

// capabilities are the strings the worker registers for its engines.
func (v *verifyEngines) capabilities() []string {
	var caps []string
	for name := range v.byName {
		caps = append(caps, capability.VerifyEngine(name))
	}
	if len(caps) > 0 {
		// Its engines also count perft cross-checks (crosscheck.go).
		caps = append(caps, capability.PerftCrossCheck)
	}
	return caps
}

func unitKey(u verify.Unit) string {
	b, _ := json.Marshal(struct {
		S verify.EngineSpec
		T time.Duration
	}{u.Engine, u.Timeout})
	return string(b)
}

// run answers one unit with an idle engine for its spec, or a new one.
func (v *verifyEngines) run(ctx context.Context, u verify.Unit) (verify.Divide, error) {
	key := unitKey(u)
	v.mu.Lock()
	var eng verify.Engine
	if l := v.idle[key]; len(l) > 0 {
		eng, v.idle[key] = l[len(l)-1], l[:len(l)-1]
	}
	v.mu.Unlock()
	if eng == nil {
		var err error
		if eng, err = verify.Open(ctx, u.Engine, u.Timeout); err != nil {
			return verify.Divide{}, err
		}
	}
	d, err := eng.Divide(ctx, u.Query)
	v.mu.Lock()
	if v.closed || ctx.Err() != nil {
		v.mu.Unlock()
		eng.Close()
	} else {
		v.idle[key] = append(v.idle[key], eng)
		v.mu.Unlock()
	}
	return d, err
}

func (v *verifyEngines) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = true
	for k, l := range v.idle {
		for _, e := range l {
			e.Close()
		}
		delete(v.idle, k)
	}
}

// runVerify computes a verify unit and puts its result in the outbox, or
// releases the lease when it was cut short (shutdown, cancelled).
func (w *Worker) runVerify(cctx, bg context.Context, h *held, vu *arbiterv1.VerifyUnit, log *zap.Logger) {
	local, ok := w.verify.byName[vu.GetEngine().GetName()]
	if !ok {
		log.Warn("verify unit for an engine this worker does not have; releasing", zap.String("engine", vu.GetEngine().GetName()))
		w.release(bg, h.leaseID, "engine "+vu.GetEngine().GetName()+" not on this worker")
		return
	}
	unit := verifyproto.Resolve(local, vu)
	start := time.Now()
	d, err := w.verify.run(cctx, unit)
	elapsed := time.Since(start)
	if cctx.Err() != nil {
		log.Info("verify unit not finished; releasing lease", zap.Error(cctx.Err()))
		w.release(bg, h.leaseID, "cancelled")
		return
	}
	res := verifyproto.ResultProto(d, err)
	log.Debug("verify unit computed", zap.String("engine", local.Name), zap.Int("depth", unit.Query.Depth),
		zap.String("total", res.GetTotal()), zap.Bool("engine_error", err != nil), zap.Duration("elapsed", elapsed))
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, elapsed: elapsed,
		answer: &arbiterv1.SubmitRequest{Result: &arbiterv1.SubmitRequest_Verify{Verify: res}}}, 0)
}
