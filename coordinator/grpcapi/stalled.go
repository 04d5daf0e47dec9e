package grpcapi

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/internal/jobkind"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// DefaultStartTimeout is how long a test or tune that no connected worker
// can start waits before it ends failed: long enough for a worker with
// the engine to connect (or an operator to start one), short enough that
// `submit --wait` does not wait forever on an engine no worker has.
const DefaultStartTimeout = 10 * time.Minute

// StallWatch ends as failed, with the reason, every running test and tune
// that no connected worker could start for its timeout: none connected,
// none with what its units need, or every one that could run it refused
// it (its engine did not start there). A job that played a game, or whose
// batch a worker holds, has started and is left alone; so are perft jobs
// and verify sessions (their blocked reasons only wait).
type StallWatch struct {
	core    *core.Core
	timeout time.Duration
	log     *zap.Logger
	started time.Time // workers get workerGrace from then to (re)connect

	mu    sync.Mutex
	since map[string]time.Time // job → when it was first seen unable to start
}

// NewStallWatch returns a watch over c's jobs (timeout 0:
// DefaultStartTimeout).
func NewStallWatch(c *core.Core, timeout time.Duration, log *zap.Logger) *StallWatch {
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &StallWatch{core: c, timeout: timeout, log: log, started: c.Now(), since: map[string]time.Time{}}
}

// Run checks every interval (a tenth of the timeout, between 100 ms and
// 10 s) until ctx ends.
func (s *StallWatch) Run(ctx context.Context) {
	t := time.NewTicker(min(max(s.timeout/10, 100*time.Millisecond), 10*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Check(ctx)
		}
	}
}

// Check fails the jobs that have been unable to start for the timeout,
// and starts the clock of those newly unable.
func (s *StallWatch) Check(ctx context.Context) {
	now := s.core.Now()
	if now.Sub(s.started) < workerGrace {
		return
	}
	// Running jobs that have not started, described from memory; only
	// their snapshots are rendered.
	waiting, _ := s.core.List(0, math.MaxInt, func(j core.JobInfo) bool { return j.State == "running" && !j.Started })
	live, held := liveWorkers(s.core)
	s.mu.Lock()
	defer s.mu.Unlock()
	stuck := map[string]string{}
	for _, info := range waiting {
		snap, err := s.core.Job(info.ID, false)
		j, ok := snap.(*arbiterv1.Job)
		if err != nil || !ok || j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || !gameFamily(j) {
			continue
		}
		if reason := cannotStart(j, live, held); reason != "" {
			stuck[j.GetJobId()] = reason
		}
	}
	for id := range s.since {
		if _, ok := stuck[id]; !ok {
			delete(s.since, id)
		}
	}
	for id, reason := range stuck {
		first, seen := s.since[id]
		if !seen {
			s.since[id] = now
			continue
		}
		if now.Sub(first) < s.timeout {
			continue
		}
		msg := fmt.Sprintf("no connected worker could start it within %v: %s", s.timeout, reason)
		if err := s.core.Fail(ctx, id, msg); err != nil {
			s.log.Warn("failing a job no worker can start", zap.String(logging.JobID, id), zap.Error(err))
			continue
		}
		delete(s.since, id)
		s.log.Warn("job failed: no worker could start it", zap.String(logging.JobID, id), zap.String("reason", msg))
	}
}

// liveWorkers are the workers seen within a lease duration, and the jobs
// whose units some worker holds.
func liveWorkers(c *core.Core) ([]core.WorkerView, map[string]bool) {
	now, within := c.Now(), c.LeaseDuration()
	var live []core.WorkerView
	held := map[string]bool{}
	for _, w := range c.Workers() {
		if now.Sub(w.LastSeen) <= within {
			live = append(live, w)
		}
		for _, u := range w.Units {
			if i := strings.LastIndexByte(u, '.'); i > 0 {
				held[u[:i]] = true
			}
		}
	}
	return live, held
}

// cannotStart says why no live worker can start running test or tune j
// ("" when one can, or when j has started: a game played, a batch held).
func cannotStart(j *arbiterv1.Job, live []core.WorkerView, held map[string]bool) string {
	if j.GetMatchProgress().GetGames() > 0 || j.GetSpsaProgress().GetGames() > 0 || held[j.GetJobId()] {
		return ""
	}
	caps := make([]core.Caps, len(live))
	for i, w := range live {
		caps[i] = w.Caps
	}
	n, _ := needsOf(j, nil)
	if r := blockedReason(n, caps); r != "" {
		return r
	}
	return refusedReason(j, live)
}

// gameFamily: tests and tunes, the jobs whose workers can refuse them.
func gameFamily(j *arbiterv1.Job) bool {
	f := jobkind.Of(j).Family
	return f == jobkind.FamilyTest || f == jobkind.FamilyTune
}

// refusedReason says that every live worker able to run test or tune j
// refused it, with the first refusal's reason ("" when one has not).
func refusedReason(j *arbiterv1.Job, live []core.WorkerView) string {
	rows := j.GetMatchProgress().GetWorkers()
	if jobkind.Is(j, jobkind.FamilyTune) {
		rows = j.GetSpsaProgress().GetWorkers()
	}
	barred := map[string]string{}
	for _, r := range rows {
		if r.GetExcluded() {
			barred[r.GetWorkerId()] = r.GetReason()
		}
	}
	n, _ := needsOf(j, nil)
	able, why := 0, ""
	for _, w := range live {
		if blockedReason(n, []core.Caps{w.Caps}) != "" {
			continue // it could not run the job anyway
		}
		able++
		r, ok := barred[w.ID]
		if !ok {
			return ""
		}
		if why == "" {
			why = fmt.Sprintf("%s (%s): %s", w.Name, w.ID, r)
		}
	}
	if able == 0 {
		return ""
	}
	return fmt.Sprintf("all %d connected workers able to run it are barred from it; %s", able, why)
}
