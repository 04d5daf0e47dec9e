package coordinator

// Distributed `arbiter verify`: the coordinator's side.
//
// The client keeps the descent (package verify) and asks one engine query
// at a time through VerifyService.RunVerifyUnit. Each query is a unit that
// is leased, like a perft unit, to one worker, but only to a worker that
// advertised the unit's engine ("verify-engine:NAME"); a worker without it
// never sees the unit. Leases come from the same lease manager as perft
// leases: they have deadlines, heartbeats extend them, an expired or
// released lease puts the unit back in line (ahead of fresh units), and the
// first result that passes the shape check is the unit's result; later
// copies are compared (DUPLICATE or MISMATCH), never taken.
//
// Why in memory and not in the store: a verify unit is a pure function of
// its content (engine name, arguments, options, position, depth), and the
// client names it by a digest of that content, so the whole state of a
// verification is the client's descent. If the coordinator restarts, the
// client's long poll fails, it reconnects and asks again under the same
// names: each unit is created again, a worker that still holds a lease from
// before adopts it on its next heartbeat, and a result computed before the
// restart is accepted for the unit asked again. Nothing is counted twice
// because nothing is added up here: the client takes one answer per query.
// Sessions a client stops asking about are dropped after verifyIdle.

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/internal/logging"
	"github.com/arbiter-chess/arbiter/internal/verifyproto"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

const (
	// verifyPrefix starts verify unit and job ids ("verify.SESSION.KEY").
	verifyPrefix = "verify."
	// verifyIdle drops a session no client asked about for this long.
	verifyIdle = 2 * time.Minute
	// verifyLive is how recently a worker must have called to count as
	// capable in RunVerifyUnit's answer.
	verifyLive = time.Minute
	// maxVerifyWait bounds a RunVerifyUnit long poll.
	maxVerifyWait = 10 * time.Second
)

var verifyIDRE = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// verifyQueue is the verify units' state, guarded by Coordinator.mu. The
// zero value is ready (maps are made on first use).
type verifyQueue struct {
	sessions  map[string]*verifySession
	units     map[string]*vunit
	pending   []*vunit                   // units wanting a lease, oldest first (re-issued ones in front)
	caps      map[string]map[string]bool // worker id → engine names
	capsReady bool                       // caps of workers registered before this run loaded
	closed    map[string]time.Time       // recently closed or expired sessions
	lastSweep time.Time
}

type verifySession struct {
	id       string
	lastUsed time.Time
	units    map[string]*vunit
}

type vunit struct {
	id      string
	sess    *verifySession
	payload *arbiterv1.VerifyUnit
	engine  string
	result  *arbiterv1.VerifyUnitResult
	worker  string
	done    chan struct{}
	queued  bool
	issued  int // leases granted
}

func isVerifyID(id string) bool { return strings.HasPrefix(id, verifyPrefix) }

// verifySessionOf returns the session part of a verify unit id.
func verifySessionOf(unitID string) string {
	s := strings.TrimPrefix(unitID, verifyPrefix)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i]
	}
	return s
}

// vq returns the verify state, making its maps. Caller holds mu.
func (c *Coordinator) vq() *verifyQueue {
	q := &c.verify
	if q.units == nil {
		q.sessions = make(map[string]*verifySession)
		q.units = make(map[string]*vunit)
		q.caps = make(map[string]map[string]bool)
		q.closed = make(map[string]time.Time)
	}
	return q
}

// verifyRegister records the engines a worker advertises. Caller holds mu.
func (c *Coordinator) verifyRegister(workerID string, caps []string) {
	q := c.vq()
	names := make(map[string]bool)
	for _, s := range caps {
		if n, ok := strings.CutPrefix(s, verifyproto.CapabilityPrefix); ok && verifyproto.ValidName(n) {
			names[n] = true
		}
	}
	q.caps[workerID] = names
	if len(names) > 0 {
		c.signalWork()
	}
}

