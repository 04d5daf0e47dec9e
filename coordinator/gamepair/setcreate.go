package gamepair

import (
	"context"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Submission is a submitted job that passed its workload's checks
// (Hooks.Submit), ready to be stored and served.
type Submission[J Entry] struct {
	Job    J
	Kind   string // the stored kind of its record
	Prefix string // of its id
	// Spec is its spec, defaults filled in: stored (without
	// openings_count, which snapshots fill in) and read for the record.
	Spec GameSpec
	// UnitsTotal is its number of batches in the record (0: not fixed).
	UnitsTotal int
	// Write stores the job's record and rows, its spec encoded as spec.
	// It runs under CommitMu, so creations are in order: a refusal it
	// returns as an *apierr.Error reaches the caller as is.
	Write func(ctx context.Context, rec *store.Job, spec []byte) error
	// Log adds to the log line of the submission.
	Log []zap.Field
}

// Create is core.Workload's Create: the workload checks the submission
// (Hooks.Submit); the Set makes its record with a new id, stores it, and
// serves the job. Nothing is stored when the spec is refused.
func (s *Set[J]) Create(ctx context.Context, specAny any, submitter string) (core.JobRef, error) {
	sub, err := s.Hooks.Submit(specAny)
	if err != nil {
		s.Logger.Info(s.What+" refused", zap.Error(err))
		return core.JobRef{}, err
	}
	spec, err := encodeSpec(sub.Spec)
	if err != nil {
		return core.JobRef{}, err
	}
	j, sp := sub.Job, sub.Spec
	rec := &store.Job{ID: randomID(sub.Prefix, 6), Kind: sub.Kind, State: store.StateRunning, CreatedAt: s.Now(),
		Chess960: sp.GetChess960(), RootMoves: []string{}, Submitter: submitter, Priority: sp.GetPriority(),
		Throughput: sp.GetThroughput(), UnitsTotal: sub.UnitsTotal}
	j.Base().Rec = rec
	s.CommitMu.Lock()
	defer s.CommitMu.Unlock()
	if err := sub.Write(ctx, rec, spec); err != nil {
		// A refusal Write decides under CommitMu (a check that needs
		// creations in order) keeps its code; the rest is the store's.
		if e, ok := apierr.As(err); ok {
			return core.JobRef{}, e
		}
		return core.JobRef{}, apierr.Store(err)
	}
	s.Mu.Lock()
	s.Jobs[rec.ID] = j
	s.Running = append(s.Running, j)
	s.Mu.Unlock()
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	s.Logger.Info(s.What+" submitted", append(append([]zap.Field{zap.String(logging.JobID, rec.ID)}, sub.Log...),
		zap.Int32("priority", rec.Priority), zap.Float64("throughput", rec.Throughput), zap.String("submitter", submitter))...)
	return core.JobRef{ID: rec.ID, Seq: rec.Seq, Submitter: submitter}, nil
}
