package perft

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"

	"github.com/arbiter-chess/arbiter/wire/perftwire"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// resultIn is what the checks of a result need of its unit, copied under
// the lock (positions are immutable once a job exists).
type resultIn struct {
	u        *unit
	program  string // the cross-check program that counted; "" for ours
	depth    int
	chess960 bool
	width    int // counts per position in the result
	sliced   bool
	fens     []string
}

// resultInput finds unitID's unit and what the checks of wk's result need;
// nil with the outcome or error when there is no unit to judge.
func (w *Workload) resultInput(unitID string, wk *core.Worker, claimed string) (*resultIn, core.Outcome, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[unitID]
	if u == nil {
		if _, known := w.jobs[jobOfUnit(unitID)]; known {
			return nil, core.Outcome{Verdict: core.Discarded}, nil // the job finished
		}
		return nil, core.Outcome{}, apierr.New(apierr.NotFound, apierr.ReasonUnknownUnit, "unknown unit %s", apierr.Q(unitID))
	}
	j := u.job
	in := &resultIn{u: u, depth: j.rec.Depth - j.rec.SplitPly, chess960: j.rec.Chess960, width: j.width(), sliced: j.rec.Slices > 1}
	for i := u.rec.First; i < u.rec.End; i++ {
		in.fens = append(in.fens, j.positions[i].FEN)
	}
	var err error
	if in.program, err = resultProgram(u, wk, claimed); err != nil {
		return nil, core.Outcome{}, err
	}
	if in.program != "" {
		// A cross-check run: node counts only.
		in.width, in.sliced = 1, false
	}
	return in, core.Outcome{}, nil
}

// checkResult decodes res and checks its shape and plausibility: in.width
// counts per position (a statistics job's node count first).
func checkResult(res *arbiterv1.PerftBatchResult, in *resultIn, unitID string, log *zap.Logger) ([]engine.Count, error) {
	width, fens := in.width, in.fens
	counts, err := decodeResult(res, width)
	if err != nil {
		return nil, malformed("unit %s: %v", unitID, err)
	}
	if len(counts) != len(fens)*width {
		return nil, malformed("unit %s has %d positions; the result has %d counts", unitID, len(fens), len(counts)/width)
	}
	check := perftsplit.CheckCount
	if in.sliced {
		check = perftsplit.CheckSliceCount
	}
	for i, fen := range fens {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return nil, fmt.Errorf("stored position %q: %w", fen, err)
		}
		if in.chess960 {
			p.SetChess960(true)
		}
		err = check(&p, in.depth, counts[i*width])
		if err == nil && width > 1 {
			err = perftsplit.CheckStats(counts[i*width : (i+1)*width])
		}
		if err != nil {
			log.Warn("result refused", zap.Int("position", i), zap.String("fen", fen), zap.Error(err))
			return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonImplausibleResult,
				"unit %s, position %d (%s), depth %d: %v", unitID, i, fen, in.depth, err)
		}
	}
	return counts, nil
}

func malformed(format string, args ...any) error {
	return apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, format, args...)
}

