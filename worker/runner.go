package worker

// Runners: how a kind of job runs its units here. A kind's folder
// (kinds/NAME) registers a Runner from its init; the worker finds a leased
// unit's payload, whichever field of WorkUnit.payload carries it (the
// plugin Any, or a typed field such as game_pairs, perft and verify, kept
// for the coordinators of the release before), looks it up by its message
// type and hands it to the runner that takes that type, with a Host: the
// part of the worker a runner may use. The result goes back the way the
// unit came: packed into SubmitRequest.plugin for a packed unit, or into
// the typed field of SubmitRequest.result that takes the result's type.
// The worker offers the coordinator what each registered runner offers,
// so what a worker says it runs is read from this registry, never from a
// list kept by hand. A runner with state per worker (tables kept across units,
// engine processes kept between units) or whose capabilities depend on the
// worker's settings registers New, which the worker calls once when it is
// made (see Instance).
//
// Invariants:
//   - One runner per payload type and per capability: RegisterRunner
//     panics on a second (two packages claiming one kind is a build
//     mistake), and on a runner that leaves a field unset; New refuses a
//     worker whose runners' instances offer one capability twice.
//   - A leased unit ends in exactly one way: its result in the outbox, its
//     lease released to be leased again, or refused (cannot run). The
//     worker decides which from what Run returns, so a runner can neither
//     submit twice nor leave a lease held after it returns.
//   - A unit whose payload type no runner takes is refused with a reason
//     that names the type; one that does not unpack into its type is
//     released with the unpacking error; one with no payload is released.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// Runner runs the units of one kind of job on a worker. A kind registers
// it once, from its package's init, with RegisterRunner: Unit, and either
// Capability and Run (a runner with no state of its own) or New.
//
// Contract the worker relies on:
//   - Run is called once per leased unit, on the unit's own goroutine,
//     and several units of the kind may run at once (one per slot); a
//     runner keeps no state between units outside what it guards itself.
//   - unit is a message of Unit's type from the lease: it came from the
//     coordinator and is checked like any peer's input (no count in it is
//     a loop bound or an allocation size without a cap).
//   - Run honours ctx: it is cancelled when the coordinator no longer
//     needs the unit or the worker's grace on shutdown ends; Run then
//     returns soon, with ctx's error or its own.
//   - What Run returns decides the unit's end: a result goes to the
//     outbox and is submitted until the coordinator acknowledges it
//     (across coordinator restarts; the coordinator counts a unit once);
//     an error made with Refuse releases the lease as cannot-run, with
//     the error as the reason, and the coordinator stops offering the job
//     to this worker; any other error (ctx ended, the worker stopping, a
//     passing failure) releases the lease with the error's text as the
//     reason, for the unit to be leased again. A nil result with a nil
//     error is a runner bug: the lease is released saying so.
//   - Engines are started only as the Host makes them ready
//     (Host.ReadyEngines), and cores are taken from the worker's budget
//     (Host.TakeCores) before a game starts and given back after.
type Runner struct {
	// Unit returns a new, empty message of the payload type the runner
	// takes (the type in WorkUnit.plugin's Any, or of a typed field of
	// WorkUnit.payload).
	Unit func() proto.Message
	// Capability is what a worker with this runner offers the coordinator
	// (a base/capability string); the kind's coordinator side leases its
	// units only to workers that offer it. Unset with New.
	Capability string
	// Run runs one unit and returns its result, or why it did not. Unset
	// with New.
	Run func(ctx context.Context, host Host, unit proto.Message) (proto.Message, error)
	// New makes the runner of one worker from the worker's settings, once,
	// when the worker is made (worker.New, which fails with its error):
	// its state kept across units and what the worker offers for it.
	New func(Settings) (Instance, error)
}

