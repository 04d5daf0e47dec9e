package grpcapi

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/internal/matchspec"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// workerGrace is how long after start the coordinator waits for workers
// (its own in arbiter up, or a farm's reconnecting after a restart)
// before it says that a job has none that can run it.
const workerGrace = 3 * time.Second

// neededCapabilities are the worker capabilities every unit of j needs:
// perft for a perft job, game-pair for a test or tune, and builtin when
// one of its engines is the embedded one.
func neededCapabilities(j *arbiterv1.Job) []string {
	var engines []*arbiterv1.EngineSpec
	caps := []string{"perft"}
	switch {
	case j.GetMatch() != nil:
		caps = []string{"game-pair"}
		engines = []*arbiterv1.EngineSpec{j.GetMatch().GetEngineA(), j.GetMatch().GetEngineB()}
	case j.GetSpsa() != nil:
		caps = []string{"game-pair"}
		engines = []*arbiterv1.EngineSpec{j.GetSpsa().GetEngine()}
	}
	for _, e := range engines {
		if matchspec.IsBuiltin(e) {
			return append(caps, "builtin")
		}
	}
	return caps
}

// withBlocked returns the jobs with the reason why they cannot progress
// set on each running one that no live worker can take (none connected,
// or none offering a capability its units need), so that status and
// submit --wait say so at once instead of waiting silently. A reason the
// workload gave (e.g. verification waiting for a second identity) is
// kept. Snapshots are copied before they are changed.
func (js *jobService) withBlocked(jobs ...*arbiterv1.Job) []*arbiterv1.Job {
	var live [][]string // capabilities of the live workers, read once
	read := false
	for i, j := range jobs {
		if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || j.GetProgress().GetBlocked() != "" {
			continue
		}
		if !read {
			now, within := js.core.Now(), js.core.LeaseDuration()
			if now.Sub(js.started) < workerGrace {
				return jobs // the workers may not have (re)connected yet
			}
			for _, w := range js.core.Workers() {
				if now.Sub(w.LastSeen) <= within {
					live = append(live, w.Caps.Tags)
				}
			}
			read = true
		}
		reason := blockedReason(neededCapabilities(j), live)
		if reason == "" {
			continue
		}
		c := proto.Clone(j).(*arbiterv1.Job)
		if c.Progress == nil {
			c.Progress = &arbiterv1.JobProgress{}
		}
		c.Progress.Blocked = reason
		jobs[i] = c
	}
	return jobs
}

// blockedReason says why no worker with capabilities among live can run
// a unit that needs every capability of needed ("" when one can).
func blockedReason(needed []string, live [][]string) string {
	if len(live) == 0 {
		return "no worker connected: start one with arbiter worker --coordinator HOST:PORT"
	}
	for _, caps := range live {
		have := map[string]bool{}
		for _, c := range caps {
			have[c] = true
		}
		all := true
		for _, n := range needed {
			all = all && have[n]
		}
		if all {
			return ""
		}
	}
	return fmt.Sprintf("none of the %d connected workers offers %s", len(live), strings.Join(needed, " + "))
}
