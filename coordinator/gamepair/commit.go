package gamepair

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// The commit step of a batch result, the same for every game workload: the
// result is checked against its batch, the job's next state is decided on
// copies under Mu (Hooks.Next: the SPRT after the batch for a test, θ after
// the update for a tune), the batch, its PGNs, the next state, the events
// and, when the batch ends the job, its final state are stored in one
// transaction without Mu, and only then does memory change and the worker
// get its answer. CommitMu keeps commits and their decisions in order.

// Counted is a batch as counted: the row a workload stores of it (a test's
// batches row, a tune's tune_updates row) and reads back on Load.
type Counted struct {
	UnitID, WorkerID    string
	Idx, Pairs          int
	Penta               [5]int64
	Wins, Draws, Losses int64  // engine A's
	Incidents           string // EncodeIncidents
	LeasedAt, At        time.Time
	ElapsedMS           int64
}

// CheckCounts refuses counts that do not make the batch's pairs, so that no
// stored row can make a count wrong.
func (c *Counted) CheckCounts() error {
	penta := sprt.Pentanomial(c.Penta)
	res := sprt.Results{Wins: c.Wins, Draws: c.Draws, Losses: c.Losses, Pentanomial: &penta}
	if penta.Pairs() != int64(c.Pairs) || res.Wins+res.Draws+res.Losses != int64(2*c.Pairs) {
		return fmt.Errorf("counts %v, W/D/L %d/%d/%d do not make %d pairs", c.Penta, c.Wins, c.Draws, c.Losses, c.Pairs)
	}
	return res.Validate()
}

// Accepted is a batch result that passed its checks, as Hooks.Next sees
// it: the row to store, the checked result, and a logger naming it.
type Accepted struct {
	Counted
	Result *Result
	Log    *zap.Logger
}

// Step is a job's next state after an accepted batch, from Hooks.Next.
type Step struct {
	// Change is the job's final state when the batch ends it (nil: the
	// job runs on).
	Change *store.JobChange
	// Commit stores, in one transaction, the batch, its PGNs, the job's
	// next state, change (when not nil) and the events.
	Commit func(ctx context.Context, pgns []string, change *store.JobChange, events []store.Event) error
	// Apply makes the next state the job's once it is stored (under Mu);
	// it returns what the log line of the batch adds.
	Apply func() []zap.Field
}

// refuseLate answers a checked result that may not count now: its job
// ended, its batch is counted already, its identity was excluded from
// the job after the lease went out, or it is an untrusted identity's in
// a job no replay can check (trust.go: it gets no batch of such a job,
// but a lease from before may still answer). Caller holds CommitMu and
// Mu.
func (s *Set[J]) refuseLate(j J, idx int, rc core.ResultCall, trusted, checkable bool, log *zap.Logger) (core.Outcome, bool) {
	b, wk := j.Base(), rc.Worker
	switch {
	case !b.Running():
		return core.Outcome{Verdict: core.Discarded}, true
	case b.Batches.Stored(idx):
		// Counted already (or its row is in the store): never again.
		if rc.Live {
			b.Batches.Drop(idx, wk.ID)
		}
		log.Info("duplicate batch result; not counted")
		return core.Outcome{Verdict: core.Duplicate}, true
	case b.Cross.Distrusts(wk.Owner):
		log.Info("batch result of an identity excluded from the " + s.What + "; not counted")
	case !trusted && !checkable:
		log.Info("batch result of an untrusted identity in a " + s.What + " no replay can check; not counted")
	default:
		return core.Outcome{}, false
	}
	if rc.Live {
		b.Batches.Drop(idx, wk.ID)
	}
	s.endReplay(j, idx, wk.ID)
	if b.Batches.Reopen(idx) && s.Host != nil {
		s.Host.WorkAvailable()
	}
	return core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}, true
}