// Instance is a runner on one worker (Runner.New): what it offers and its
// state, which lives as long as the worker.
type Instance interface {
	// Capabilities are what the worker offers for the runner (none: the
	// coordinator leases it no unit of the kind).
	Capabilities() []string
	// Run runs one unit, under Runner's contract.
	Run(ctx context.Context, host Host, unit proto.Message) (proto.Message, error)
	// Close ends what the instance keeps (engine processes), once, when
	// the worker's Run returns: no unit runs any more.
	Close()
}

// Host is what a runner may use of the worker that runs it. What becomes
// of the unit (result, release, refusal) is not asked of the host: Run's
// return value says it (see Runner).
type Host interface {
	// ReadyEngines makes engines ready to play (engines.go): an
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
	// JobID is the id of the unit's job.
	JobID() string
	// CountNodes says how many nodes the unit counted or searched: the
	// worker's nodes-per-second gauge and Stats.Nodes add them once the
	// result is queued. A unit that never calls it counts none.
	CountNodes(n uint64)
	// CountGames counts games the unit played to an end and engine
	// processes restarted after a crash, a hang or a failed start
	// (arbiter_worker_games_total, arbiter_worker_engine_restarts_total).
	CountGames(games, restarts uint64)
	// SetElapsed says how long the unit's own work took, which the
	// coordinator is told with its result (SubmitRequest.elapsed): a game
	// pair's play, without readying its engines and waiting for cores. A
	// unit that never calls it reports Run's whole time; the last call
	// counts.
	SetElapsed(d time.Duration)
	// Settings are the worker's settings a kind may need.
	Settings() Settings
}