// Result implements core.Workload. The core has checked that the worker
// holds (or held, under this coordinator's signature) the unit's lease.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	res, ok := rc.Result.(*arbiterv1.PerftBatchResult)
	if !ok || res == nil {
		return core.Outcome{}, malformed("unit %s is a perft batch; the result is not a perft result", rc.Lease.UnitID)
	}
	wk, unitID := rc.Worker, rc.Lease.UnitID
	log := w.log.With(zap.String(logging.UnitID, unitID), zap.String(logging.WorkerID, wk.ID), zap.String(logging.LeaseID, rc.Lease.ID))

	// Phase 1, under the lock: find the unit and copy what the checks
	// need. Phase 2, without it: shape and plausibility.
	in, out, err := w.resultInput(unitID, wk, res.GetProgram())
	if in == nil {
		return out, err
	}
	u, j, program := in.u, in.u.job, in.program
	counts, err := checkResult(res, in, unitID, log)
	if err != nil {
		return core.Outcome{}, err
	}

	// Phase 3: decide and apply under the locks, queue the write, and wait
	// for the disk without them. Leases, heartbeats and other results go
	// on meanwhile.
	w.commitMu.Lock()
	w.mu.Lock()
	if w.units[unitID] != u || j.rec.State != store.StateRunning {
		w.mu.Unlock()
		w.commitMu.Unlock()
		return core.Outcome{Verdict: core.Discarded}, nil
	}
	if out, done, err := w.repeated(u, wk, counts, program, log); done {
		w.mu.Unlock()
		w.commitMu.Unlock()
		return out, err
	}

	run := Run{UnitID: unitID, WorkerID: wk.ID, Owner: wk.Owner, Program: program, Counts: counts, At: w.cfg.Now(), ElapsedMS: rc.Elapsed.Milliseconds()}
	runs := append(slices.Clip(u.runs), run)
	v := judgeUnit(u, runs, w.cfg.MaxRuns, j.distrusted)
	// An identity this run outvotes in a settled dispute is no witness
	// for the job any more: the units it alone settled open again.
	distrusted, reopened := w.distrust(j, u, runs, v)
	if distrusted != nil {
		v = judgeUnit(u, runs, w.cfg.MaxRuns, distrusted)
	}

	verdict, events := mismatchOf(u, v, run)

	// The unit's contribution changes when it settles, unsettles, or
	// settles on other counts.
	wasCounted, nowCounted := u.counted, v.settled
	oldCounts := u.v.counts
	changed := !slices.Equal(oldCounts, v.counts)
	delta := func(divide []*big.Int, total *big.Int, stats []*big.Int) {
		if wasCounted && (!nowCounted || changed) {
			contribute(u, oldCounts, -1, divide, total, stats)
		}
		if nowCounted && (!wasCounted || changed) {
			contribute(u, v.counts, +1, divide, total, stats)
		}
		for _, r := range reopened {
			r.delta(divide, total, stats)
		}
	}
	jobChange := w.jobChangeAfter(j, u, v, reopened, len(runs), delta)

	// Queue the write, then apply the decision to memory at once, in
	// decision order (the next result is decided on it), and answer the
	// worker only once the write is on disk. Writes queued together share
	// one commit (store's group commit). Should the write fail, memory is
	// ahead of the store: the job is rebuilt from the store (reload).
	unitChange := &UnitChange{Settled: v.settled, Counts: v.counts}
	durable := commitStart(w.store, j.rec.ID, unitID, &run, unitChange, jobChange, events)
	prevDistrust := j.distrusted
	w.release(u, wk.ID)
	delta(j.divide, &j.nodesDone, j.stats)
	w.metrics.unitSettled(u, u.v, v, wasCounted)
	j.tally(u.v, -1)
	j.tally(v, +1)
	prevRuns := u.runs
	u.runs, u.v, u.counted = runs, v, nowCounted
	if distrusted != nil {
		j.distrusted = distrusted
		for _, r := range reopened {
			j.tally(r.u.v, -1)
			j.tally(r.v, +1)
			r.u.v, r.u.counted = r.v, r.v.settled
		}
		log.Warn("identity outvoted: its runs of the job count no more", zap.String(logging.JobID, j.rec.ID),
			zap.Strings("identities", newlyDistrusted(j.distrusted, prevDistrust)), zap.Int("units_reopened", len(reopened)))
	}
	fields := []zap.Field{zap.String(logging.JobID, j.rec.ID), zap.Bool("settled", v.settled),
		zap.Int("runs", len(runs)), zap.Duration("elapsed", rc.Elapsed)}
	if verdict == core.Mismatch {
		log.Warn("result mismatch", append(fields, zap.String("detail", mismatchDetail(prevRuns, run, j.positions[u.rec.First:u.rec.End], j.width())))...)
	} else {
		log.Debug("result accepted", fields...)
	}
	out = core.Outcome{Verdict: verdict}
	if jobChange != nil {
		w.applyFinal(j, jobChange)
		out.JobOver = true
	} else {
		w.requeue(u)
		for _, r := range reopened {
			w.requeue(r.u)
		}
	}
	w.mu.Unlock()
	w.commitMu.Unlock()

	if err := <-durable; err != nil {
		log.Error("store commit failed; rebuilding the job from the store", zap.String(logging.JobID, j.rec.ID), zap.Error(err))
		w.reload(ctx, j.rec.ID)
		return core.Outcome{}, apierr.Store(err)
	}
	return out, nil
}

