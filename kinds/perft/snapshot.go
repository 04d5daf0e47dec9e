package perft

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Snapshot implements core.Workload: a *arbiterv1.Job.
func (w *Workload) Snapshot(jobID string, full bool) (any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return nil, false
	}
	r := j.rec
	out := &arbiterv1.Job{
		JobId: r.ID,
		Kind:  Kind,
		State: jobproto.State(r.State),
		Perft: &arbiterv1.PerftSpec{Fen: r.FEN, Depth: uint32(r.Depth), SplitPly: uint32(r.SplitPly),
			VerifyFraction: r.Verify, Chess960: r.Chess960, Priority: r.Priority, Throughput: share(r),
			Stats: r.Stats, Slices: uint32(max(r.Slices, 1))},
		Error:     r.Error,
		CreatedAt: timestamppb.New(r.CreatedAt),
		Submitter: r.Submitter,
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	p := &arbiterv1.JobProgress{
		UnitsTotal: uint64(r.UnitsTotal), Positions: uint64(r.Positions),
		UnitsDone: uint64(j.settled), UnitsVerified: uint64(j.verified),
		Mismatches: uint64(j.disputed), MismatchesSettled: uint64(j.resolved),
		NodesDone: j.nodesDone.String(),
	}
	if r.State != store.StateRunning {
		p.NodesDone = "0"
		if r.Total != "" {
			p.NodesDone = r.Total
		}
		p.UnitsDone = uint64(j.settled)
	}
	if r.State == store.StateDone {
		out.Nodes = r.Total
		if s := r.StatsTotal; r.Stats && len(s) == engine.NumPerftStats-1 {
			out.PerftStats = &arbiterv1.PerftStatistics{Captures: s[0], EnPassant: s[1], Castles: s[2], Promotions: s[3],
				Checks: s[4], DiscoveryChecks: s[5], DoubleChecks: s[6], Checkmates: s[7]}
		}
		if full {
			for i, m := range r.RootMoves {
				d := "0"
				if i < len(r.Divide) {
					d = r.Divide[i]
				}
				out.Divide = append(out.Divide, &arbiterv1.DivideEntry{Move: m, Nodes: d})
			}
		}
	}
	if r.State == store.StateRunning {
		p.ActiveWorkers = uint32(len(j.holders))
		if j.settled < len(j.units) && len(j.holders) == 0 && j.open() {
			p.Blocked = w.blocked(j)
		}
	}
	out.Progress = p
	out.CrossCheck = crossView(j)
	out.Perft.CrossCheck, out.Perft.CrossCheckFraction = r.CrossCheck, r.CrossCheckFraction
	if r.IsSuite() {
		out.Perft.SuiteSize, out.Perft.SuiteFirst = uint32(len(r.RootMoves)), uint32(r.SuiteFirst)
	}
	return out, true
}

// blocked says why no worker computes j's open units, when it can tell.
// Caller holds mu.
func (w *Workload) blocked(j *job) string {
	waiting, cross, failed := 0, 0, ""
	for _, u := range j.units {
		if !u.v.settled && len(u.runs) > 0 && u.wants() {
			waiting++
			if u.v.cross {
				cross++
				for id, why := range u.crossFailed {
					failed = fmt.Sprintf("; the program failed on worker %s: %s", id, clip(why, 300))
				}
			}
		}
	}
	if cross > 0 && waiting == len(j.units)-j.settled {
		return fmt.Sprintf("waiting for a worker that runs the cross-check program %s (arbiter worker --verify-engine name=%s,cmd=...) of an identity that has not run the unit (%d units to cross-check)%s",
			j.rec.CrossCheck, j.rec.CrossCheck, cross, failed)
	}
	if waiting > 0 && waiting == len(j.units)-j.settled {
		return "waiting for a worker of a second identity: verification and settlement runs must come from an identity that has not run the unit"
	}
	switch {
	case j.rec.Slices > 1 && j.rec.Stats:
		return "waiting for a worker that counts perft slices and statistics (capabilities " + capability.PerftSlices + " and " + capability.PerftStats + ")"
	case j.rec.Slices > 1:
		return "waiting for a worker that counts perft slices (capability " + capability.PerftSlices + ")"
	case j.rec.Stats:
		return "waiting for a worker that counts perft statistics (capability " + capability.PerftStats + ")"
	case len(j.distrusted) > 0:
		return fmt.Sprintf("waiting for a worker of an identity not outvoted in this job (outvoted, and leased none of its units: %s)",
			strings.Join(slices.Sorted(maps.Keys(j.distrusted)), ", "))
	}
	return ""
}

// Stats implements core.Workload.
func (w *Workload) Stats() core.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := core.Stats{Jobs: map[core.JobKey]int{}, Units: map[string]int{}}
	for _, s := range core.JobStates {
		st.Jobs[core.JobKey{Kind: Kind, State: s}] = 0
	}
	for _, j := range w.jobs {
		st.Jobs[core.JobKey{Kind: Kind, State: j.rec.State}]++
	}
	for _, j := range w.running {
		for _, u := range j.units {
			switch {
			case u.v.settled:
				st.Units["done"]++
			case len(u.holders) > 0:
				st.Units["leased"]++
			default:
				st.Units["queued"]++
			}
		}
	}
	return st
}
