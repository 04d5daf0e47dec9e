package gamepair

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/logging"
)

// LoadProblem is a stored record that Load skipped: a job that cannot be
// loaded, or (for a workload that skips single batches) a batch that does
// not fit its job. The rest loads; the caller decides what to do with them
// (quarantine them in the store, report them).
type LoadProblem struct {
	Kind  string // what was skipped: the job's noun ("test", "tune") or "batch"
	ID    string // the job id, or the batch's unit id
	JobID string
	Err   error
}

func (p LoadProblem) Error() string { return fmt.Sprintf("%s %s: %v", p.Kind, p.ID, p.Err) }

// LoadProblems returns what the last Load skipped.
func (s *Set[J]) LoadProblems() []LoadProblem {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return append([]LoadProblem(nil), s.problems...)
}

// Problem records and logs a stored record that Load skipped.
func (s *Set[J]) Problem(p LoadProblem) {
	s.Log.Error("stored record skipped", zap.String("kind", p.Kind), zap.String("id", p.ID),
		zap.String(logging.JobID, p.JobID), zap.Error(p.Err))
	s.Mu.Lock()
	s.problems = append(s.problems, p)
	s.Mu.Unlock()
}

// Load is core.Workload's Load: every stored job whose kind is one of
// kinds, rebuilt by one (finished ones with only what their snapshots
// need), and what snapshots show of the stored workers. A job that one
// cannot rebuild is skipped and recorded (LoadProblems), unless
// LoadFailure says the whole Load fails.
func (s *Set[J]) Load(ctx context.Context, kinds []string, one func(context.Context, *store.Job) (J, error)) ([]core.JobRef, error) {
	recs, err := s.Store.Jobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: load jobs: %w", s.What, err)
	}
	ws, err := StoredWorkers(ctx, s.Store)
	if err != nil {
		return nil, fmt.Errorf("%s: load workers: %w", s.What, err)
	}
	s.Mu.Lock()
	s.problems = nil
	for _, sw := range ws {
		s.workers[sw.ID] = WorkerInfo{Name: sw.Name, BenchNPS: sw.BenchNPS}
	}
	s.Mu.Unlock()
	var refs []core.JobRef
	for _, rec := range recs {
		if !slices.Contains(kinds, rec.Kind) {
			continue
		}
		j, err := one(ctx, rec)
		if err != nil {
			if fatal := LoadFailure(ctx, err); fatal != nil {
				return nil, fatal
			}
			s.Problem(LoadProblem{Kind: s.What, ID: rec.ID, JobID: rec.ID, Err: err})
			continue
		}
		s.Mu.Lock()
		s.Jobs[rec.ID] = j
		if j.Base().Running() {
			s.Running = append(s.Running, j)
		}
		s.Mu.Unlock()
		refs = append(refs, core.JobRef{ID: rec.ID, Seq: rec.Seq, Submitter: rec.Submitter})
	}
	return refs, nil
}

// Replay counts a job's stored batches (checked, in the order they were
// counted) and rebuilds its workers from them and its events
// (Workers.Replay), and each worker's recent activity.
func (s *Set[J]) Replay(j *Job, counted []Counted, events []store.Event) {
	played := make([]Played, 0, len(counted))
	for i := range counted {
		c := &counted[i]
		j.count(c)
		if j.Batches != nil {
			j.Batches.Store(c.Idx)
		}
		inc := DecodeIncidents(c.Incidents)
		played = append(played, Played{WorkerID: c.WorkerID, Games: 2 * c.Pairs, Incidents: inc, At: c.At})
		s.Activity.Note(c.WorkerID, c.At, 2*c.Pairs, IncidentCount(inc))
	}
	for _, e := range events {
		if e.Kind == EvDisconnect {
			s.Activity.Note(e.WorkerID, e.At, 0, 1)
		}
	}
	j.Workers.Replay(played, events)
}

// Resume ends the load of j: a finished job drops what only a running one
// needs; a running one that is over (decided or complete, but not closed
// when the coordinator stopped) is closed now; any other resumes. fields
// add to the log line of a resumed job.
func (s *Set[J]) Resume(ctx context.Context, j J, over bool, fields ...zap.Field) error {
	b := j.Base()
	if !b.Running() {
		b.Workers.DropWindows()
		return nil
	}
	if over {
		change := &store.JobChange{State: store.StateDone, FinishedAt: s.Now()}
		if err := s.Store.SetJobState(ctx, b.Rec.ID, change); err != nil {
			return NewCloseError(fmt.Errorf("%s: close %s: %w", s.What, b.Rec.ID, err))
		}
		s.Finish(j, change)
		return nil
	}
	s.Log.Info(s.What+" resumed", append([]zap.Field{zap.String(logging.JobID, b.Rec.ID)}, fields...)...)
	return nil
}

// Add stores a new running job with write (under CommitMu) and then serves
// it. A store failure is returned as the API's error.
func (s *Set[J]) Add(ctx context.Context, j J, write func(context.Context) error) error {
	s.CommitMu.Lock()
	defer s.CommitMu.Unlock()
	if err := write(ctx); err != nil {
		return apierr.Store(err)
	}
	s.Mu.Lock()
	s.Jobs[j.Base().Rec.ID] = j
	s.Running = append(s.Running, j)
	s.Mu.Unlock()
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	return nil
}