// mismatchOf is the verdict on run, which gives u verdict v: a mismatch
// when it opens a dispute (with the event that names the position) or
// loses one.
func mismatchOf(u *unit, v verdict, run Run) (core.Verdict, []store.Event) {
	j := u.job
	switch {
	case v.disputed && !u.v.disputed:
		return core.Mismatch, []store.Event{{JobID: j.rec.ID, UnitID: u.rec.ID, WorkerID: run.WorkerID, Kind: "mismatch",
			Detail: mismatchDetail(u.runs, run, j.positions[u.rec.First:u.rec.End], j.width()), At: run.At}}
	case v.disputed && !slices.Equal(v.counts, run.Counts):
		return core.Mismatch, nil
	}
	return core.Accepted, nil
}

// repeated answers a result that adds nothing: a replay by a worker or
// identity that already ran u (compared, never added), or a late copy
// that agrees with counts already enough. done reports whether it is one
// (its lease then released). Caller holds the locks.
func (w *Workload) repeated(u *unit, wk *core.Worker, counts []engine.Count, program string, log *zap.Logger) (core.Outcome, bool, error) {
	for _, r := range u.runs {
		if r.WorkerID != wk.ID && owner(r) != wk.Owner {
			continue
		}
		// The same worker or identity again: a replay. Compare, never add.
		w.release(u, wk.ID)
		if slices.Equal(r.Counts, counts) {
			log.Info("duplicate result", zap.String(logging.JobID, u.job.rec.ID))
			return core.Outcome{Verdict: core.Duplicate}, true, nil
		}
		return core.Outcome{}, true, apierr.New(apierr.InvalidArgument, apierr.ReasonConflictingResult,
			"unit %s: identity %s already submitted different counts for this unit", u.rec.ID, apierr.Q(wk.Owner))
	}
	if program == "" && (u.v.settled && slices.Equal(u.v.counts, counts) && u.v.agreeing >= required(u) || u.oursSuffice(counts, w.cfg.MaxRuns)) {
		// A late copy of a settled result (e.g. the lease had expired and
		// was re-issued), or of ours where a cross-check is all a sampled
		// unit waits for: it agrees, so it is not stored again (stored, it
		// would take the identity the cross-check needs).
		w.release(u, wk.ID)
		log.Info("late duplicate result agrees", zap.String(logging.JobID, u.job.rec.ID))
		return core.Outcome{Verdict: core.Duplicate}, true, nil
	}
	return core.Outcome{}, false, nil
}

// jobChangeAfter is the store change that ends j once u's verdict is v
// (and reopened's theirs), nruns runs of u: failed, done with the sums
// delta moves to, or nil while the job goes on. Caller holds the locks.
func (w *Workload) jobChangeAfter(j *job, u *unit, v verdict, reopened []rejudged, nruns int,
	delta func(divide []*big.Int, total *big.Int, stats []*big.Int)) *store.JobChange {
	// The job's counts after this run.
	after := job{settled: j.settled, verified: j.verified, disputed: j.disputed, resolved: j.resolved}
	after.tally(u.v, -1)
	after.tally(v, +1)
	for _, r := range reopened {
		after.tally(r.u.v, -1)
		after.tally(r.v, +1)
	}
	switch {
	case v.failed:
		return w.finalChange(&after, store.StateFailed, fmt.Sprintf("unit %s: %d runs without a majority", u.rec.ID, nruns))
	case after.settled == len(j.units):
		after.divide = make([]*big.Int, len(j.divide))
		for i, d := range j.divide {
			after.divide[i] = new(big.Int).Set(d)
		}
		after.nodesDone.Set(&j.nodesDone)
		if j.stats != nil {
			after.stats = make([]*big.Int, len(j.stats))
			for i, d := range j.stats {
				after.stats[i] = new(big.Int).Set(d)
			}
		}
		delta(after.divide, &after.nodesDone, after.stats)
		return w.finalChange(&after, store.StateDone, "")
	}
	return nil
}

