package grpcapi

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
)

// DefaultStartTimeout is how long a job that no connected worker can
// start waits before it ends failed: long enough for a worker with
// the engine to connect (or an operator to start one), short enough that
// `submit --wait` does not wait forever on an engine no worker has.
const DefaultStartTimeout = 10 * time.Minute

// StallWatch ends as failed, with the reason, every running job that no
// connected worker could start for its timeout, of every kind whose
// workload asks it (workload.Needer, core.Need.FailUnstarted: tests,
// tunes, datasets): none connected, none with what its units need, or
// every one that could run it is barred from it (its engine did not start
// there). A job that counted or leased a unit has started and is left
// alone; so are the jobs of kinds that only wait (perft jobs, verify
// sessions).
type StallWatch struct {
	core      *core.Core
	workloads []core.Workload
	timeout   time.Duration
	log       *zap.Logger
	started   time.Time // workers get workerGrace from then to (re)connect

	mu    sync.Mutex
	since map[string]time.Time // job → when it was first seen unable to start
}

// NewStallWatch returns a watch over the jobs of c's workloads wls
// (timeout 0: DefaultStartTimeout).
func NewStallWatch(c *core.Core, wls []core.Workload, timeout time.Duration, log *zap.Logger) *StallWatch {
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &StallWatch{core: c, workloads: wls, timeout: timeout, log: log, started: c.Now(), since: map[string]time.Time{}}
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
	// Running jobs that have not started, described from memory.
	waiting, _ := s.core.List(0, math.MaxInt, func(j core.JobInfo) bool { return j.State == "running" && !j.Started })
	live, held := liveWorkers(s.core)
	s.mu.Lock()
	defer s.mu.Unlock()
	stuck := map[string]string{}
	for _, info := range waiting {
		n, ok := needOf(info.ID, s.workloads)
		if !ok || !n.FailUnstarted || held[info.ID] {
			continue
		}
		if reason := cannotStart(n, live); reason != "" {
			stuck[info.ID] = reason
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

// liveWorkers are the live workers (core.WorkerView.Live: seen within a
// lease duration, holding a lease or waiting for work), and the jobs whose
// units some worker holds.
func liveWorkers(c *core.Core) ([]core.WorkerView, map[string]bool) {
	now, within := c.Now(), c.LeaseDuration()
	var live []core.WorkerView
	held := map[string]bool{}
	for _, w := range c.Workers() {
		if w.Live(now, within) {
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

// cannotStart says why no live worker can start a job that needs n ("" when
// one can).
func cannotStart(n core.Need, live []core.WorkerView) string {
	caps := make([]core.Caps, len(live))
	for i, w := range live {
		caps[i] = w.Caps
	}
	if r := blockedReason(n, caps); r != "" {
		return r
	}
	return refusedReason(n, live)
}

// refusedReason says that every live worker able to run a job that needs
// n is barred from it, with the first one's reason ("" when one is not).
func refusedReason(n core.Need, live []core.WorkerView) string {
	able, why := 0, ""
	for _, w := range live {
		if blockedReason(n, []core.Caps{w.Caps}) != "" {
			continue // it could not run the job anyway
		}
		able++
		r, ok := n.Barred[w.ID]
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
