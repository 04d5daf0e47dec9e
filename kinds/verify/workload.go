package verify

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// Kind is the workload's kind.
const Kind = "verify"

// Sessions are opened through VerifyService, not submitted: the kind has
// no spec.
func init() {
	store.RegisterSchema(schema)
	workload.Register(workload.Kind{
		Name: Kind,
		New: func(d workload.Deps) (core.Workload, error) {
			return New(Config{Logger: d.Logger, Now: d.Now, Store: d.Store, Approvals: d.Approvals}), nil
		},
		// A session names an engine by the name a worker's operator gave it
		// (--verify-engine; its path never travels), but hands it the
		// client's own arguments and UCI options.
		Runs:  workload.SubmittedPrograms,
		Order: 40,
	})
}

// Prefix starts verify unit ids ("verify.SESSION.KEY") and job ids
// ("verify.SESSION").
const Prefix = verifyproto.JobPrefix

const (
	// Idle drops a session no client asked about for this long.
	Idle = 2 * time.Minute
	// Live is how recently a worker must have registered or been offered
	// work to count as capable in RunUnit's answer.
	Live = time.Minute
	// MaxWait bounds a RunUnit long poll.
	MaxWait = 10 * time.Second
	// MaxSessions and MaxUnitsPerSession bound what clients keep here.
	MaxSessions        = verifyproto.MaxSessions
	MaxUnitsPerSession = 100_000
)

// Priority is the scheduling priority of verify units: a client's descent
// waits on each, so they go before batch work.
const Priority = 1 << 30

var idRE = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// Config tunes the workload.
type Config struct {
	Host   core.Host
	Logger *zap.Logger
	Now    func() time.Time
	// Store keeps the sessions' reports (report.go); nil: reports are
	// refused.
	Store *store.Store
	// Approvals is the approval rule (nil: off). A session is interactive,
	// a client waiting on each unit, so one the rule would hold is refused
	// at its first unit rather than held.
	Approvals core.Approvals
}

// Workload is the verify workload.
type Workload struct {
	host  core.Host
	log   *zap.Logger
	now   func() time.Time
	store *store.Store
	gate  core.Approvals

	mu        sync.Mutex
	sessions  map[string]*session
	units     map[string]*unit
	pending   []*unit               // units wanting a lease, oldest first (re-issued ones in front)
	seen      map[string]seenWorker // by worker id: who asked for work lately, with which engines
	closed    map[string]time.Time  // recently closed or expired sessions
	lastSweep time.Time
}

type session struct {
	id       string
	owner    string
	engine   string // the first unit's engine
	started  time.Time
	lastUsed time.Time
	units    map[string]*unit
}

type unit struct {
	id      string
	sess    *session
	payload *arbiterv1.VerifyUnit
	engine  string
	result  *arbiterv1.VerifyUnitResult
	worker  string
	done    chan struct{}
	queued  bool
	holder  string // worker holding the live lease, "" when none
	issued  int    // leases granted
}

// New returns the workload.
func New(cfg Config) *Workload {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Workload{host: cfg.Host, log: cfg.Logger, now: cfg.Now, store: cfg.Store, gate: cfg.Approvals,
		sessions: map[string]*session{}, units: map[string]*unit{}, seen: map[string]seenWorker{}, closed: map[string]time.Time{}}
}

// SetHost gives the workload the core to signal.
func (w *Workload) SetHost(h core.Host) { w.host = h }

// ready is nil while the core serves (always, without a core: a workload
// built alone in a test).
func (w *Workload) ready() error {
	if w.host == nil {
		return nil
	}
	return w.host.Ready()
}

// endJobLeases ends the leases of a session's job (closed or expired).
// Call it without mu.
func (w *Workload) endJobLeases(jobID string) {
	if w.host != nil {
		w.host.EndJobLeases(jobID)
	}
}

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

// Load implements core.Workload: verify sessions are not stored.
func (w *Workload) Load(context.Context) ([]core.JobRef, error) { return nil, nil }

// Create implements core.Workload: sessions are created by RunUnit.
func (w *Workload) Create(context.Context, any, string) (core.JobRef, error) {
	return core.JobRef{}, apierr.Invalid("verify sessions start with RunVerifyUnit")
}