// selectFor says whether wk's identity is trusted and whether its result
// of a batch nobody holds a result of yet is checked: every batch of an
// untrusted identity (it waits for a trusted replay), and a share of a
// trusted one's, drawn now, where the worker cannot see it, while another
// identity is there to replay it. Caller holds no lock.
func (s *Set[J]) selectFor(j J, wk *core.Worker, checkable bool) (trusted, selected bool) {
	trusted = s.Trust.Trusted(wk.Owner)
	if !checkable {
		return trusted, false
	}
	if !trusted {
		return false, true
	}
	live := s.liveIdentities(j)
	s.Mu.Lock()
	n := replayers(j.Base(), live)
	s.Mu.Unlock()
	return true, Selected(s.ReplayFraction) && n >= 1
}

// leaseStart is when the batch's lease was granted: the lease's own time,
// or for an adopted lease without one, its holder's. Caller holds Mu.
func leaseStart(b *Job, idx int, rc core.ResultCall) time.Time {
	if h, ok := b.Batches.Holder(idx); rc.Lease.Granted.IsZero() && ok && h.Worker == rc.Worker.ID {
		return h.Granted
	}
	return rc.Lease.Granted
}

// judgeWorkers judges the batch's worker by its incidents (exclude: why it
// gets no more batches) and every worker by its results with the batch
// counted (residual.go: farWorker, this one or another), with the events
// that record it. Caller holds Mu.
func judgeWorkers(b *Job, unit, workerID string, pairs int, br *Result, now time.Time) (exclude, farWorker, farReason string, events []store.Event) {
	exclude = b.Workers.Judge(workerID, 2*pairs, BadGames(br.Incidents))
	if exclude != "" {
		events = append(events, b.Event(unit, workerID, EvExcluded, exclude, now))
	}
	farWorker, farReason = b.Workers.JudgeResiduals(workerID, *br.Counts.Pentanomial)
	if farWorker == workerID && exclude != "" {
		farWorker = "" // excluded already, for its incidents
	}
	if farWorker != "" {
		events = append(events, b.Event(unit, farWorker, EvExcluded, farReason, now))
	}
	return exclude, farWorker, farReason, events
}

// batchOf is the running job of batch idx of jobID, or (ok false) the
// answer to a result for it: an unknown unit, or discarded when the job
// has ended. Caller holds Mu.
func (s *Set[J]) batchOf(unit, jobID string, idx int) (j J, out core.Outcome, ok bool, err error) {
	j, known := s.Jobs[jobID]
	switch {
	case !known:
		return j, core.Outcome{}, false, UnknownUnit(unit)
	case !j.Base().Running():
		return j, core.Outcome{Verdict: core.Discarded}, false, nil
	case !j.Base().Batches.InRange(idx):
		return j, core.Outcome{}, false, UnknownUnit(unit)
	}
	return j, core.Outcome{}, true, nil
}