// Settings are the worker's settings a runner may use: its operator's,
// not a kind's (two kinds may read one).
type Settings struct {
	// Builtin makes the embedded engine's players; nil: this worker does
	// not play the embedded engine (Config.Builtin).
	Builtin match.BuiltinFactory
	// Syzygy are the worker's tablebases (--syzygy DIR); nil: none.
	Syzygy *syzygy.Tablebase
	// HashMB is the size of the worker's hash table (--hash), at least 1.
	HashMB int
	// Table and StatsTable, when set, are tables shared with other
	// workers of the process (Config.Table, Config.StatsTable); nil: a
	// runner that keeps a table makes its own of HashMB.
	Table      *engine.PerftTable
	StatsTable *engine.PerftStatsTable
	// VerifyEngines are the engines its operator named (--verify-engine),
	// by their names: the programs other kinds' units may run (nil: none).
	VerifyEngines []verifyproto.LocalEngine
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
// unset (Unit, and Capability and Run or else New), and on a second runner
// for one payload type or one fixed capability: both are build mistakes,
// found when the program starts.
func RegisterRunner(r Runner) {
	fixed := r.Capability != "" && r.Run != nil
	if r.Unit == nil || fixed == (r.New != nil) || r.New != nil && (r.Capability != "" || r.Run != nil) {
		panic("worker: RegisterRunner: Unit must be set, and either Capability and Run, or New")
	}
	name := r.Unit().ProtoReflect().Descriptor().FullName()
	runnersMu.Lock()
	defer runnersMu.Unlock()
	if _, dup := runners[name]; dup {
		panic(fmt.Sprintf("worker: a runner for %s is registered twice", name))
	}
	for other, o := range runners {
		if fixed && o.Capability == r.Capability {
			panic(fmt.Sprintf("worker: runners for %s and %s both offer capability %q", other, name, r.Capability))
		}
	}
	runners[name] = r
}

// RunnerCapabilities are the fixed capabilities of the registered runners
// (Runner.Capability), sorted: what every worker offers for the kinds that
// plug in. A runner made by New says its own on each worker
// (Worker.Capabilities).
func RunnerCapabilities() []string {
	runnersMu.RLock()
	defer runnersMu.RUnlock()
	caps := make([]string, 0, len(runners))
	for _, r := range runners {
		if r.Capability != "" {
			caps = append(caps, r.Capability)
		}
	}
	slices.Sort(caps)
	return caps
}

// fixedRunner is the Instance of a runner without state per worker.
type fixedRunner struct{ r Runner }

func (f fixedRunner) Capabilities() []string { return []string{f.r.Capability} }
func (f fixedRunner) Close()                 {}
func (f fixedRunner) Run(ctx context.Context, host Host, unit proto.Message) (proto.Message, error) {
	return f.r.Run(ctx, host, unit)
}

// started is a registered runner on one worker.
type started struct {
	Instance
	unit func() proto.Message // Runner.Unit
}

// startRunners makes the instances of the registered runners for a worker
// with settings s. It fails when a runner's New does, or when two offer
// one capability; the instances made so far are closed then.
func startRunners(s Settings) (map[protoreflect.FullName]started, error) {
	runnersMu.RLock()
	defer runnersMu.RUnlock()
	out := make(map[protoreflect.FullName]started, len(runners))
	fail := func(err error) (map[protoreflect.FullName]started, error) {
		closeRunners(out)
		return nil, err
	}
	offeredBy := map[string]protoreflect.FullName{}
	for _, name := range slices.Sorted(maps.Keys(runners)) {
		r := runners[name]
		var in Instance = fixedRunner{r}
		if r.New != nil {
			var err error
			if in, err = r.New(s); err != nil {
				return fail(fmt.Errorf("worker: the runner of %s: %w", name, err))
			}
		}
		out[name] = started{Instance: in, unit: r.Unit}
		for _, c := range in.Capabilities() {
			if other, dup := offeredBy[c]; dup {
				return fail(fmt.Errorf("worker: the runners of %s and %s both offer capability %q", other, name, c))
			}
			offeredBy[c] = name
		}
	}
	return out, nil
}

func closeRunners(in map[protoreflect.FullName]started) {
	for _, r := range in {
		r.Close()
	}
}

// Capabilities are what the worker offers for the kinds whose runners
// are registered, sorted (Runner.Capability, Instance.Capabilities).
func (w *Worker) Capabilities() []string {
	var caps []string
	for _, r := range w.runners {
		caps = append(caps, r.Capabilities()...)
	}
	slices.Sort(caps)
	return caps
}

// payloadOf is the message unit carries in whichever field of
// WorkUnit.payload is set, and packed, the Any it came in when that
// field is plugin (nil for a typed field). A unit with no payload has
// none.
func payloadOf(unit *arbiterv1.WorkUnit) (msg protoreflect.Message, packed *anypb.Any) {
	m := unit.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("payload"))
	if fd == nil || fd.Message() == nil {
		return nil, nil
	}
	msg = m.Get(fd).Message()
	if a, ok := msg.Interface().(*anypb.Any); ok {
		return msg, a
	}
	return msg, nil
}

// answerOf is the Submit that carries res back the way its unit came:
// packed into SubmitRequest.plugin, or in the typed field of
// SubmitRequest.result that takes res's type.
func answerOf(res proto.Message, packed bool) (*arbiterv1.SubmitRequest, error) {
	if packed {
		a, err := anypb.New(res)
		if err != nil {
			return nil, fmt.Errorf("result not packed: %w", err)
		}
		return &arbiterv1.SubmitRequest{Result: &arbiterv1.SubmitRequest_Plugin{Plugin: a}}, nil
	}
	req := &arbiterv1.SubmitRequest{}
	m, name := req.ProtoReflect(), res.ProtoReflect().Descriptor().FullName()
	fields := m.Descriptor().Oneofs().ByName("result").Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.Message() != nil && fd.Message().FullName() == name {
			m.Set(fd, protoreflect.ValueOfMessage(res.ProtoReflect()))
			return req, nil
		}
	}
	return nil, fmt.Errorf("a result of type %s, which no field of SubmitRequest.result takes", name)
}

