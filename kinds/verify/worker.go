package verify

// VERIFY's worker side (`arbiter verify --coordinator`): a unit is one
// engine-under-test query, answered by a program the worker's operator
// named with --verify-engine (worker.Settings.VerifyEngines, read by the
// runner the worker makes with New). The worker offers
// "verify-engine:NAME" for each such program, and the coordinator leases a
// unit only to a worker that offers its engine. The units travel as the
// typed WorkUnit.verify and their results as SubmitRequest.verify, as in
// the release before; the worker finds the runner by the message's type.
//
// Engines are kept running between units (a UCI engine answers one query
// at a time, so a unit that finds none idle for its spec starts another)
// and stopped when the worker stops. An engine failure is a result (the
// client's report names it), not a reason to release the lease.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	vf "github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
	"github.com/arbiter-chess/arbiter/worker"
)

func init() {
	worker.RegisterRunner(worker.Runner{
		Unit: func() proto.Message { return &arbiterv1.VerifyUnit{} },
		New:  func(s worker.Settings) (worker.Instance, error) { return newLocalEngines(s.VerifyEngines), nil },
	})
}

// localEngines is the runner on one worker: its engines under test and their
// idle processes.
type localEngines struct {
	byName map[string]verifyproto.LocalEngine
	mu     sync.Mutex
	idle   map[string][]vf.Engine // by resolved spec and timeout
	closed bool
}

func newLocalEngines(list []verifyproto.LocalEngine) *localEngines {
	v := &localEngines{byName: map[string]verifyproto.LocalEngine{}, idle: map[string][]vf.Engine{}}
	for _, e := range list {
		v.byName[e.Name] = e
	}
	return v
}

// Capabilities are "verify-engine:NAME" for each of the worker's engines.
func (v *localEngines) Capabilities() []string {
	var caps []string
	for name := range v.byName {
		caps = append(caps, capability.VerifyEngine(name))
	}
	slices.Sort(caps)
	return caps
}

// Run answers a *VerifyUnit with the local engine it names; a unit for an
// engine this worker does not have, or one cut short, is released.
func (v *localEngines) Run(ctx context.Context, host worker.Host, unit proto.Message) (proto.Message, error) {
	vu, ok := unit.(*arbiterv1.VerifyUnit)
	if !ok {
		return nil, worker.Refuse(errors.New("verify runner: the unit is not a VerifyUnit"))
	}
	log := host.Logger()
	local, ok := v.byName[vu.GetEngine().GetName()]
	if !ok {
		log.Warn("verify unit for an engine this worker does not have; releasing", zap.String("engine", vu.GetEngine().GetName()))
		return nil, errors.New("engine " + vu.GetEngine().GetName() + " not on this worker")
	}
	u := verifyproto.Resolve(local, vu)
	start := time.Now()
	d, err := v.run(ctx, u)
	if ctx.Err() != nil {
		return nil, errors.New("cancelled")
	}
	res := verifyproto.ResultProto(d, err)
	log.Debug("verify unit computed", zap.String("engine", local.Name), zap.Int("depth", u.Query.Depth),
		zap.String("total", res.GetTotal()), zap.Bool("engine_error", err != nil), zap.Duration("elapsed", time.Since(start)))
	return res, nil
}

func unitKey(u vf.Unit) string {
	b, _ := json.Marshal(struct {
		S vf.EngineSpec
		T time.Duration
	}{u.Engine, u.Timeout})
	return string(b)
}

// run answers one unit with an idle engine for its spec, or a new one.
func (v *localEngines) run(ctx context.Context, u vf.Unit) (vf.Divide, error) {
	key := unitKey(u)
	v.mu.Lock()
	var eng vf.Engine
	if l := v.idle[key]; len(l) > 0 {
		eng, v.idle[key] = l[len(l)-1], l[:len(l)-1]
	}
	v.mu.Unlock()
	if eng == nil {
		var err error
		if eng, err = vf.Open(ctx, u.Engine, u.Timeout); err != nil {
			return vf.Divide{}, err
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

// Close stops the idle engines; an engine a unit still runs is stopped
// when it returns.
func (v *localEngines) Close() {
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