// verifyLoadCaps reads, once per coordinator run, the capabilities of
// workers registered before it (they do not register again, and the store
// has what they advertised).
func (c *Coordinator) verifyLoadCaps(ctx context.Context) {
	c.mu.Lock()
	ready := c.vq().capsReady
	c.mu.Unlock()
	if ready {
		return
	}
	ws, err := c.store.Workers(ctx)
	if err != nil {
		return // try again on the next lease
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.vq()
	for _, w := range ws {
		if _, ok := q.caps[w.ID]; ok {
			continue
		}
		var rec struct {
			Capabilities []string `json:"capabilities"`
		}
		if json.Unmarshal([]byte(w.Capabilities), &rec) == nil {
			c.verifyRegister(w.ID, rec.Capabilities)
		}
	}
	q.capsReady = true
}

// verifySweep drops sessions no client asked about for verifyIdle. Caller
// holds mu.
func (c *Coordinator) verifySweep(now time.Time) {
	q := c.vq()
	if now.Sub(q.lastSweep) < 5*time.Second {
		return
	}
	q.lastSweep = now
	for id, s := range q.sessions {
		if now.Sub(s.lastUsed) > verifyIdle {
			n := c.verifyDropSession(s, now)
			c.log.Info("verify session expired", zap.String(logging.JobID, verifyPrefix+id), zap.Int("dropped", n))
		}
	}
	for id, t := range q.closed {
		if now.Sub(t) > 10*verifyIdle {
			delete(q.closed, id)
		}
	}
}

// verifyDropSession forgets a session, its units and their leases, and
// returns how many units were still pending. Caller holds mu.
func (c *Coordinator) verifyDropSession(s *verifySession, now time.Time) int {
	q := c.vq()
	n := 0
	for _, u := range s.units {
		if u.result == nil {
			n++
		}
		for _, l := range c.leases.ForUnit(u.id) {
			c.leases.End(l.ID)
		}
		delete(q.units, u.id)
	}
	delete(q.sessions, s.id)
	q.closed[s.id] = now
	return n
}

// verifyCapable counts live workers that advertise engine. Caller holds mu.
func (c *Coordinator) verifyCapable(engine string, now time.Time) int {
	n := 0
	for id, names := range c.vq().caps {
		if w := c.workers[id]; w != nil && names[engine] && now.Sub(w.lastSeen) < verifyLive {
			n++
		}
	}
	return n
}

// verifyWants reports whether u should be leased. Caller holds mu.
func (c *Coordinator) verifyWants(u *vunit) bool {
	return u.result == nil && c.vq().units[u.id] == u && len(c.leases.ForUnit(u.id)) == 0
}

// verifyPick leases the oldest unit worker w has the engine for. Caller
// holds mu.
func (c *Coordinator) verifyPick(w string, now time.Time) (*arbiterv1.WorkUnit, *arbiterv1.Lease, bool) {
	q := c.vq()
	if len(q.pending) == 0 {
		return nil, nil, false
	}
	c.verifySweep(now)
	for len(q.pending) > 0 && !c.verifyWants(q.pending[0]) {
		q.pending[0].queued = false
		q.pending = q.pending[1:]
	}
	names := q.caps[w]
	if len(names) == 0 {
		return nil, nil, false
	}
	for k, u := range q.pending {
		if !names[u.engine] || !c.verifyWants(u) {
			continue
		}
		q.pending = append(q.pending[:k:k], q.pending[k+1:]...)
		u.queued = false
		u.issued++
		l := c.leases.Grant(u.id, "", w, now)
		c.log.Debug("verify lease granted", zap.String(logging.UnitID, u.id), zap.String(logging.WorkerID, w),
			zap.String(logging.LeaseID, l.ID), zap.Int("issued", u.issued))
		wu := &arbiterv1.WorkUnit{UnitId: u.id, JobId: verifyPrefix + u.sess.id,
			Payload: &arbiterv1.WorkUnit_Verify{Verify: u.payload}}
		return wu, &arbiterv1.Lease{LeaseId: l.ID, Deadline: timestamppb.New(l.Deadline), Unit: wu}, true
	}
	return nil, nil, false
}

// verifyRequeue puts a verify unit whose lease ended without a result back
// in line, ahead of fresh units. It is a no-op for other ids. Caller holds
// mu.
func (c *Coordinator) verifyRequeue(unitID string) {
	if !isVerifyID(unitID) {
		return
	}
	q := c.vq()
	u := q.units[unitID]
	if u == nil || u.queued || !c.verifyWants(u) {
		return
	}
	u.queued = true
	q.pending = append([]*vunit{u}, q.pending...)
	c.signalWork()
}

// verifyHeartbeat answers a heartbeat for a verify lease the lease manager
// no longer has (expired, or issued before a restart). Caller holds mu.
func (c *Coordinator) verifyHeartbeat(leaseID, unitID, w string, now time.Time) (arbiterv1.LeaseState, time.Time) {
	q := c.vq()
	u := q.units[unitID]
	switch {
	case u == nil:
		if _, closed := q.closed[verifySessionOf(unitID)]; closed {
			return arbiterv1.LeaseState_LEASE_STATE_CANCELLED, time.Time{}
		}
		// Unknown (a restart): the client will ask again; keep computing.
		return arbiterv1.LeaseState_LEASE_STATE_LOST, time.Time{}
	case u.result != nil:
		return arbiterv1.LeaseState_LEASE_STATE_CANCELLED, time.Time{}
	case c.verifyWants(u):
		l := c.leases.Adopt(leaseID, unitID, "", w, now)
		c.log.Info("verify lease adopted", zap.String(logging.LeaseID, leaseID), zap.String(logging.UnitID, unitID),
			zap.String(logging.WorkerID, w))
		return arbiterv1.LeaseState_LEASE_STATE_ACTIVE, l.Deadline
	}
	return arbiterv1.LeaseState_LEASE_STATE_LOST, time.Time{}
}

// verifySubmit takes a worker's result for a verify unit: the first that
// passes the shape check is the unit's result.
func (c *Coordinator) verifySubmit(req *arbiterv1.SubmitRequest, res *arbiterv1.VerifyUnitResult) (*arbiterv1.SubmitResponse, error) {
	w, unitID := req.GetWorkerId(), req.GetUnitId()
	log := c.log.With(zap.String(logging.UnitID, unitID), zap.String(logging.WorkerID, w), zap.String(logging.LeaseID, req.GetLeaseId()))
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.touch(w) {
		return nil, errUnknownWorker(w)
	}
	if !isVerifyID(unitID) {
		return nil, status.Errorf(codes.InvalidArgument, "unit %s is not a verify unit; the result is a verify result", unitID)
	}
	if err := verifyproto.CheckResult(res); err != nil {
		log.Warn("verify result refused", zap.Error(err))
		return nil, status.Errorf(codes.InvalidArgument, "unit %s: %v", unitID, err)
	}
	q := c.vq()
	u := q.units[unitID]
	for _, l := range c.leases.ForUnit(unitID) {
		if l.WorkerID == w {
			c.leases.End(l.ID)
		}
	}
	if u == nil {
		// Session closed or expired, or not asked again since a restart.
		log.Info("verify result discarded: unit unknown")
		return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED}, nil
	}
	if u.result != nil {
		if proto.Equal(u.result, res) {
			return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE}, nil
		}
		log.Warn("verify result differs from the accepted one (the engine under test is not deterministic?)",
			zap.String("accepted_from", u.worker))
		return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_MISMATCH}, nil
	}
	u.result, u.worker = res, w
	// Other workers' leases on it are over: their heartbeat says CANCELLED.
	for _, l := range c.leases.ForUnit(unitID) {
		c.leases.End(l.ID)
	}
	close(u.done)
	log.Debug("verify result accepted", zap.Duration("elapsed", req.GetElapsed().AsDuration()),
		zap.Bool("engine_error", res.GetEngineError() != nil))
	return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED}, nil
}

