package spsajob

import (
	"context"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/apierr"
)

// Result implements core.Workload. The core has checked that the worker
// holds (or held, under this coordinator's signature) the batch's lease.
// The update is computed on a copy of the tune, stored with the batch, and
// only then applied in memory and acknowledged.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	unit, wk := rc.Lease.UnitID, rc.Worker
	r, jobID, idx, err := gamepair.ResultOf(rc)
	if err != nil {
		return core.Outcome{}, err
	}
	w.mu.Lock()
	t := w.tunes[jobID]
	switch {
	case t == nil:
		w.mu.Unlock()
		return core.Outcome{}, gamepair.UnknownUnit(unit)
	case !t.running():
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded}, nil
	case !t.batches.InRange(idx):
		w.mu.Unlock()
		return core.Outcome{}, gamepair.UnknownUnit(unit)
	}
	_, pairs := t.st.Config().BatchRange(idx)
	played, err := w.batchProto(t, idx, 0) // what the worker was sent, to replay its games
	w.mu.Unlock()
	if err != nil {
		return core.Outcome{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "unit %s: %v", apierr.Q(unit), err)
	}

	log := gamepair.ResultLog(w.log, jobID, rc)
	br, err := gamepair.CheckResult(unit, pairs, r)
	if err == nil {
		err = w.cfg.Replay(unit, played.GetGamePairs(), r)
	}
	if err != nil {
		log.Warn("batch result refused", zap.Error(err))
		return core.Outcome{}, err
	}

	// Decide under mu, write the store without it (commitMu keeps commits
	// and their decisions in order), then apply under mu.
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	if !t.running() {
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded}, nil
	}
	if t.batches.Stored(idx) {
		// Applied already: never applied again.
		if rc.Live {
			t.batches.Drop(idx, wk.ID)
		}
		w.mu.Unlock()
		log.Info("duplicate batch result; not applied")
		return core.Outcome{Verdict: core.Duplicate}, nil
	}
	now := w.cfg.Now()
	leasedAt := rc.Lease.Granted
	if h, held := t.batches.Holder(idx); leasedAt.IsZero() && held && h.Worker == wk.ID {
		leasedAt = h.Granted
	}
	next := t.st.Clone()
	if err := next.Apply(idx, int(br.Counts.Wins), int(br.Counts.Losses)); err != nil {
		// The counts passed every check, so this is the tune's failure, not
		// the worker's: nothing is stored.
		w.mu.Unlock()
		log.Error("SPSA update failed", zap.Error(err))
		return core.Outcome{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "tune %s: update: %v", jobID, err)
	}
	u := &store.TuneUpdate{JobID: jobID, Seq: t.st.Updates(), Batch: idx, UnitID: unit, WorkerID: wk.ID, Pairs: pairs,
		Penta: *br.Counts.Pentanomial, Wins: br.Counts.Wins, Draws: br.Counts.Draws, Losses: br.Counts.Losses,
		Incidents: gamepair.EncodeIncidents(br.Incidents), Theta: next.Theta(), LeasedAt: leasedAt, At: now,
		ElapsedMS: rc.Elapsed.Milliseconds()}
	var jobChange *store.JobChange
	if next.Updates() == t.batches.Total() {
		jobChange = &store.JobChange{State: store.StateDone, FinishedAt: now}
	}
	events := gamepair.IncidentEvents(jobID, unit, wk.ID, r.GetIncidents(), now)
	exclude := t.workers.Judge(wk.ID, 2*pairs, gamepair.BadGames(br.Incidents))
	if exclude != "" {
		events = append(events, eventOf(t, unit, wk.ID, gamepair.EvExcluded, exclude, now))
	}
	w.mu.Unlock()

	if err := w.store.CommitTuneUpdate(ctx, u, br.PGNs, jobChange, events); err != nil {
		log.Error("store commit failed", zap.Error(err))
		return core.Outcome{}, apierr.Store(err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	t.st = next
	t.batches.Store(idx)
	t.count(u)
	t.traj.add(next.Updates(), u.Theta)
	if t.workers.Played(wk.ID, 2*pairs, br.Incidents, exclude) {
		w.logExcluded(t, wk.ID, exclude)
	}
	w.cfg.Activity.Note(wk.ID, now, 2*pairs, gamepair.IncidentCount(br.Incidents))
	w.seen(wk)
	if w.cfg.Games != nil {
		w.cfg.Games.Observe(br.Games)
	}
	log.Info("update applied", zap.Int("seq", u.Seq), zap.Int("pairs", pairs), zap.Int64("wins", u.Wins), zap.Int64("losses", u.Losses),
		zap.Int("updates", next.Updates()), zap.Duration("elapsed", rc.Elapsed))
	if jobChange != nil {
		w.finish(t, jobChange)
		return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: true}, nil
	}
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true}, nil
}

// count adds an applied update's games to the tune's totals.
func (t *tune) count(u *store.TuneUpdate) {
	for i := range t.penta {
		t.penta[i] += u.Penta[i]
	}
	t.results.Wins += u.Wins
	t.results.Draws += u.Draws
	t.results.Losses += u.Losses
	p := t.penta
	t.results.Pentanomial = &p
	t.pgns += int64(2 * u.Pairs)
}
