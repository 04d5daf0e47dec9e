package grpcapi

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// workerGrace is how long after start the coordinator waits for workers
// (its own in arbiter up, or a farm's reconnecting after a restart)
// before it says that a job has none that can run it.
const workerGrace = 3 * time.Second

// needOf is what the units of job jobID ask of a worker, as the workload
// that has the job says (workload.Needer); false when none says.
func needOf(jobID string, wls []core.Workload) (core.Need, bool) {
	for _, wl := range wls {
		if n, ok := wl.(workload.Needer); ok {
			if need, ok := n.Needs(jobID); ok {
				return need, true
			}
		}
	}
	return core.Need{}, false
}

// withBlocked returns the jobs with those waiting for an approver shown
// as pending, and the reason why they cannot progress
// set on each running one that no live worker can take (none connected,
// none offering a capability its units need, or every one that could
// refused it), so that status and
// submit --wait say so at once instead of waiting silently. A reason the
// workload gave (e.g. verification waiting for a second identity) is
// kept. Snapshots are copied before they are changed.
func (js *jobService) withBlocked(jobs ...*arbiterv1.Job) []*arbiterv1.Job {
	var live []core.Caps // of the live workers, read once
	var views []core.WorkerView
	read := false
	for i, j := range jobs {
		if j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING && js.core.Pending(j.GetJobId()) {
			c := proto.Clone(j).(*arbiterv1.Job)
			jobproto.MarkPending(c)
			jobs[i] = c
			continue
		}
		if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || j.GetProgress().GetBlocked() != "" {
			continue
		}
		if !read {
			now, within := js.core.Now(), js.core.LeaseDuration()
			if now.Sub(js.started) < workerGrace {
				return jobs // the workers may not have (re)connected yet
			}
			for _, w := range js.core.Workers() {
				if w.Live(now, within) {
					live = append(live, w.Caps)
					views = append(views, w)
				}
			}
			read = true
		}
		n, known := needOf(j.GetJobId(), js.needers)
		if !known {
			continue
		}
		reason := blockedReason(n, live)
		if reason == "" {
			// Every worker that could run it refused it (its engine did
			// not start there) or was excluded: StallWatch fails it once
			// that has lasted, if it never started.
			reason = refusedReason(n, views)
		}
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

// blockedReason says why none of the live workers can run a unit with
// need n ("" when one can).
func blockedReason(n core.Need, live []core.Caps) string {
	if len(live) == 0 {
		return "no worker connected: start one with arbiter worker --coordinator HOST:PORT"
	}
	capable, why := 0, ""
	for _, caps := range live {
		if capability.Missing(n.Caps, caps.Has) == "" {
			capable++
			if n.Fits == nil {
				return ""
			}
			r := n.Fits(caps)
			if r == "" {
				return ""
			}
			if why == "" {
				why = r
			}
		}
	}
	if capable == 0 {
		named := make([]string, len(n.Caps))
		for i, c := range n.Caps {
			named[i] = capability.Describe(c)
		}
		return fmt.Sprintf("none of the %d connected workers offers %s", len(live), strings.Join(named, " + "))
	}
	return fmt.Sprintf("none of the %d connected workers can run its engines: %s", len(live), why)
}