// VerifyServer is the coordinator's VerifyService.
type VerifyServer struct {
	arbiterv1.UnimplementedVerifyServiceServer
	c *Coordinator
}

// VerifyServer returns the VerifyService implementation.
func (c *Coordinator) VerifyServer() *VerifyServer { return &VerifyServer{c: c} }

// RunVerifyUnit implements VerifyService.
func (s *VerifyServer) RunVerifyUnit(ctx context.Context, req *arbiterv1.RunVerifyUnitRequest) (*arbiterv1.RunVerifyUnitResponse, error) {
	c := s.c
	sid, key := req.GetSessionId(), req.GetKey()
	if len(sid) < 8 || len(sid) > 64 || !verifyIDRE.MatchString(sid) {
		return nil, status.Errorf(codes.InvalidArgument, "session id %q: want 8 to 64 letters, digits or '-'", sid)
	}
	if len(key) < 1 || len(key) > 64 || !verifyIDRE.MatchString(key) {
		return nil, status.Errorf(codes.InvalidArgument, "unit key %q: want 1 to 64 letters, digits or '-'", key)
	}
	if err := verifyproto.CheckUnit(req.GetUnit()); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "verify unit: %v", err)
	}
	wait := min(req.GetWait().AsDuration(), maxVerifyWait)
	id := verifyPrefix + sid + "." + key

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, status.Error(codes.Unavailable, "coordinator shutting down")
	}
	now := c.cfg.Now()
	q := c.vq()
	c.verifySweep(now)
	sess := q.sessions[sid]
	if sess == nil {
		sess = &verifySession{id: sid, units: make(map[string]*vunit)}
		q.sessions[sid] = sess
		delete(q.closed, sid)
		c.log.Info("verify session started", zap.String(logging.JobID, verifyPrefix+sid), zap.String("engine", req.GetUnit().GetEngine().GetName()))
	}
	sess.lastUsed = now
	u := q.units[id]
	if u == nil {
		u = &vunit{id: id, sess: sess, payload: req.GetUnit(), engine: req.GetUnit().GetEngine().GetName(), done: make(chan struct{}), queued: true}
		q.units[id] = u
		sess.units[id] = u
		q.pending = append(q.pending, u)
		c.signalWork()
	} else if !proto.Equal(u.payload, req.GetUnit()) {
		c.mu.Unlock()
		return nil, status.Errorf(codes.InvalidArgument, "unit key %q already names a different unit in session %s", key, sid)
	}
	done := u.done
	c.mu.Unlock()

	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &arbiterv1.RunVerifyUnitResponse{UnitId: id, State: arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_PENDING,
		CapableWorkers: uint32(c.verifyCapable(u.engine, c.cfg.Now()))}
	if u.result != nil {
		resp.State, resp.Result, resp.WorkerId = arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_DONE, u.result, u.worker
	}
	return resp, nil
}

// CloseVerifySession implements VerifyService.
func (s *VerifyServer) CloseVerifySession(ctx context.Context, req *arbiterv1.CloseVerifySessionRequest) (*arbiterv1.CloseVerifySessionResponse, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.vq()
	sess := q.sessions[req.GetSessionId()]
	if sess == nil {
		return &arbiterv1.CloseVerifySessionResponse{}, nil
	}
	n := c.verifyDropSession(sess, c.cfg.Now())
	c.log.Info("verify session closed", zap.String(logging.JobID, verifyPrefix+sess.id), zap.Int("dropped", n))
	return &arbiterv1.CloseVerifySessionResponse{Dropped: uint32(n)}, nil
}