// reload rebuilds a job from the store after a write that memory had
// already applied failed: memory goes back to what is on disk.
func (w *Workload) reload(ctx context.Context, jobID string) {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	recs, err := w.store.Jobs(ctx)
	if err != nil {
		w.log.Error("reload failed", zap.String(logging.JobID, jobID), zap.Error(err))
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rec := range recs {
		if rec.ID != jobID {
			continue
		}
		if old := w.jobs[jobID]; old != nil {
			w.forget(old)
		}
		j := &job{rec: rec, holders: map[string]int{}}
		if rec.State == store.StateRunning {
			if err := w.loadRunning(ctx, j); err != nil {
				w.log.Error("reload failed", zap.String(logging.JobID, jobID), zap.Error(err))
				return
			}
			w.running = append(w.running, j)
		}
		w.jobs[jobID] = j
	}
	if w.host != nil {
		w.host.WorkAvailable()
	}
}

// mismatchDetail names the first position where run differs from earlier
// runs: the position where some worker's engine went wrong (width counts
// per position: which one differs, for statistics; a cross-check run's
// node counts are compared with the nodes of ours).
func mismatchDetail(prev []Run, run Run, positions []Position, width int) string {
	for _, r := range prev {
		a, b, w := r.Counts, run.Counts, width
		if r.Program != "" || run.Program != "" {
			a, b, w = nodesOf(r, width), nodesOf(run, width), 1
		}
		for i := range a {
			if p := i / w; i < len(b) && p < len(positions) && a[i] != b[i] {
				what := ""
				if w > 1 {
					what = " " + engine.PerftStatName(i%w)
				}
				return fmt.Sprintf("position %d (%s):%s worker %s counted %v, worker %s counted %v",
					p, positions[p].FEN, what, runBy(r), a[i], runBy(run), b[i])
			}
		}
	}
	return "counts differ"
}

// runBy names who counted r: the worker, and the program when not ours.
func runBy(r Run) string {
	if r.Program != "" {
		return r.WorkerID + " (with " + r.Program + ")"
	}
	return r.WorkerID
}

// decodeResult reads a result's counts, width per position: the node
// count alone, or with the eight statistics.
func decodeResult(res *arbiterv1.PerftBatchResult, width int) ([]engine.Count, error) {
	if width == 1 {
		if len(res.GetStats())+len(res.GetStatsHigh()) > 0 {
			return nil, fmt.Errorf("statistics in the result of a job without them")
		}
		return perftwire.Decode(res)
	}
	stats, err := perftwire.DecodeStats(res)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Count, 0, len(stats)*width)
	for i := range stats {
		out = append(out, stats[i][:]...)
	}
	return out, nil
}

// rejudged is a unit whose verdict changes when an identity is distrusted.
type rejudged struct {
	u *unit
	v verdict
}

// delta moves r's contribution to the sums from its old verdict to v.
func (r rejudged) delta(divide []*big.Int, total *big.Int, stats []*big.Int) {
	if r.u.counted {
		contribute(r.u, r.u.v.counts, -1, divide, total, stats)
	}
	if r.v.settled {
		contribute(r.u, r.v.counts, +1, divide, total, stats)
	}
}

// distrust returns the job's distrusted identities with those the runs of
// u (verdict v) outvote, and the other units whose verdicts that changes;
// nil, nil when v outvotes no one new. A changed verdict may outvote
// another identity in turn: it goes on to the fixed point Load reaches
// (findDistrusted). Caller holds mu.
func (w *Workload) distrust(j *job, u *unit, runs []Run, v verdict) (map[string]bool, []rejudged) {
	runsOf := func(o *unit) []Run {
		if o == u {
			return runs
		}
		return o.runs
	}
	distrusted := j.distrusted
	verdicts := map[*unit]verdict{u: v} // the units judged again, under distrusted
	for {
		var newly []string
		for o, ov := range verdicts {
			for _, id := range outvotedUnit(runsOf(o), ov, j.width()) {
				if !distrusted[id] && !slices.Contains(newly, id) {
					newly = append(newly, id)
				}
			}
		}
		if len(newly) == 0 {
			break
		}
		distrusted = maps.Clone(distrusted)
		if distrusted == nil {
			distrusted = map[string]bool{}
		}
		for _, id := range newly {
			distrusted[id] = true
		}
		for _, o := range j.units {
			if o == u || slices.ContainsFunc(o.runs, func(r Run) bool { return slices.Contains(newly, owner(r)) }) {
				verdicts[o] = judgeUnit(o, runsOf(o), w.cfg.MaxRuns, distrusted)
			}
		}
	}
	if len(distrusted) == len(j.distrusted) {
		return nil, nil
	}
	var out []rejudged
	for _, o := range j.units {
		ov, ok := verdicts[o]
		if o == u || !ok {
			continue
		}
		if ov.settled != o.v.settled || ov.want != o.v.want || ov.disputed != o.v.disputed || !slices.Equal(ov.counts, o.v.counts) {
			out = append(out, rejudged{u: o, v: ov})
		}
	}
	return distrusted, out
}

// newlyDistrusted lists the identities in now and not in before.
func newlyDistrusted(now, before map[string]bool) []string {
	var out []string
	for o := range now {
		if !before[o] {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}
