package test

import (
	"cmp"
	"context"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// snapshot is a test's part of its snapshot (gamepair.Hooks.Snapshot):
// its spec (openings omitted, their number in openings_count) and
// MatchProgress. Caller holds mu.
func (w *Workload) snapshot(t *test, out *arbiterv1.Job) {
	out.Nodes = t.Rec.Total
	out.Match = proto.Clone(t.spec).(*arbiterv1.MatchSpec)
	out.Progress = &arbiterv1.JobProgress{UnitsTotal: uint64(t.Rec.UnitsTotal), UnitsDone: uint64(t.Done),
		ActiveWorkers: uint32(t.Batches.Workers())}
	out.MatchProgress = w.progress(t)
	out.MatchProgress.StoppedByHand = t.stoppedByHand()
	out.MatchProgress.RescheduledAs = slices.Clone(w.copies[t.Rec.ID])
}

// Verifications returns the tests that verify tune tuneID
// (MatchSpec.verifies_tune), in submission order, each with its progress
// without the per-worker rows.
func (w *Workload) Verifications(tuneID string) []*arbiterv1.SpsaVerification {
	if tuneID == "" {
		return nil
	}
	w.Mu.Lock()
	defer w.Mu.Unlock()
	ts := w.testsWhere(func(t *test) bool { return t.spec.GetVerifiesTune() == tuneID })
	out := make([]*arbiterv1.SpsaVerification, 0, len(ts))
	for _, t := range ts {
		mp := w.progress(t)
		mp.Workers = nil
		out = append(out, &arbiterv1.SpsaVerification{JobId: t.Rec.ID, Kind: t.Rec.Kind, State: jobproto.State(t.Rec.State),
			Updates: t.spec.GetVerifiesTuneUpdates(), Progress: mp})
	}
	return out
}

// testsWhere is the tests keep admits, in submission order. Caller holds
// mu.
func (w *Workload) testsWhere(keep func(*test) bool) []*test {
	var ts []*test
	for _, t := range w.Jobs {
		if keep(t) {
			ts = append(ts, t)
		}
	}
	// Seq numbers jobs in submission order.
	slices.SortFunc(ts, func(a, b *test) int { return cmp.Compare(a.Rec.Seq, b.Rec.Seq) })
	return ts
}

// progress renders where t stands. Caller holds mu.
func (w *Workload) progress(t *test) *arbiterv1.MatchProgress {
	p := t.Penta
	mp := &arbiterv1.MatchProgress{
		Pentanomial: &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])},
		Wins:        uint64(t.Results.Wins), Draws: uint64(t.Results.Draws), Losses: uint64(t.Results.Losses),
		Games: uint64(t.Results.Games()), BatchesDone: uint64(t.Done), BatchesLeased: uint64(t.Batches.Leased()),
		BatchPairs: uint32(t.batchPairs), Pgns: uint64(t.PGNs),
	}
	if t.seq != nil {
		st := t.seq.Status()
		mp.Llr, mp.LowerBound, mp.UpperBound, mp.SprtState = st.LLR, st.LowerBound, st.UpperBound, string(st.State)
	}
	if t.Results.Games() > 0 {
		r := t.Results
		r.Pentanomial = &p
		fe := sprt.FixedGamesElo(r)
		mp.Elo, mp.EloCiLow, mp.EloCiHigh, mp.Los = gamepair.Finite(fe.Elo), gamepair.Finite(fe.CI95[0]), gamepair.Finite(fe.CI95[1]), gamepair.Finite(fe.LOS)
		ne := sprt.NEloFromPentanomial(p)
		mp.Nelo, mp.NeloHalfWidth = gamepair.Finite(ne.NElo), gamepair.Finite(ne.HalfWidth95)
	}
	w.fillAnytime(t, mp)
	timed := gamepair.AnyScaled(t.spec.GetTimeControl(), t.spec.GetEngineA(), t.spec.GetEngineB())
	mp.Workers = w.WorkerRows(&t.Job, timed, w.referenceNPS(t))
	return mp
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
	w.Mu.Lock()
	defer w.Mu.Unlock()
	out := make([]SPRTState, 0, len(w.Running))
	for _, t := range w.Running {
		mp := w.progress(t)
		out = append(out, SPRTState{
			TestID: t.Rec.ID, Kind: t.Rec.Kind, State: mp.GetSprtState(), LLR: mp.GetLlr(), Lower: mp.GetLowerBound(), Upper: mp.GetUpperBound(),
			Elo: mp.GetElo(), EloLow: mp.GetEloCiLow(), EloHigh: mp.GetEloCiHigh(), NElo: mp.GetNelo(), Games: int64(mp.GetGames()),
			Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()), Pentanomial: t.Penta,
			Workers: t.Batches.Workers(),
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
	w.Mu.Lock()
	_, known := w.Jobs[jobID]
	w.Mu.Unlock()
	if !known {
		if w.cfg.JobExists != nil && w.cfg.JobExists(jobID) {
			return apierr.Invalid("job %s is not a match or SPRT test, nor an SPSA tune: it has no games", apierr.Q(jobID))
		}
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(jobID))
	}
	return gamepair.StreamPGNs(ctx, w.store, jobID, fn)
}
