package spsajob

import (
	"context"
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Snapshot implements core.Workload: a *arbiterv1.Job with the tune's spec
// (openings omitted, their number in openings_count) and SpsaProgress.
func (w *Workload) Snapshot(jobID string, full bool) (any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tunes[jobID]
	if t == nil {
		return nil, false
	}
	r := t.rec
	leased, active := 0, 0
	if t.batches != nil {
		leased, active = t.batches.Leased(), t.batches.Workers()
	}
	out := &arbiterv1.Job{
		JobId:     r.ID,
		Kind:      r.Kind,
		State:     jobproto.State(r.State),
		Error:     r.Error,
		CreatedAt: timestamppb.New(r.CreatedAt),
		Submitter: r.Submitter,
		Spsa:      proto.Clone(t.spec).(*arbiterv1.SpsaSpec),
		Progress: &arbiterv1.JobProgress{UnitsTotal: uint64(t.st.Config().Batches()), UnitsDone: uint64(t.st.Updates()),
			ActiveWorkers: uint32(active)},
		SpsaProgress: w.progress(t, leased),
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	return out, true
}

// progress renders where t stands. Caller holds mu.
func (w *Workload) progress(t *tune, leased int) *arbiterv1.SpsaProgress {
	cfg := t.st.Config()
	p := t.penta
	sp := &arbiterv1.SpsaProgress{
		Updates: uint64(t.st.Updates()), PairsDone: uint64(t.st.PairsApplied()), Games: uint64(t.results.Games()),
		Wins: uint64(t.results.Wins), Draws: uint64(t.results.Draws), Losses: uint64(t.results.Losses),
		Pentanomial:  &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])},
		BatchesTotal: uint64(cfg.Batches()), BatchesLeased: uint64(leased), BatchPairs: uint32(cfg.BatchPairs),
		A: t.st.A(), TrajectoryEvery: uint64(t.traj.every), Pgns: uint64(t.pgns),
	}
	// The trajectory's points, and the latest when it falls between them.
	points, thetas := t.traj.updates, t.traj.theta
	if n := len(points); n == 0 || points[n-1] != uint64(t.st.Updates()) {
		points = append(points[:n:n], uint64(t.st.Updates()))
		thetas = append(thetas[:n:n], t.st.Theta())
	}
	sp.TrajectoryUpdates = points
	c, rk := t.st.Step(min(t.st.PairsApplied(), cfg.Pairs-1))
	theta := t.st.Theta()
	for i, par := range cfg.Params {
		ps := &arbiterv1.SpsaParamState{Name: par.Name, IsFloat: par.Float, Start: par.Start, Current: theta[i], Min: par.Min, Max: par.Max,
			CEnd: par.CEnd, REnd: par.REnd, C: finite(c[i]), R: finite(rk[i])}
		ps.Trajectory = make([]float64, len(thetas))
		for k, th := range thetas {
			ps.Trajectory[k] = th[i]
		}
		sp.Params = append(sp.Params, ps)
	}
	timed := gamepair.Scaled(t.spec.GetTimeControl())
	sp.Workers = t.workers.Rows("tune", func(wi *arbiterv1.WorkerIncidents) {
		if info, ok := w.workers[wi.WorkerId]; ok {
			wi.Name, wi.BenchNps, wi.TimeScale = info.name, info.benchNPS, 1
			if timed {
				wi.TimeScale = gamepair.TimeScale(w.referenceNPS(t), info.benchNPS)
			}
		}
	})
	return sp
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Stats implements core.Workload: tunes by state. Batches are not counted
// in arbiter_units.
func (w *Workload) Stats() core.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := core.Stats{Jobs: map[core.JobKey]int{}, Units: map[string]int{}}
	for _, s := range core.JobStates {
		st.Jobs[core.JobKey{Kind: Kind, State: s}] = 0
	}
	for _, t := range w.tunes {
		st.Jobs[core.JobKey{Kind: t.rec.Kind, State: t.rec.State}]++
	}
	return st
}

// PGNsExpired records that the retention setting deleted the games of
// these finished tunes (ids of other jobs are ignored): their snapshots
// show no stored PGNs.
func (w *Workload) PGNsExpired(jobIDs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range jobIDs {
		if t := w.tunes[id]; t != nil && !t.running() {
			t.pgns = 0
		}
	}
}

// Has reports whether jobID is a tune (running or finished).
func (w *Workload) Has(jobID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tunes[jobID] != nil
}

// PGNs passes every stored game of a tune to fn, batch by batch in the
// order of the tune's pairs; fn's error stops it and is returned.
func (w *Workload) PGNs(ctx context.Context, jobID string, fn func(pgn string) error) error {
	if !w.Has(jobID) {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown tune %s", apierr.Q(jobID))
	}
	return gamepair.StreamPGNs(ctx, w.store, jobID, fn)
}

// Running implements core.RunningReporter.
func (w *Workload) Running(jobID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.tunes[jobID]
	return ok && t.running()
}
