package test

import (
	"context"
	"errors"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Changing a running test (Modify), running a stopped one again (Resume)
// and the spec a reschedule copies (StoredSpec).

// Modify implements core.Modifier: priority, throughput, game cap, notes
// and tags of a running test. The values are checked first (nothing
// changes on a bad one), the stored spec and job row change next, the
// test in memory last.
func (w *Workload) Modify(ctx context.Context, jobID string, m core.Modification) error {
	w.CommitMu.Lock()
	defer w.CommitMu.Unlock()
	var tags []string
	if m.SetTags {
		var err error
		if tags, err = testview.CheckTags(m.Tags); err != nil {
			return err
		}
	}
	if m.Notes != nil {
		if err := testview.CheckNotes(*m.Notes); err != nil {
			return err
		}
	}
	w.Mu.Lock()
	t, err := w.runningTest(jobID)
	if err != nil {
		w.Mu.Unlock()
		return err
	}
	priority, share := t.spec.GetPriority(), t.spec.GetThroughput()
	if m.Priority != nil {
		priority = *m.Priority
	}
	if m.Share != nil {
		share = *m.Share
	}
	total, nb, unitsTotal := t.totalPairs, t.nBatches, t.Rec.UnitsTotal
	if m.Games != nil {
		var err error
		if total, nb, err = t.newCap(*m.Games); err != nil {
			w.Mu.Unlock()
			return err
		}
		unitsTotal = 0
		if total > 0 {
			unitsTotal = nb
		}
	}
	w.Mu.Unlock()

	apply := func(spec *arbiterv1.MatchSpec) {
		spec.Priority, spec.Throughput = priority, share
		if m.Games != nil {
			spec.Games = *m.Games
		}
		if m.Notes != nil {
			spec.Notes = *m.Notes
		}
		if m.SetTags {
			spec.Tags = tags
		}
	}
	edit := func(b []byte) ([]byte, error) {
		spec := &arbiterv1.MatchSpec{}
		if err := proto.Unmarshal(b, spec); err != nil {
			return nil, err
		}
		apply(spec)
		return proto.Marshal(spec)
	}
	err = ModifyTest(ctx, w.store, jobID, TestChange{Priority: priority, Throughput: share, UnitsTotal: unitsTotal, Edit: edit})
	if errors.Is(err, store.ErrNotRunning) {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "test %s is no longer running", jobID)
	}
	if err != nil {
		return apierr.Store(err)
	}
	w.Mu.Lock()
	defer w.Mu.Unlock()
	apply(t.spec)
	t.find = nil // its tags or notes may have changed
	t.Rec.Priority, t.Rec.Throughput, t.Rec.UnitsTotal = priority, share, unitsTotal
	if m.Games != nil && t.Batches != nil {
		t.totalPairs, t.nBatches = total, nb
		t.Batches.Resize(nb)
	}
	w.log.Info("test changed", zap.String(logging.JobID, jobID), zap.Stringer("change", m))
	return nil
}

// newCap checks a new game cap for a running test and returns its pairs
// and batches. Batches already handed out keep their size, so a cap must
// leave them whole: its pairs a multiple of the batch size (or the old
// cap), at least the batches handed out so far, and more than those
// counted (a test at its cap is over). Caller holds mu.
func (t *test) newCap(games uint64) (total, nb int, err error) {
	switch {
	case games%2 != 0:
		return 0, 0, apierr.Invalid("games: %d is odd (games are played in pairs)", games)
	case games > testview.MaxGames:
		return 0, 0, apierr.Invalid("games: %d is more than 100,000,000", games)
	case games == 0 && t.seq == nil:
		return 0, 0, apierr.Invalid("games: a match without SPRT needs a number of games")
	}
	total = int(games / 2)
	if total > 0 && total%t.batchPairs != 0 && total != t.totalPairs {
		return 0, 0, apierr.Invalid("games: %d is not a multiple of %d (the test's batches of %d game pairs)", games, 2*t.batchPairs, t.batchPairs)
	}
	if t.totalPairs > 0 && t.totalPairs%t.batchPairs != 0 && total != t.totalPairs {
		// The last batch is short; once handed out its size is fixed.
		if _, _, next := t.Batches.Position(); next >= t.nBatches {
			return 0, 0, apierr.Invalid("games: the test's last, shorter batch is out already; its cap of %d games can no longer change", t.totalPairs*2)
		}
	}
	nb = batchCount(total, t.batchPairs)
	_, _, next := t.Batches.Position()
	if nb < next || nb <= t.Done {
		return 0, 0, apierr.Invalid("games: %d is fewer than the %d games of the batches played or handed out already", games, 2*t.batchPairs*max(next, t.Done+1))
	}
	return total, nb, nil
}

// Resume implements core.Resumer: a stopped test runs again from where
// it stood (gamepair.Set.Reopen).
func (w *Workload) Resume(ctx context.Context, jobID string) error { return w.Reopen(ctx, jobID) }

// StoredSpec returns test jobID's spec as stored (with its openings), for
// a copy (a reschedule).
func (w *Workload) StoredSpec(ctx context.Context, jobID string) (*arbiterv1.MatchSpec, error) {
	if err := w.knownTest(jobID); err != nil {
		return nil, err
	}
	row, err := LoadTest(ctx, w.store, jobID)
	if err != nil {
		return nil, apierr.Store(err)
	}
	spec := &arbiterv1.MatchSpec{}
	if err := proto.Unmarshal(row.Spec, spec); err != nil {
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "test %s: stored spec: %v", jobID, err)
	}
	return spec, nil
}

// Reschedule submits, on behalf of caller, a copy of test jobID (same
// engines, book, time control, SPRT, tags and notes) that links to it.
func (w *Workload) Reschedule(ctx context.Context, c *core.Core, caller identity.Identity, jobID string) (core.JobRef, error) {
	spec, err := w.StoredSpec(ctx, jobID)
	if err != nil {
		return core.JobRef{}, err
	}
	spec.RescheduledFrom = jobID
	ref, err := c.Create(ctx, caller, Kind, spec)
	if err != nil {
		return core.JobRef{}, err
	}
	c.RecordAudit(ctx, caller, "job.reschedule", jobID, "copied as "+ref.ID)
	return ref, nil
}

var (
	_ core.Modifier = (*Workload)(nil)
	_ core.Resumer  = (*Workload)(nil)
)

// runningTest is the running test jobID, or the error a change to it
// answers: unknown, or already over. Caller holds Mu.
func (w *Workload) runningTest(jobID string) (*test, error) {
	t := w.Jobs[jobID]
	if t == nil {
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	if !t.Running() {
		return nil, apierr.New(apierr.FailedPrecondition, apierr.ReasonJobFinished, "test %s is already %s", jobID, t.Rec.State)
	}
	return t, nil
}
