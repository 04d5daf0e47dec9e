package test

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
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

// next is the commit step's hook (gamepair.Hooks.Next): t's SPRT after
// the batch, on copies (memory changes after the commit), the job's final
// state when the SPRT decides or the last batch of a match is in, and the
// batch's row. Caller holds mu.
func (w *Workload) next(t *test, a *gamepair.Accepted) (*gamepair.Step, error) {
	c := &a.Counted
	b := &Batch{UnitID: c.UnitID, JobID: t.Rec.ID, Idx: c.Idx, WorkerID: c.WorkerID, Pairs: c.Pairs, Penta: c.Penta,
		Wins: c.Wins, Draws: c.Draws, Losses: c.Losses, Incidents: c.Incidents, LeasedAt: c.LeasedAt, At: c.At, ElapsedMS: c.ElapsedMS}
	total, penta := t.Results, t.Penta
	gamepair.AddCounts(&total, &penta, b.Penta, b.Wins, b.Draws, b.Losses)
	seq, jobChange, err := w.nextSPRT(t, total, c.At)
	if err != nil {
		return nil, err
	}
	if jobChange == nil && t.precisionStop(penta) {
		jobChange = &store.JobChange{State: store.StateDone, FinishedAt: c.At}
	}
	if jobChange == nil && t.totalPairs > 0 && t.Done+1 == t.nBatches {
		jobChange = &store.JobChange{State: store.StateDone, FinishedAt: c.At}
	}
	seqState, err := seqJSON(seq)
	if err != nil {
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "unit %s: %v", apierr.Q(c.UnitID), err)
	}
	commit := func(ctx context.Context, pgns []string, change *store.JobChange, events []store.Event) error {
		return CommitBatch(ctx, w.store, b, pgns, seqState, change, events)
	}
	apply := func() []zap.Field {
		t.seq = seq
		if t.hist != nil {
			llr := 0.0
			if t.seq != nil {
				llr = t.seq.LLR
			}
			t.hist.add(pointOf(t.Results, t.Penta, llr))
		}
		fields := []zap.Field{zap.Int64("games", t.Results.Games())}
		if t.seq != nil {
			fields = append(fields, zap.Float64("llr", t.seq.LLR), zap.String("sprt", string(t.seq.State)))
		}
		return fields
	}
	return &gamepair.Step{Change: jobChange, Commit: commit, Apply: apply}, nil
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
		w.log.Error("SPRT update failed", zap.String(logging.JobID, t.Rec.ID), zap.Error(err))
		return nil, nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "test %s: SPRT update: %v", t.Rec.ID, err)
	}
	if st.State != sprt.Continue {
		return &cp, &store.JobChange{State: store.StateDone, FinishedAt: now}, nil
	}
	return &cp, nil, nil
}

// counted is a test's counted batches as stored, in the order they were
// counted (gamepair.Hooks.Counted: what a purge splits).
func (w *Workload) counted(ctx context.Context, t *test) ([]gamepair.Counted, error) {
	rows, err := StoredBatches(ctx, w.store, t.Rec.ID)
	if err != nil {
		return nil, err
	}
	out := make([]gamepair.Counted, len(rows))
	for i := range rows {
		out[i] = countedOf(&rows[i])
	}
	return out, nil
}

// recount is gamepair.Hooks.Recount: t's SPRT replayed from its start over
// the kept batches in the order they were counted, stopping where it
// decides (as the test would have stopped there), and the test's final
// state when it decides or a match has all its batches. Caller holds mu.
func (w *Workload) recount(t *test, kept []gamepair.Counted, now time.Time) (string, *store.JobChange, func(), error) {
	var seq *sprt.Sequential
	var change *store.JobChange
	if t.seq != nil {
		fresh, err := sprt.NewSequential(t.seq.Params, t.seq.BatchSize)
		if err != nil {
			return "", nil, nil, err
		}
		seq = fresh
	}
	var total sprt.Results
	var penta sprt.Pentanomial
	for i := range kept {
		c := &kept[i]
		gamepair.AddCounts(&total, &penta, c.Penta, c.Wins, c.Draws, c.Losses)
		if seq != nil {
			st, err := seq.Update(total)
			if err != nil {
				return "", nil, nil, err
			}
			if st.State != sprt.Continue {
				change = &store.JobChange{State: store.StateDone, FinishedAt: now}
				break
			}
		}
		if t.precisionStop(penta) {
			change = &store.JobChange{State: store.StateDone, FinishedAt: now}
			break
		}
	}
	state, err := seqJSON(seq)
	if err != nil {
		return "", nil, nil, err
	}
	apply := func() {
		t.seq = seq
		t.hist = nil // rebuilt from the store on its next request
	}
	return state, change, apply, nil
}