func sessionOf(unitID string) string {
	s := strings.TrimPrefix(unitID, Prefix)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i]
	}
	return s
}

// sweep drops sessions no client asked about for Idle. Caller holds mu.
func (w *Workload) sweep(now time.Time) []string {
	if now.Sub(w.lastSweep) < 5*time.Second {
		return nil
	}
	w.lastSweep = now
	var dropped []string
	for id, s := range w.sessions {
		if now.Sub(s.lastUsed) > Idle {
			n := w.drop(s, now)
			dropped = append(dropped, Prefix+id)
			w.log.Info("verify session expired", zap.String(logging.JobID, Prefix+id), zap.Int("dropped", n))
		}
	}
	for id, t := range w.closed {
		if now.Sub(t) > 10*Idle {
			delete(w.closed, id)
		}
	}
	for id, sw := range w.seen {
		if now.Sub(sw.at) > Live {
			delete(w.seen, id)
		}
	}
	return dropped
}

// drop forgets a session and its units and returns how many were still
// pending. Caller holds mu; the caller ends the session's leases.
func (w *Workload) drop(s *session, now time.Time) int {
	n := 0
	for _, u := range s.units {
		if u.result == nil {
			n++
		}
		delete(w.units, u.id)
	}
	delete(w.sessions, s.id)
	w.closed[s.id] = now
	return n
}

// wants reports whether u should be leased. Caller holds mu.
func (w *Workload) wants(u *unit) bool {
	return u.result == nil && w.units[u.id] == u && u.holder == ""
}

// engines a worker advertises.
func engines(wk *core.Worker) map[string]bool {
	out := map[string]bool{}
	for _, n := range wk.TagsWithPrefix(capability.VerifyEnginePrefix) {
		if verifyproto.ValidName(n) {
			out[n] = true
		}
	}
	return out
}

// Candidates implements core.Workload: verify units go first; one candidate
// stands for every session.
func (w *Workload) Candidates(wk *core.Worker, out []core.Candidate) []core.Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := engines(wk)
	if len(names) > 0 {
		w.seen[wk.ID] = seenWorker{at: w.now(), engines: names}
	}
	ready := false
	for _, u := range w.pending {
		if names[u.engine] && w.wants(u) {
			ready = true
			break
		}
	}
	if !ready && len(w.pending) == 0 {
		return out
	}
	return append(out, core.Candidate{JobID: Kind, Priority: Priority, Share: 1, Ready: ready})
}

// Take implements core.Workload: the oldest unit wk has the engine for.
func (w *Workload) Take(_ string, wk *core.Worker, now time.Time) (string, any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) > 0 && !w.wants(w.pending[0]) {
		w.pending[0].queued = false
		w.pending = w.pending[1:]
	}
	names := engines(wk)
	for k, u := range w.pending {
		if !names[u.engine] || !w.wants(u) {
			continue
		}
		w.pending = append(w.pending[:k:k], w.pending[k+1:]...)
		u.queued, u.holder = false, wk.ID
		u.issued++
		return u.id, &arbiterv1.WorkUnit{UnitId: u.id, JobId: Prefix + u.sess.id,
			Payload: &arbiterv1.WorkUnit_Verify{Verify: u.payload}}, true
	}
	return "", nil, false
}

// requeue puts u back in line ahead of fresh units. Caller holds mu.
func (w *Workload) requeue(u *unit) {
	if u.queued || !w.wants(u) {
		return
	}
	u.queued = true
	w.pending = append([]*unit{u}, w.pending...)
	if w.host != nil {
		w.host.WorkAvailable()
	}
}

// Ended implements core.Workload.
func (w *Workload) Ended(l core.Lease, why core.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[l.UnitID]
	if u == nil || u.holder != l.WorkerID {
		return
	}
	u.holder = ""
	w.requeue(u)
}

// Locate implements core.Workload: every well-formed verify unit id is
// ours, known or not (a restart forgets units until their client asks
// again).
func (w *Workload) Locate(unitID string) (string, bool) {
	if !strings.HasPrefix(unitID, Prefix) {
		return "", false
	}
	return Prefix + sessionOf(unitID), true
}

