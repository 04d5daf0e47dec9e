package gamepair

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/sprt"
)

// What a cross-check verdict does beyond counting a batch (crosscheck.go):
// a confirmation earns trust, a liar is purged from the job, and two
// trusted identities that disagree stop it.
//
// Invariant: after a purge the job's counts, its SPRT state and its
// stored batches are exactly those of its batches by other identities, in
// the order they were counted (Hooks.Recount replays them), in memory and
// in the store alike; the purged batches are played afresh.

// replayers is the number of identities besides a batch's own that may
// replay a batch of b now: live identities that play game pairs, less
// those excluded from the job (one that left is subtracted all the same:
// fewer trusted batches are drawn for a check, none counts unchecked).
// live is liveIdentities' count. Caller holds Mu.
func replayers(b *Job, live int) int {
	n := live - 1
	if b.Cross != nil {
		n -= len(b.Cross.distrusted)
	}
	return n
}

// liveIdentities counts the identities that play game pairs now and
// whose workers could play j's batches (its engines, its tablebase
// rule): only they can replay one, so a batch held with no other of them
// live would wait for a witness that never comes (a farm's one worker
// with tables, and others without). It takes the core's lock, so the
// caller must hold no lock of the set: the core calls the set (Take,
// Candidates) under its own lock, and taking them the other way round
// deadlocked a farm in CI.
func (s *Set[J]) liveIdentities(j J) int {
	if s.Host == nil {
		return 0
	}
	s.Mu.Lock()
	a, b := s.Hooks.Engines(j)
	adj := s.Hooks.Adjudication(j)
	s.Mu.Unlock()
	return s.Host.LiveIdentitiesFit(capability.GamePair, func(c core.Caps) bool {
		return FitsCaps(a, b, c) == "" && FitsTablebase(adj, c) == ""
	})
}

// afterCross carries out verdict v on batch idx of j once its batch is
// counted or dropped. Caller holds CommitMu, not Mu.
func (s *Set[J]) afterCross(ctx context.Context, j J, idx int, v crossVerdict) {
	if v.confirmed != "" {
		s.Trust.Confirmed(ctx, v.confirmed)
	}
	if v.pause != "" {
		s.pause(ctx, j, v.pause)
	}
	if v.liar != "" {
		s.foundLying(ctx, j, idx, v)
	}
}

// pause stops j for an admin: two trusted identities disagree, and
// neither side's games may count blindly. The job is stopped (cancelled,
// with the reason, stored), so it stays stopped across a restart; an
// admin resumes it (Reopen) once the liar's credential is revoked. Caller
// holds CommitMu, not Mu.
func (s *Set[J]) pause(ctx context.Context, j J, reason string) {
	s.Mu.Lock()
	id, running := j.Base().Rec.ID, j.Base().Running()
	s.Mu.Unlock()
	if !running {
		return
	}
	s.Logger.Warn(s.What+" stopped: trusted identities disagree", zap.String(logging.JobID, id), zap.String("reason", reason))
	change := &store.JobChange{State: store.StateCancelled, Error: reason, FinishedAt: s.Now()}
	if err := Cancel(ctx, s.Store, &s.Mu, s.Jobs, func(j J) *store.Job { return j.Base().Rec }, id, change, s.finish); err != nil {
		s.Logger.Error(s.What+" not stopped", zap.String(logging.JobID, id), zap.Error(err))
	}
}

