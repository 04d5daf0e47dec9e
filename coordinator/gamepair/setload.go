package gamepair

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
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
	s.Logger.Error("stored record skipped", zap.String("kind", p.Kind), zap.String("id", p.ID),
		zap.String(logging.JobID, p.JobID), zap.Error(p.Err))
	s.Mu.Lock()
	s.problems = append(s.problems, p)
	s.Mu.Unlock()
}

// Load is core.Workload's Load: every stored job whose kind is one of
// Kinds, rebuilt by Hooks.Load (finished ones with only what their
// snapshots need), and what snapshots show of the stored workers. A job
// that cannot be rebuilt is skipped and recorded (LoadProblems), unless
// LoadFailure says the whole Load fails.
func (s *Set[J]) Load(ctx context.Context) ([]core.JobRef, error) {
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
		if !slices.Contains(s.Kinds, rec.Kind) {
			continue
		}
		j, err := s.load(ctx, rec)
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

// Stored is what a workload's Hooks.Load read of a job besides the job
// itself.
type Stored struct {
	// Counted are its counted batches, checked, in the order they were
	// counted.
	Counted []Counted
	// PGNsExpired: the retention setting deleted its games.
	PGNsExpired bool
}

// load rebuilds one stored job: the workload's part (Hooks.Load), then its
// counts and workers from its batches and events. A running job that is
// over (decided or complete, but not closed when the coordinator stopped)
// is closed now; any other resumes.
func (s *Set[J]) load(ctx context.Context, rec *store.Job) (J, error) {
	var none J
	j, stored, err := s.Hooks.Load(ctx, rec)
	if err != nil {
		return none, err
	}
	events, err := s.Store.Events(ctx, rec.ID)
	if err != nil {
		return none, fmt.Errorf("events: %w", err)
	}
	b := j.Base()
	s.replay(b, stored.Counted, events)
	if stored.PGNsExpired {
		b.PGNs = 0 // deleted by the retention setting
	}
	if !b.Running() {
		b.Workers.DropWindows()
		return j, nil
	}
	if err := s.loadDistrust(ctx, b); err != nil {
		return none, fmt.Errorf("excluded identities: %w", err)
	}
	if s.Hooks.Over(j) {
		change := &store.JobChange{State: store.StateDone, FinishedAt: s.Now()}
		if err := s.Store.SetJobState(ctx, rec.ID, change); err != nil {
			return none, NewCloseError(fmt.Errorf("%s: close %s: %w", s.What, rec.ID, err))
		}
		s.finish(j, change)
		return j, nil
	}
	s.Logger.Info(s.What+" resumed", append([]zap.Field{zap.String(logging.JobID, rec.ID)}, s.Hooks.Summary(j)...)...)
	return j, nil
}

// replay counts a job's stored batches and rebuilds its workers from them
// and its events (Workers.Replay), and each worker's recent activity.
func (s *Set[J]) replay(j *Job, counted []Counted, events []store.Event) {
	played := make([]Played, 0, len(counted))
	for i := range counted {
		c := &counted[i]
		j.count(c)
		if j.Batches != nil {
			j.Batches.Store(c.Idx)
		}
		inc := DecodeIncidents(c.Incidents)
		played = append(played, Played{WorkerID: c.WorkerID, Games: 2 * c.Pairs, Incidents: inc, At: c.At, Penta: c.Penta})
		s.Activity.Note(c.WorkerID, c.At, 2*c.Pairs, IncidentCount(inc))
	}
	for _, e := range events {
		if e.Kind == EvDisconnect {
			s.Activity.Note(e.WorkerID, e.At, 0, 1)
		}
	}
	j.Workers.Replay(played, events)
}
