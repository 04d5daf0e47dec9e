package gamejob

import (
	"cmp"
	"context"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Snapshot implements core.Workload: a *arbiterv1.Job with the test's spec
// (openings omitted, their number in openings_count) and MatchProgress.
func (w *Workload) Snapshot(jobID string, full bool) (any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tests[jobID]
	if t == nil {
		return nil, false
	}
	r := t.rec
	out := &arbiterv1.Job{
		JobId:     r.ID,
		Kind:      r.Kind,
		State:     jobproto.State(r.State),
		Error:     r.Error,
		CreatedAt: timestamppb.New(r.CreatedAt),
		Submitter: r.Submitter,
		Nodes:     r.Total,
		Match:     proto.Clone(t.spec).(*arbiterv1.MatchSpec),
		Progress: &arbiterv1.JobProgress{UnitsTotal: uint64(r.UnitsTotal), UnitsDone: uint64(t.done),
			ActiveWorkers: uint32(t.activeWorkers())},
		MatchProgress: w.progress(t),
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	return out, true
}

// Verifications returns the tests that verify tune tuneID
// (MatchSpec.verifies_tune), in submission order, each with its progress
// without the per-worker rows.
func (w *Workload) Verifications(tuneID string) []*arbiterv1.SpsaVerification {
	if tuneID == "" {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var ts []*test
	for _, t := range w.tests {
		if t.spec.GetVerifiesTune() == tuneID {
			ts = append(ts, t)
		}
	}
	// Seq numbers jobs in submission order.
	slices.SortFunc(ts, func(a, b *test) int { return cmp.Compare(a.rec.Seq, b.rec.Seq) })
	out := make([]*arbiterv1.SpsaVerification, 0, len(ts))
	for _, t := range ts {
		mp := w.progress(t)
		mp.Workers = nil
		out = append(out, &arbiterv1.SpsaVerification{JobId: t.rec.ID, Kind: t.rec.Kind, State: jobproto.State(t.rec.State),
			Updates: t.spec.GetVerifiesTuneUpdates(), Progress: mp})
	}
	return out
}

// activeWorkers counts the workers holding a lease on t now. Caller holds
// mu.
func (t *test) activeWorkers() int {
	seen := make(map[string]bool, len(t.open))
	for _, h := range t.open {
		seen[h.worker] = true
	}
	return len(seen)
}

// progress renders where t stands. Caller holds mu.
func (w *Workload) progress(t *test) *arbiterv1.MatchProgress {
	p := t.penta
	mp := &arbiterv1.MatchProgress{
		Pentanomial: &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])},
		Wins:        uint64(t.results.Wins), Draws: uint64(t.results.Draws), Losses: uint64(t.results.Losses),
		Games: uint64(t.results.Games()), BatchesDone: uint64(t.done), BatchesLeased: uint64(len(t.open)),
		BatchPairs: uint32(t.batchPairs), Pgns: uint64(t.pgns),
	}
	if t.seq != nil {
		st := t.seq.Status()
		mp.Llr, mp.LowerBound, mp.UpperBound, mp.SprtState = st.LLR, st.LowerBound, st.UpperBound, string(st.State)
	}
	if t.results.Games() > 0 {
		r := t.results
		r.Pentanomial = &p
		fe := sprt.FixedGamesElo(r)
		mp.Elo, mp.EloCiLow, mp.EloCiHigh, mp.Los = finite(fe.Elo), finite(fe.CI95[0]), finite(fe.CI95[1]), finite(fe.LOS)
		ne := sprt.NEloFromPentanomial(p)
		mp.Nelo, mp.NeloHalfWidth = finite(ne.NElo), finite(ne.HalfWidth95)
	}
	timed := gamepair.AnyScaled(t.spec.GetTimeControl(), t.spec.GetEngineA(), t.spec.GetEngineB())
	mp.Workers = t.workers.Rows("test", func(wi *arbiterv1.WorkerIncidents) {
		if info, ok := w.workers[wi.WorkerId]; ok {
			wi.Name, wi.BenchNps, wi.TimeScale = info.name, info.benchNPS, 1
			if timed {
				wi.TimeScale = w.timeScale(t, info.benchNPS)
			}
		}
	})
	return mp
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Stats implements core.Workload: tests by kind and state. Batches are not
// counted in arbiter_units (an SPRT has no fixed number of them).
func (w *Workload) Stats() core.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := core.Stats{Jobs: map[core.JobKey]int{}, Units: map[string]int{}}
	for _, k := range []string{KindSPRT, KindMatch} {
		for _, s := range core.JobStates {
			st.Jobs[core.JobKey{Kind: k, State: s}] = 0
		}
	}
	for _, t := range w.tests {
		st.Jobs[core.JobKey{Kind: t.rec.Kind, State: t.rec.State}]++
	}
	return st
}

// SPRTState is one running test's statistics, for metrics and web pages.
type SPRTState struct {
	TestID string
	Kind   string // KindSPRT or KindMatch
	State  string // "continue", "accepted", "rejected"; "" for a match
	// LLR and its bounds (zero for a match).
	LLR, Lower, Upper float64
	// Elo ± its 95% interval, and nElo.
	Elo, EloLow, EloHigh, NElo float64
	Games                      int64
	Wins, Draws, Losses        int64
	Pentanomial                [5]int64
	Workers                    int // workers holding a batch now
}

// SPRTStates returns every running test's statistics, in submission order.
func (w *Workload) SPRTStates() []SPRTState {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]SPRTState, 0, len(w.running))
	for _, t := range w.running {
		mp := w.progress(t)
		out = append(out, SPRTState{
			TestID: t.rec.ID, Kind: t.rec.Kind, State: mp.GetSprtState(), LLR: mp.GetLlr(), Lower: mp.GetLowerBound(), Upper: mp.GetUpperBound(),
			Elo: mp.GetElo(), EloLow: mp.GetEloCiLow(), EloHigh: mp.GetEloCiHigh(), NElo: mp.GetNelo(), Games: int64(mp.GetGames()),
			Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()), Pentanomial: t.penta,
			Workers: t.activeWorkers(),
		})
	}
	return out
}

// PGNs calls fn with every stored game of test jobID, by batch then game.
// An id that is not a test is UNKNOWN_JOB, or BAD_INPUT when it names a job
// of another kind (Config.JobExists). An error of fn is returned as is.
func (w *Workload) PGNs(ctx context.Context, jobID string, fn func(pgn string) error) error {
	if jobID == "" {
		return apierr.Invalid("job id missing")
	}
	w.mu.Lock()
	_, known := w.tests[jobID]
	w.mu.Unlock()
	if !known {
		if w.cfg.JobExists != nil && w.cfg.JobExists(jobID) {
			return apierr.Invalid("job %s is not a match or SPRT test, nor an SPSA tune: it has no games", apierr.Q(jobID))
		}
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	return gamepair.StreamPGNs(ctx, w.store, jobID, fn)
}

// PGNsExpired records that the retention setting deleted the games of
// these finished tests: their snapshots show no stored PGNs.
func (w *Workload) PGNsExpired(jobIDs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range jobIDs {
		if t := w.tests[id]; t != nil && !t.running() {
			t.pgns = 0
		}
	}
}

// Running implements core.RunningReporter.
func (w *Workload) Running(jobID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.tests[jobID]
	return ok && t.running()
}