// Adopt implements core.Workload.
func (w *Workload) Adopt(l core.Lease, wk *core.Worker) core.Adoption {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[l.UnitID]
	switch {
	case u == nil:
		if _, closed := w.closed[sessionOf(l.UnitID)]; closed {
			return core.AdoptCancelled
		}
		// Unknown (a restart): the client will ask again; keep computing.
		return core.AdoptLost
	case u.result != nil:
		return core.AdoptCancelled
	case w.wants(u) && engines(wk)[u.engine]:
		u.holder = wk.ID
		return core.AdoptActive
	}
	return core.AdoptLost
}

// Result implements core.Workload: the first result that passes the shape
// check is the unit's result.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	res, ok := rc.Result.(*arbiterv1.VerifyUnitResult)
	if !ok || res == nil {
		return core.Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult,
			"unit %s is a verify unit; the result is not a verify result", apierr.Q(rc.Lease.UnitID))
	}
	if err := verifyproto.CheckResult(res); err != nil {
		return core.Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "unit %s: %v", apierr.Q(rc.Lease.UnitID), err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[rc.Lease.UnitID]
	log := w.log.With(zap.String(logging.UnitID, rc.Lease.UnitID), zap.String(logging.WorkerID, rc.Worker.ID))
	if u == nil {
		// Session closed or expired, or not asked again since a restart.
		log.Info("verify result discarded: unit unknown")
		return core.Outcome{Verdict: core.Discarded}, nil
	}
	if u.holder == rc.Worker.ID {
		u.holder = ""
	}
	if u.result != nil {
		if proto.Equal(u.result, res) {
			return core.Outcome{Verdict: core.Duplicate}, nil
		}
		log.Warn("verify result differs from the accepted one (the engine under test is not deterministic?)",
			zap.String("accepted_from", u.worker))
		return core.Outcome{Verdict: core.Mismatch}, nil
	}
	u.result, u.worker, u.holder = res, rc.Worker.ID, ""
	close(u.done)
	log.Debug("verify result accepted", zap.Duration("elapsed", rc.Elapsed), zap.Bool("engine_error", res.GetEngineError() != nil))
	// Other workers' leases on it are over: their heartbeat says CANCELLED.
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true}, nil
}

// Cancel implements core.Workload.
func (w *Workload) Cancel(ctx context.Context, jobID, reason string) error {
	_, err := w.CloseSession(identity.Bootstrap, strings.TrimPrefix(jobID, Prefix))
	return err
}

// Snapshot implements core.Workload: sessions are not listed as jobs.
func (w *Workload) Snapshot(string, bool) (any, bool) { return nil, false }

// Stats implements core.Workload.
func (w *Workload) Stats() core.Stats { return core.Stats{} }