// split divides a job's counted batches into those of identity liar's
// workers and the rest, both in counted order, from the store (it knows
// every worker's identity, those of workers gone since included).
func (s *Set[J]) split(ctx context.Context, j J, liar string) (kept, purged []Counted, err error) {
	if s.Hooks.Counted == nil {
		return nil, nil, nil
	}
	all, err := s.Hooks.Counted(ctx, j)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, c := range all {
		if !slices.Contains(ids, c.WorkerID) {
			ids = append(ids, c.WorkerID)
		}
	}
	owners, err := s.Store.WorkerOwners(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range all {
		if owners[c.WorkerID] == liar {
			purged = append(purged, c)
		} else {
			kept = append(kept, c)
		}
	}
	return kept, purged, nil
}

// foundLying excludes identity v.liar from j, stores it as a liar, purges
// every batch it counted in j and recomputes j's state without them
// (Hooks.Recount), in one store transaction, then in memory. Caller holds
// CommitMu, not Mu.
func (s *Set[J]) foundLying(ctx context.Context, j J, idx int, v crossVerdict) {
	b := j.Base()
	s.Mu.Lock()
	running, id := b.Running(), b.Rec.ID
	s.Mu.Unlock()
	reason := fmt.Sprintf("its games of batch %d differ from a trusted identity's replay at the same nodes and seeds (%s): identity %s is excluded from the %s and its batches purged",
		idx, v.where, apierr.Q(v.liar), s.What)
	if !running {
		// The batch that caught it ended the job: nothing is left to purge
		// from, but the identity is a liar all the same.
		if err := s.Store.PurgeIdentity(ctx, &store.Purge{JobID: id, Identity: v.liar, Reason: reason, At: s.Now()}); err != nil {
			s.Logger.Error("liar not stored", zap.String(logging.JobID, id), zap.Error(err))
		}
		s.Trust.markLiar(v.liar, reason, s.Now())
		return
	}
	unit := UnitID(id, idx)
	incident := func(now time.Time) store.Event {
		return b.Event(unit, v.liarWorker, EvIncident, Clip("replay mismatch: batch "+fmt.Sprint(idx)+", "+v.where, maxEventDetail), now)
	}
	s.purgeLiar(ctx, j, v.liar, reason, unit, v.liarWorker, incident)
}

// DeclareLiar is an admin's verdict on identity: it lied. Every running or
// stopped (cancelled: paused, or stopped by hand, which may resume) job
// of the set it counted batches in is purged of them and recomputed, as
// a liar caught by a replay is (purgeLiar); finished jobs keep their
// verdicts. It returns the ids of the jobs purged. This is how the pause
// of two trusted identities that disagree ends: the admin names the liar,
// then resumes the test. Takes CommitMu.
func (s *Set[J]) DeclareLiar(ctx context.Context, identity, reason string) []string {
	s.CommitMu.Lock()
	defer s.CommitMu.Unlock()
	s.Mu.Lock()
	var jobs []J
	for _, j := range s.Jobs {
		if st := j.Base().Rec.State; st == store.StateRunning || st == store.StateCancelled {
			jobs = append(jobs, j)
		}
	}
	s.Mu.Unlock()
	var purged []string
	for _, j := range jobs {
		if s.purgeLiar(ctx, j, identity, reason, "", "", nil) > 0 {
			purged = append(purged, j.Base().Rec.ID)
		}
	}
	slices.Sort(purged)
	return purged
}

// purgeLiar excludes identity liar from j, stores it as a liar, deletes
// every batch it counted in j with its games and stores j's state
// recomputed without them (Hooks.Recount), in one store transaction, then
// does the same in memory. It returns how many batches it purged. A job
// that is not running keeps its state (its resume decides). unitID,
// liarWorker and incident, when given, name the batch, the worker and the
// event that caught it. Caller holds CommitMu, not Mu.
func (s *Set[J]) purgeLiar(ctx context.Context, j J, liar, reason, unitID, liarWorker string, incident func(time.Time) store.Event) int {
	b := j.Base()
	s.Mu.Lock()
	running, excluded, id := b.Running(), b.Cross != nil && b.Cross.Distrusts(liar), b.Rec.ID
	s.Mu.Unlock()
	if excluded {
		return 0
	}
	log := s.Logger.With(zap.String(logging.JobID, id), zap.String("identity", liar))
	kept, purged, err := s.split(ctx, j, liar)
	if err != nil {
		// Exclude it all the same (the safe direction); its counted
		// batches stay until the next liar check of the job can read them.
		log.Error("batches of a liar not read; excluded without a purge", zap.Error(err))
		purged, kept = nil, nil
	}
	if incident == nil && len(purged) == 0 {
		return 0 // a job it took no part in
	}
	now := s.Now()
	p := &store.Purge{JobID: id, Identity: liar, Reason: reason, At: now}
	var workers []string
	if liarWorker != "" {
		workers = append(workers, liarWorker)
	}
	for _, c := range purged {
		if !slices.Contains(workers, c.WorkerID) {
			workers = append(workers, c.WorkerID)
		}
		if !slices.Contains(p.WorkerIDs, c.WorkerID) {
			p.WorkerIDs = append(p.WorkerIDs, c.WorkerID)
		}
	}
	s.Mu.Lock()
	var apply func()
	if len(purged) > 0 && s.Hooks.Recount != nil {
		p.SetSPRT = true
		if p.SPRT, p.Change, apply, err = s.Hooks.Recount(j, kept, now); err != nil {
			log.Error("state without a liar's batches not computed; excluded without a purge", zap.Error(err))
			p.SetSPRT, p.WorkerIDs, purged, apply = false, nil, nil, nil
		}
	}
	if !running {
		p.Change = nil
	}
	if incident != nil {
		p.Events = append(p.Events, incident(now))
	}
	for _, w := range workers {
		p.Events = append(p.Events, b.Event(unitID, w, EvExcluded, reason, now))
	}
	s.Mu.Unlock()
	if err := s.Store.PurgeIdentity(ctx, p); err != nil {
		log.Error("purge not stored; the liar is excluded in memory only", zap.Error(err))
		p.Change, purged, apply = nil, nil, nil
	}
	live := s.liveIdentities(j)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Trust.markLiar(liar, reason, now)
	s.excludeIdentity(b, liar, reason, workers, live)
	if apply != nil {
		s.recount(b, kept, purged)
		apply()
	}
	log.Warn("identity found lying: excluded from the "+s.What+", its batches purged", zap.Int("purged", len(purged)),
		zap.Int("kept", len(kept)), zap.String("reason", reason))
	if p.Change != nil && b.Running() {
		s.finish(j, p.Change)
	}
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	return len(purged)
}

// excludeIdentity bars identity from b: its workers are excluded, its held
// results dropped, and, when no identity is left to replay them, the
// held results of others are played afresh rather than wait forever.
// live is liveIdentities' count, taken before Mu. Caller holds Mu.
func (s *Set[J]) excludeIdentity(b *Job, identity, reason string, workers []string, live int) {
	if b.Cross == nil {
		b.Cross = newCrossCheck()
	}
	b.Cross.distrusted[identity] = reason
	s.dropHeldOf(b, identity)
	for _, w := range workers {
		if b.Workers.Exclude(w, reason) {
			s.logExcluded(b, w, reason)
		}
		s.Activity.Note(w, s.Now(), 0, 1)
	}
	if replayers(b, live) >= 1 {
		return
	}
	for idx := range b.Cross.held {
		delete(b.Cross.held, idx)
		b.Batches.Unpark(idx)
		b.Batches.Reopen(idx)
	}
}

// recount makes b's counts those of kept, and opens the purged batches
// again. Caller holds Mu.
func (s *Set[J]) recount(b *Job, kept, purged []Counted) {
	pgns := b.PGNs
	b.Results, b.Penta, b.Done, b.PGNs = sprt.Results{}, [5]int64{}, 0, 0
	for i := range kept {
		b.count(&kept[i])
	}
	if pgns == 0 {
		b.PGNs = 0 // deleted by the retention setting before
	}
	for _, c := range purged {
		if b.Batches != nil {
			b.Batches.Unstore(c.Idx)
			b.Batches.Reopen(c.Idx)
		}
	}
}

// loadDistrust restores the identities excluded from running job b.
func (s *Set[J]) loadDistrust(ctx context.Context, b *Job) error {
	m, err := s.Store.JobDistrust(ctx, b.Rec.ID)
	if err != nil || len(m) == 0 {
		return err
	}
	if b.Cross == nil {
		b.Cross = newCrossCheck()
	}
	for id, reason := range m {
		b.Cross.distrusted[id] = reason
	}
	return nil
}