// Result is core.Workload's Result. The core has checked that the worker
// holds (or held, under this coordinator's signature) the batch's lease.
func (s *Set[J]) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	unit, wk := rc.Lease.UnitID, rc.Worker
	r, jobID, idx, err := ResultOf(rc)
	if err != nil {
		return core.Outcome{}, err
	}
	if f := r.GetMovegenGateFailure(); f != nil {
		return s.gateFailed(ctx, rc, jobID, idx, f)
	}
	s.Mu.Lock()
	j, out, ok, err := s.batchOf(unit, jobID, idx)
	if !ok {
		s.Mu.Unlock()
		return out, err
	}
	b := j.Base()
	pairs := s.Hooks.Pairs(j, idx)
	var sent *arbiterv1.WorkUnit // what the worker was sent, to replay its games
	if s.Replay != nil {
		if sent, err = s.Hooks.Unit(j, idx, 0); err != nil {
			s.Mu.Unlock()
			return core.Outcome{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "unit %s: %v", apierr.Q(unit), err)
		}
	}
	checkable := s.CrossCheckable != nil && s.CrossCheckable(j)
	s.Mu.Unlock()

	log := ResultLog(s.Logger, jobID, rc)
	br, err := CheckResult(unit, pairs, r)
	if err == nil && s.Replay != nil {
		err = s.Replay(unit, sent.GetGamePairs(), r)
	}
	cand := &heldResult{owner: wk.Owner, worker: wk.ID}
	if err == nil && checkable {
		cand.games, err = BatchMoves(r)
	}
	if err != nil {
		log.Warn("batch result refused", zap.Error(err))
		return core.Outcome{}, err
	}
	trusted, selected := s.selectFor(j, wk, checkable)

	// Decide under Mu, write the store without it (CommitMu keeps commits
	// and their decisions in order), then apply under Mu.
	s.CommitMu.Lock()
	defer s.CommitMu.Unlock()
	s.Mu.Lock()
	if out, refused := s.refuseLate(j, idx, rc, trusted, checkable, log); refused {
		s.Mu.Unlock()
		return out, nil
	}
	var cross crossVerdict
	held := b.Cross.heldOf(idx)
	if checkable && (held != nil || selected) {
		var out core.Outcome
		var done bool
		if cross, out, done = s.crossCheck(j, idx, held, cand, log); done {
			s.Mu.Unlock()
			s.afterCross(ctx, j, idx, cross)
			return out, nil
		}
	}
	now := s.Now()
	a := &Accepted{Result: br, Log: log, Counted: Counted{UnitID: unit, WorkerID: wk.ID, Idx: idx, Pairs: pairs,
		Penta: *br.Counts.Pentanomial, Wins: br.Counts.Wins, Draws: br.Counts.Draws, Losses: br.Counts.Losses,
		Incidents: EncodeIncidents(br.Incidents), LeasedAt: leaseStart(b, idx, rc), At: now, ElapsedMS: rc.Elapsed.Milliseconds()}}
	step, err := s.Hooks.Next(j, a)
	if err != nil {
		// The counts passed every check, so this is the job's failure, not
		// the worker's: nothing is stored.
		s.Mu.Unlock()
		return core.Outcome{}, err
	}
	events := IncidentEvents(jobID, unit, wk.ID, r.GetIncidents(), now)
	events = append(events, b.Workers.BenchEvent(jobID, unit, wk.ID, wk.Caps.BenchNPS, now)...)
	exclude, farWorker, farReason, judged := judgeWorkers(b, unit, wk.ID, pairs, br, now)
	events = append(events, judged...)
	s.Mu.Unlock()

	if err := step.Commit(ctx, br.PGNs, step.Change, events); err != nil {
		log.Error("store commit failed", zap.Error(err))
		return core.Outcome{}, apierr.Store(err)
	}

	s.Mu.Lock()
	b.Batches.Store(idx)
	b.count(&a.Counted)
	fields := append([]zap.Field{zap.Int("pairs", pairs)}, step.Apply()...)
	b.Workers.NoteBench(wk.ID, wk.Caps.BenchNPS)
	if b.Workers.Played(wk.ID, 2*pairs, br.Incidents, exclude) {
		s.logExcluded(b, wk.ID, exclude)
	}
	b.Workers.AddPenta(wk.ID, *br.Counts.Pentanomial)
	if farWorker != "" && b.Workers.Exclude(farWorker, farReason) {
		s.logExcluded(b, farWorker, farReason)
	}
	s.Activity.Note(wk.ID, now, 2*pairs, IncidentCount(br.Incidents))
	s.seen(wk)
	if s.Games != nil {
		s.Games.Observe(br.Games)
	}
	if cross.decided {
		fields = append(fields, zap.Bool("replayed", true))
		s.crossApply(j, idx, cross)
	}
	log.Info("batch accepted", append(fields, zap.Duration("elapsed", rc.Elapsed))...)
	over := step.Change != nil
	if over {
		s.finish(j, step.Change)
	}
	s.Mu.Unlock()
	s.afterCross(ctx, j, idx, cross)
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: over}, nil
}
