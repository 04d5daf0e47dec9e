package worker

// Runners: how a kind of job that plugs in runs its units here. A kind's
// folder (kinds/NAME) registers a Runner from its init; the worker looks a
// leased unit's payload (WorkUnit.plugin, an Any) up by its message type
// and hands it to the runner that takes that type, with a Host: the part of
// the worker a runner may use. The worker offers the coordinator each
// registered runner's capability, so what a worker says it runs is read
// from this registry, never from a list kept by hand.
//
// Invariants:
//   - One runner per payload type and per capability: RegisterRunner
//     panics on a second (two packages claiming one kind is a build
//     mistake), and on a runner that leaves a field unset.
//   - A leased unit ends in exactly one way: its result in the outbox, its
//     lease released to be leased again, or refused (cannot run). The
//     worker decides which from what Run returns, so a runner can neither
//     submit twice nor leave a lease held after it returns.
//   - A unit whose payload type no runner takes is refused with a reason
//     that names the type; one that does not unpack into its type is
//     released with the unpacking error.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Runner runs the units of one kind of job on a worker. A kind registers
// it once, from its package's init, with RegisterRunner.
//
// Contract the worker relies on:
//   - Run is called once per leased unit, on the unit's own goroutine,
//     and several units of the kind may run at once (one per slot); a
//     runner keeps no state between units outside what it guards itself.
//   - unit is a new message of Unit's type, unpacked from the lease: it
//     came from the coordinator and is checked like any peer's input (no
//     count in it is a loop bound or an allocation size without a cap).
//   - Run honours ctx: it is cancelled when the coordinator no longer
//     needs the unit or the worker's grace on shutdown ends; Run then
//     returns soon, with ctx's error or its own.
//   - What Run returns decides the unit's end: a result goes to the
//     outbox and is submitted until the coordinator acknowledges it
//     (across coordinator restarts; the coordinator counts a unit once);
//     an error made with Refuse releases the lease as cannot-run, with
//     the error as the reason, and the coordinator stops offering the job
//     to this worker; any other error (ctx ended, the worker stopping, a
//     passing failure) releases the lease with the error as the reason,
//     for the unit to be leased again. A nil result with a nil error is a
//     runner bug: the lease is released saying so.
//   - Engines are started only as the Host makes them ready
//     (Host.ReadyEngines), and cores are taken from the worker's budget
//     (Host.TakeCores) before a game starts and given back after.
type Runner struct {
	// Unit returns a new, empty message of the payload type the runner
	// takes (the type of WorkUnit.plugin's Any).
	Unit func() proto.Message
	// Capability is what a worker with this runner offers the coordinator
	// (a base/capability string); the kind's coordinator side leases its
	// units only to workers that offer it.
	Capability string
	// Run runs one unit and returns its result (submitted as
	// SubmitRequest.plugin), or why it did not.
	Run func(ctx context.Context, host Host, unit proto.Message) (proto.Message, error)
}

// Host is what a runner may use of the worker that runs it. What becomes
// of the unit (result, release, refusal) is not asked of the host: Run's
// return value says it (see Runner).
type Host interface {
	// ReadyEngines makes engines ready to play, as a game pair's are: an
	// installed engine becomes the one the worker's operator allows under
	// its name, an uploaded one (or one with a net) is fetched, built and
	// checked for the sandbox, and each must be present here. It returns
	// the engines to start, in order, and done, which unpins the uploaded
	// ones: call it once the unit no longer plays them. An error is a
	// refusal or the worker stopping; return it from Run as it is.
	ReadyEngines(ctx context.Context, engines ...*arbiterv1.EngineSpec) (ready []*arbiterv1.EngineSpec, done func(), err error)
	// TakeCores waits for the cores one game of engines takes (the most
	// threads any of them asks for with its Threads option, at least one,
	// at most the worker's budget) and returns give, which gives them
	// back: call it once. The error is ctx's when it ends first.
	TakeCores(ctx context.Context, engines ...*arbiterv1.EngineSpec) (give func(), err error)
	// Logger logs with the unit's lease, unit and job ids.
	Logger() *zap.Logger
	// Settings are the worker's settings a kind may need.
	Settings() Settings
}

// Settings are the worker's settings a runner may use.
type Settings struct {
	// Builtin makes the embedded engine's players; nil: this worker does
	// not play the embedded engine (Config.Builtin).
	Builtin match.BuiltinFactory
	// Syzygy are the worker's tablebases (--syzygy DIR); nil: none.
	Syzygy *syzygy.Tablebase
}

// Refuse marks err as a refusal: this worker cannot run the unit (an
// engine it cannot start, a unit no retry here would play). Run returns
// it to have the lease released as cannot-run, with err as the reason.
func Refuse(err error) error {
	if err == nil {
		return nil
	}
	return &refusalError{err}
}

// IsRefusal reports whether err is, or wraps, a refusal (Refuse).
func IsRefusal(err error) bool {
	var r *refusalError
	return errors.As(err, &r)
}

