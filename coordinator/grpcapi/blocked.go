package grpcapi

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/internal/capability"
	"github.com/arbiter-chess/arbiter/internal/jobkind"
	"github.com/arbiter-chess/arbiter/internal/matchspec"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// workerGrace is how long after start the coordinator waits for workers
// (its own in arbiter up, or a farm's reconnecting after a restart)
// before it says that a job has none that can run it.
const workerGrace = 3 * time.Second

// needs is what every unit of a job asks of a worker: capabilities
// (perft for a perft job, game-pair for a test or tune, and builtin when
// one of its engines is the embedded one) and, for a test or tune, that
// the worker fits its two engines (gamepair.FitsCaps: uploaded engines,
// per-engine time controls).
type needs struct {
	caps []string
	// fits says why a worker with caps still cannot run the job ("" when
	// it can); nil: any worker with caps can.
	fits func(core.Caps) string
}

// needsOf is what a job's units ask of a worker: a plugged-in kind says
// (workload.Needer); the built-in kinds by their family.
func needsOf(j *arbiterv1.Job, plugins map[string]core.Workload) (needs, bool) {
	if wl, ok := plugins[j.GetKind()].(workload.Needer); ok {
		caps, fits, ok := wl.Needs(j.GetJobId())
		return needs{caps: caps, fits: fits}, ok
	}
	var engines []*arbiterv1.EngineSpec
	n := needs{}
	switch jobkind.Of(j).Family {
	case jobkind.FamilyPerft:
		n.caps = []string{capability.Perft}
	case jobkind.FamilyTest:
		engines = []*arbiterv1.EngineSpec{j.GetMatch().GetEngineA(), j.GetMatch().GetEngineB()}
	case jobkind.FamilyTune:
		engines = []*arbiterv1.EngineSpec{j.GetSpsa().GetEngine(), j.GetSpsa().GetEngine()}
	default:
		return n, false
	}
	if engines != nil {
		n.caps = []string{capability.GamePair}
		if matchspec.IsBuiltin(engines[0]) || matchspec.IsBuiltin(engines[1]) {
			n.caps = append(n.caps, capability.Builtin)
		}
		n.fits = func(c core.Caps) string { return gamepair.FitsCaps(engines[0], engines[1], c) }
	}
	return n, true
}

// withBlocked returns the jobs with the reason why they cannot progress
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
					live = append(live, w.Caps)
					views = append(views, w)
				}
			}
			read = true
		}
		n, known := needsOf(j, js.plugins)
		if !known {
			continue
		}
		reason := blockedReason(n, live)
		if reason == "" && gameFamily(j) {
			// Every worker that could run it refused it (its engine did
			// not start there) or was excluded: StallWatch fails it once
			// that has lasted, if it never started.
			reason = refusedReason(j, views)
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
// needs n ("" when one can).
func blockedReason(n needs, live []core.Caps) string {
	if len(live) == 0 {
		return "no worker connected: start one with arbiter worker --coordinator HOST:PORT"
	}
	capable, why := 0, ""
	for _, caps := range live {
		if capability.Missing(n.caps, caps.Has) == "" {
			capable++
			if n.fits == nil {
				return ""
			}
			r := n.fits(caps)
			if r == "" {
				return ""
			}
			if why == "" {
				why = r
			}
		}
	}
	if capable == 0 {
		return fmt.Sprintf("none of the %d connected workers offers %s", len(live), strings.Join(n.caps, " + "))
	}
	return fmt.Sprintf("none of the %d connected workers can run its engines: %s", len(live), why)
}