// runUnit runs a leased unit with the runner of its payload's type, and
// ends the unit as the runner's answer says.
func (w *Worker) runUnit(ctx, bg context.Context, h *held, wu *arbiterv1.WorkUnit, log *zap.Logger) {
	msg, packed := payloadOf(wu)
	if msg == nil {
		log.Warn("unit kind not supported; releasing")
		w.release(bg, h.leaseID, "unit kind not supported by this worker")
		return
	}
	name := msg.Descriptor().FullName()
	if packed != nil {
		name = packed.MessageName()
	}
	r, ok := w.runners[name]
	if !ok {
		// The type URL is the coordinator's word: cut before it is repeated.
		typeURL := truncate(string(name), 200)
		if packed != nil {
			typeURL = truncate(packed.GetTypeUrl(), 200)
		}
		why := fmt.Sprintf("unit type %q is not supported by this worker (no runner takes it)", typeURL)
		log.Warn("unit type not supported; refusing it", zap.String("type", typeURL))
		w.refuseUnit(bg, h.leaseID, why)
		return
	}
	unit := msg.Interface()
	if packed != nil {
		unit = r.unit()
		if err := packed.UnmarshalTo(unit); err != nil {
			log.Warn("malformed unit; releasing", zap.Error(err))
			w.release(bg, h.leaseID, fmt.Sprintf("malformed unit of type %s: %v", name, err))
			return
		}
	}
	rh := &runnerHost{w: w, jobID: h.jobID, log: log}
	start := time.Now()
	res, err := r.Run(ctx, rh, unit)
	elapsed := time.Since(start)
	if rh.elapsed != nil {
		elapsed = *rh.elapsed
	}
	if err == nil && (res == nil || !res.ProtoReflect().IsValid()) { // nil, or a typed nil
		err = fmt.Errorf("the runner of %s returned neither a result nor an error", name)
		log.Error("runner bug; releasing the unit", zap.Error(err))
	}
	if err != nil {
		w.giveBack(bg, h, err, log)
		return
	}
	answer, err := answerOf(res, packed != nil)
	if err != nil {
		log.Error("result not sent; releasing", zap.Error(err))
		w.release(bg, h.leaseID, err.Error())
		return
	}
	if packed != nil {
		log.Info("unit run", zap.String("type", string(name)), zap.Duration("elapsed", elapsed))
	}
	if rh.counted {
		w.metrics.unitDone(rh.nodes, elapsed)
	}
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, elapsed: elapsed, answer: answer}, rh.nodes)
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
	w       *Worker
	jobID   string
	log     *zap.Logger
	nodes   uint64
	counted bool
	elapsed *time.Duration // SetElapsed's; nil: Run's whole time
}

func (rh *runnerHost) ReadyEngines(ctx context.Context, engines ...*arbiterv1.EngineSpec) ([]*arbiterv1.EngineSpec, func(), error) {
	return rh.w.readyEngines(ctx, rh.jobID, engines, rh.log)
}

func (rh *runnerHost) TakeCores(ctx context.Context, engines ...*arbiterv1.EngineSpec) (func(), error) {
	return rh.w.takeCores(ctx, engines)
}

func (rh *runnerHost) Logger() *zap.Logger { return rh.log }
func (rh *runnerHost) JobID() string       { return rh.jobID }
func (rh *runnerHost) Settings() Settings  { return rh.w.settings() }

// CountNodes adds n, saturating: a unit past 2^64 nodes counts as 2^64-1
// for the rate.
func (rh *runnerHost) CountNodes(n uint64) {
	rh.counted = true
	if rh.nodes+n < rh.nodes {
		rh.nodes = ^uint64(0)
		return
	}
	rh.nodes += n
}

func (rh *runnerHost) CountGames(games, restarts uint64) { rh.w.metrics.gamesPlayed(games, restarts) }
func (rh *runnerHost) SetElapsed(d time.Duration)        { rh.elapsed = &d }

// settings are the worker's Settings.
func (w *Worker) settings() Settings {
	return Settings{Builtin: w.cfg.Builtin, Syzygy: w.cfg.Syzygy, HashMB: w.cfg.HashMB, Table: w.cfg.Table,
		StatsTable: w.cfg.StatsTable, VerifyEngines: w.cfg.VerifyEngines}
}