var (
	runnersMu sync.RWMutex
	// runners by the full name of the payload type they take.
	runners = map[protoreflect.FullName]Runner{}
)

// RegisterRunner adds a kind's runner. It panics on a runner with a field
// unset, and on a second runner for one payload type or one capability:
// both are build mistakes, found when the program starts.
func RegisterRunner(r Runner) {
	if r.Unit == nil || r.Run == nil || r.Capability == "" {
		panic("worker: RegisterRunner: Unit, Capability and Run must all be set")
	}
	name := r.Unit().ProtoReflect().Descriptor().FullName()
	runnersMu.Lock()
	defer runnersMu.Unlock()
	if _, dup := runners[name]; dup {
		panic(fmt.Sprintf("worker: a runner for %s is registered twice", name))
	}
	for other, o := range runners {
		if o.Capability == r.Capability {
			panic(fmt.Sprintf("worker: runners for %s and %s both offer capability %q", other, name, r.Capability))
		}
	}
	runners[name] = r
}

// RunnerCapabilities are the capabilities of the registered runners,
// sorted: what a worker offers for the kinds that plug in.
func RunnerCapabilities() []string {
	runnersMu.RLock()
	defer runnersMu.RUnlock()
	caps := make([]string, 0, len(runners))
	for _, r := range runners {
		caps = append(caps, r.Capability)
	}
	slices.Sort(caps)
	return caps
}

// runPlugin runs a unit of a kind that plugs in with the runner of its
// payload's type, and ends the unit as the runner's answer says.
func (w *Worker) runPlugin(ctx, bg context.Context, h *held, payload *anypb.Any, log *zap.Logger) {
	runnersMu.RLock()
	r, ok := runners[payload.MessageName()]
	runnersMu.RUnlock()
	if !ok {
		// The type URL is the coordinator's word: cut before it is repeated.
		typeURL := truncate(payload.GetTypeUrl(), 200)
		why := fmt.Sprintf("unit type %q is not supported by this worker (no runner takes it)", typeURL)
		log.Warn("unit type not supported; refusing it", zap.String("type", typeURL))
		w.refuseUnit(bg, h.leaseID, why)
		return
	}
	unit := r.Unit()
	if err := payload.UnmarshalTo(unit); err != nil {
		log.Warn("malformed unit; releasing", zap.Error(err))
		w.release(bg, h.leaseID, fmt.Sprintf("malformed unit of type %s: %v", payload.MessageName(), err))
		return
	}
	start := time.Now()
	res, err := r.Run(ctx, &runnerHost{w: w, jobID: h.jobID, log: log}, unit)
	elapsed := time.Since(start)
	if err == nil && (res == nil || !res.ProtoReflect().IsValid()) { // nil, or a typed nil
		err = fmt.Errorf("the runner of %s returned neither a result nor an error", payload.MessageName())
		log.Error("runner bug; releasing the unit", zap.Error(err))
	}
	if err != nil {
		w.giveBack(bg, h, err, log)
		return
	}
	packed, err := anypb.New(res)
	if err != nil {
		log.Error("result not packed; releasing", zap.Error(err))
		w.release(bg, h.leaseID, "result not packed: "+err.Error())
		return
	}
	log.Info("unit run", zap.String("type", string(payload.MessageName())), zap.Duration("elapsed", elapsed))
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, elapsed: elapsed,
		answer: &arbiterv1.SubmitRequest{Result: &arbiterv1.SubmitRequest_Plugin{Plugin: packed}}}, 0)
}

// giveBack ends a unit that has no result: a refusal is released as
// cannot-run, anything else (the unit cut short, the worker stopping) to
// be leased again; err is the reason either way.
func (w *Worker) giveBack(bg context.Context, h *held, err error, log *zap.Logger) {
	if IsRefusal(err) {
		log.Warn("cannot run the unit; refusing it", zap.Error(err))
		w.refuseUnit(bg, h.leaseID, err.Error())
		return
	}
	log.Info("unit not finished; releasing lease", zap.Error(err))
	w.release(bg, h.leaseID, err.Error())
}

// runnerHost is the Host of one unit.
type runnerHost struct {
	w     *Worker
	jobID string
	log   *zap.Logger
}

func (rh *runnerHost) ReadyEngines(ctx context.Context, engines ...*arbiterv1.EngineSpec) ([]*arbiterv1.EngineSpec, func(), error) {
	return rh.w.readyEngines(ctx, rh.jobID, engines, rh.log)
}

func (rh *runnerHost) TakeCores(ctx context.Context, engines ...*arbiterv1.EngineSpec) (func(), error) {
	return rh.w.takeCores(ctx, engines)
}

func (rh *runnerHost) Logger() *zap.Logger { return rh.log }

func (rh *runnerHost) Settings() Settings {
	return Settings{Builtin: rh.w.cfg.Builtin, Syzygy: rh.w.cfg.Syzygy}
}