// RunUnit creates the unit (session id, key) if it does not exist and
// waits up to wait for its result. It returns the unit's id, its result
// (nil while pending), the worker that computed it, and the number of live
// workers with the unit's engine; dropped names sessions that expired (the
// service ends their leases).
func (w *Workload) RunUnit(ctx context.Context, caller identity.Identity, sid, key string, payload *arbiterv1.VerifyUnit, wait time.Duration) (RunAnswer, error) {
	if !caller.CanSubmit() {
		return RunAnswer{}, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s, which may not run verify sessions", apierr.Q(caller.Name), caller.Role)
	}
	if len(sid) < 8 || len(sid) > 64 || !idRE.MatchString(sid) {
		return RunAnswer{}, apierr.Invalid("session id %s: want 8 to 64 letters, digits or '-'", apierr.Q(sid))
	}
	if len(key) < 1 || len(key) > 64 || !idRE.MatchString(key) {
		return RunAnswer{}, apierr.Invalid("unit key %s: want 1 to 64 letters, digits or '-'", apierr.Q(key))
	}
	if err := verifyproto.CheckUnit(payload); err != nil {
		return RunAnswer{}, apierr.Invalid("verify unit: %v", err)
	}
	if err := w.mayStart(ctx, caller, sid); err != nil {
		return RunAnswer{}, err
	}
	wait = min(wait, MaxWait)
	id := Prefix + sid + "." + key

	w.mu.Lock()
	now := w.now()
	dropped := w.sweep(now)
	sess := w.sessions[sid]
	if sess == nil {
		if len(w.sessions) >= MaxSessions {
			w.mu.Unlock()
			return RunAnswer{Dropped: dropped}, apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
				"%d verify sessions are open (the limit); close finished ones", MaxSessions)
		}
		sess = &session{id: sid, owner: caller.Name, engine: payload.GetEngine().GetName(), started: now, units: map[string]*unit{}}
		w.sessions[sid] = sess
		delete(w.closed, sid)
		w.log.Info("verify session started", zap.String(logging.JobID, Prefix+sid), zap.String("engine", payload.GetEngine().GetName()),
			zap.String("owner", caller.Name))
	} else if sess.owner != caller.Name && !caller.IsAdmin() {
		w.mu.Unlock()
		return RunAnswer{Dropped: dropped}, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"verify session %s belongs to another identity", apierr.Q(sid))
	}
	sess.lastUsed = now
	u := w.units[id]
	if u == nil {
		if len(sess.units) >= MaxUnitsPerSession {
			w.mu.Unlock()
			return RunAnswer{Dropped: dropped}, apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
				"verify session %s has %d units (the limit)", sid, MaxUnitsPerSession)
		}
		u = &unit{id: id, sess: sess, payload: proto.Clone(payload).(*arbiterv1.VerifyUnit), engine: payload.GetEngine().GetName(),
			done: make(chan struct{}), queued: true}
		w.units[id] = u
		sess.units[id] = u
		w.pending = append(w.pending, u)
		if w.host != nil {
			w.host.WorkAvailable()
		}
	} else if !proto.Equal(u.payload, payload) {
		w.mu.Unlock()
		return RunAnswer{Dropped: dropped}, apierr.Invalid("unit key %s already names a different unit in session %s", apierr.Q(key), sid)
	}
	done := u.done
	w.mu.Unlock()

	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
			return RunAnswer{Dropped: dropped}, ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ans := RunAnswer{UnitID: id, Capable: w.capable(u.engine), Dropped: dropped}
	if u.result != nil {
		ans.Result, ans.Worker = u.result, u.worker
	}
	return ans, nil
}

// RunAnswer is RunUnit's answer.
type RunAnswer struct {
	UnitID  string
	Result  *arbiterv1.VerifyUnitResult
	Worker  string
	Capable int
	Dropped []string
}

type seenWorker struct {
	at      time.Time
	engines map[string]bool
}

// mayStart refuses a new session of a caller the approval rule would hold
// (workload.SubmittedPrograms): the session's arguments and options reach
// a worker's program, and nothing an approver has not seen may. A session
// already open goes on (it was started under the rule).
func (w *Workload) mayStart(ctx context.Context, caller identity.Identity, sid string) error {
	if w.gate == nil {
		return nil
	}
	w.mu.Lock()
	_, open := w.sessions[sid]
	w.mu.Unlock()
	if open {
		return nil
	}
	hold, err := w.gate.Hold(ctx, caller, Kind)
	if err != nil {
		return err
	}
	if hold {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s: this coordinator approves the jobs of accounts with role user (--approval), and a verify session, which hands its arguments and options to a worker's engine, cannot wait for an approver: ask an approver or an admin to run it, or to make the account an approver",
			apierr.Q(caller.Name))
	}
	return nil
}

// capable counts workers seen within Live that have engine. Caller holds
// mu. Workers are seen when they ask for work (Candidates).
func (w *Workload) capable(engine string) int {
	n := 0
	now := w.now()
	for _, sw := range w.seen {
		if sw.engines[engine] && now.Sub(sw.at) <= Live {
			n++
		}
	}
	return n
}

// CloseSession drops a session's pending units; the caller ends the
// session's leases (Host.EndJobLeases(Prefix+sid)).
func (w *Workload) CloseSession(caller identity.Identity, sid string) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sess := w.sessions[sid]
	if sess == nil {
		return 0, nil
	}
	if sess.owner != caller.Name && !caller.IsAdmin() {
		return 0, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "verify session %s belongs to another identity", apierr.Q(sid))
	}
	n := w.drop(sess, w.now())
	w.log.Info("verify session closed", zap.String(logging.JobID, Prefix+sid), zap.Int("dropped", n))
	return n, nil
}
