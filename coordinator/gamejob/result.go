package gamejob

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/logging"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Limits on one batch result (gamepair's).
const (
	// MaxPGNBytes bounds one game's PGN.
	MaxPGNBytes = gamepair.MaxPGNBytes
	// MaxResultPGNBytes bounds the PGNs of one batch result together; the
	// API layer's message limit must leave room for it.
	MaxResultPGNBytes = gamepair.MaxResultPGNBytes
)

func malformed(format string, args ...any) error { return gamepair.Malformed(format, args...) }

// Result implements core.Workload. The core has checked that the worker
// holds (or held, under this coordinator's signature) the batch's lease.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	unit, wk := rc.Lease.UnitID, rc.Worker
	r, jobID, idx, err := gamepair.ResultOf(rc)
	if err != nil {
		return core.Outcome{}, err
	}
	w.mu.Lock()
	t := w.tests[jobID]
	switch {
	case t == nil:
		w.mu.Unlock()
		return core.Outcome{}, gamepair.UnknownUnit(unit)
	case !t.running():
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded}, nil
	case idx >= t.batches:
		w.mu.Unlock()
		return core.Outcome{}, gamepair.UnknownUnit(unit)
	}
	_, pairs := t.pairsOf(idx)
	played := w.batchProto(t, idx, 0).GetGamePairs() // what the worker was sent, to replay its games
	w.mu.Unlock()

	log := gamepair.ResultLog(w.log, jobID, rc)
	br, err := gamepair.CheckResult(unit, pairs, r)
	if err == nil {
		err = w.cfg.Replay(unit, played, r)
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
	if t.stored[idx] {
		// Counted already (or its row is in the store): never added again.
		if h, held := t.open[idx]; held && rc.Live && h.worker == wk.ID {
			delete(t.open, idx)
		}
		w.mu.Unlock()
		log.Info("duplicate batch result; not counted")
		return core.Outcome{Verdict: core.Duplicate}, nil
	}
	now := w.cfg.Now()
	leasedAt := rc.Lease.Granted
	if h, held := t.open[idx]; leasedAt.IsZero() && held && h.worker == wk.ID {
		leasedAt = h.granted
	}
	b := &store.Batch{UnitID: unit, JobID: jobID, Idx: idx, WorkerID: wk.ID, Pairs: pairs, Penta: *br.Counts.Pentanomial,
		Wins: br.Counts.Wins, Draws: br.Counts.Draws, Losses: br.Counts.Losses, Incidents: gamepair.EncodeIncidents(br.Incidents),
		LeasedAt: leasedAt, At: now, ElapsedMS: rc.Elapsed.Milliseconds()}
	// The new totals, SPRT and judgement on copies: memory changes after
	// the commit.
	total, penta := t.results, t.penta
	addCounts(&total, &penta, b)
	seq, jobChange, err := w.nextSPRT(t, total, now)
	if err != nil {
		w.mu.Unlock()
		return core.Outcome{}, err
	}
	if jobChange == nil && t.totalPairs > 0 && t.done+1 == t.batches {
		jobChange = &store.JobChange{State: store.StateDone, FinishedAt: now}
	}
	events := gamepair.IncidentEvents(jobID, unit, wk.ID, r.GetIncidents(), now)
	exclude := t.workers.Judge(wk.ID, 2*pairs, gamepair.BadGames(br.Incidents))
	if exclude != "" {
		events = append(events, eventOf(t, unit, wk.ID, evExcluded, exclude, now))
	}
	seqState, err := seqJSON(seq)
	w.mu.Unlock()
	if err != nil {
		return core.Outcome{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "unit %s: %v", apierr.Q(unit), err)
	}

	if err := w.store.CommitBatch(ctx, b, br.PGNs, seqState, jobChange, events); err != nil {
		log.Error("store commit failed", zap.Error(err))
		return core.Outcome{}, apierr.Store(err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	t.stored[idx] = true
	delete(t.open, idx)
	t.done++
	t.seq = seq
	t.pgns += int64(len(br.PGNs))
	addCounts(&t.results, &t.penta, b)
	if t.workers.Played(wk.ID, 2*pairs, br.Incidents, exclude) {
		w.logExcluded(t, wk.ID, exclude)
	}
	if t.hist != nil {
		llr := 0.0
		if t.seq != nil {
			llr = t.seq.LLR
		}
		t.hist.add(pointOf(t.results, t.penta, llr))
	}
	w.cfg.Activity.Note(wk.ID, now, 2*pairs, gamepair.IncidentCount(br.Incidents))
	w.seen(wk)
	w.metrics.games.Observe(br.Games)
	fields := []zap.Field{zap.Int("pairs", pairs), zap.Int64("games", t.results.Games()), zap.Duration("elapsed", rc.Elapsed)}
	if t.seq != nil {
		fields = append(fields, zap.Float64("llr", t.seq.LLR), zap.String("sprt", string(t.seq.State)))
	}
	log.Info("batch accepted", fields...)
	if jobChange != nil {
		w.finish(t, jobChange)
		return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: true}, nil
	}
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true}, nil
}

// nextSPRT is t's SPRT after seeing total (a copy; nil without SPRT) and
// the job's final state when it decides. Caller holds mu.
func (w *Workload) nextSPRT(t *test, total sprt.Results, now time.Time) (*sprt.Sequential, *store.JobChange, error) {
	if t.seq == nil {
		return nil, nil, nil
	}
	cp := *t.seq
	if t.seq.Overshoot != nil {
		o := *t.seq.Overshoot
		cp.Overshoot = &o
	}
	st, err := cp.Update(total)
	if err != nil {
		// The counts passed every check, so this is the SPRT's failure, not
		// the worker's: nothing is stored.
		w.log.Error("SPRT update failed", zap.String(logging.JobID, t.rec.ID), zap.Error(err))
		return nil, nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "test %s: SPRT update: %v", t.rec.ID, err)
	}
	if st.State != sprt.Continue {
		return &cp, &store.JobChange{State: store.StateDone, FinishedAt: now}, nil
	}
	return &cp, nil, nil
}

// addCounts adds a batch's counts to a test's totals.
func addCounts(total *sprt.Results, penta *sprt.Pentanomial, b *store.Batch) {
	for i := range penta {
		penta[i] += b.Penta[i]
	}
	total.Wins += b.Wins
	total.Draws += b.Draws
	total.Losses += b.Losses
	p := *penta
	total.Pentanomial = &p
}
