package spsa

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// snapshot is a tune's part of its snapshot (gamepair.Hooks.Snapshot):
// its spec (openings omitted, their number in openings_count) and
// SpsaProgress. Caller holds mu.
func (w *Workload) snapshot(t *tune, out *arbiterv1.Job) {
	out.Spsa = proto.Clone(t.spec).(*arbiterv1.SpsaSpec)
	out.Progress = &arbiterv1.JobProgress{UnitsTotal: uint64(t.st.Config().Batches()), UnitsDone: uint64(t.st.Updates()),
		ActiveWorkers: uint32(t.Batches.Workers())}
	out.SpsaProgress = w.progress(t, t.Batches.Leased())
}

// progress renders where t stands. Caller holds mu.
func (w *Workload) progress(t *tune, leased int) *arbiterv1.SpsaProgress {
	cfg := t.st.Config()
	p := t.Penta
	sp := &arbiterv1.SpsaProgress{
		Updates: uint64(t.st.Updates()), PairsDone: uint64(t.st.PairsApplied()), Games: uint64(t.Results.Games()),
		Wins: uint64(t.Results.Wins), Draws: uint64(t.Results.Draws), Losses: uint64(t.Results.Losses),
		Pentanomial:  &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])},
		BatchesTotal: uint64(cfg.Batches()), BatchesLeased: uint64(leased), BatchPairs: uint32(cfg.BatchPairs),
		A: t.st.A(), TrajectoryEvery: uint64(t.traj.every), Pgns: uint64(t.PGNs),
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
			CEnd: par.CEnd, REnd: par.REnd, C: gamepair.Finite(c[i]), R: gamepair.Finite(rk[i])}
		ps.Trajectory = make([]float64, len(thetas))
		for k, th := range thetas {
			ps.Trajectory[k] = th[i]
		}
		sp.Params = append(sp.Params, ps)
	}
	sp.Workers = w.WorkerRows(&t.Job, gamepair.Scaled(t.spec.GetTimeControl()), w.referenceNPS(t))
	return sp
}

// PGNs passes every stored game of a tune to fn, batch by batch in the
// order of the tune's pairs; fn's error stops it and is returned.
func (w *Workload) PGNs(ctx context.Context, jobID string, fn func(pgn string) error) error {
	if !w.Has(jobID) {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown tune %s", apierr.Q(jobID))
	}
	return gamepair.StreamPGNs(ctx, w.store, jobID, fn)
}
