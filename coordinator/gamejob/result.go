package gamejob

import (
	"context"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/internal/gamelabel"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Limits on one batch result.
const (
	// MaxPGNBytes bounds one game's PGN.
	MaxPGNBytes = 1 << 20
	// MaxResultPGNBytes bounds the PGNs of one batch result together; the
	// API layer's message limit must leave room for it.
	MaxResultPGNBytes = 12 << 20
	// maxIncidentsPerGame bounds a result's incidents (2 × pairs × this).
	maxIncidentsPerGame = 64
	// maxCount bounds any count a worker reports (far above any batch).
	maxCount = 1 << 40
)

func malformed(format string, args ...any) error {
	return apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, format, args...)
}

// batchResult is a checked result: its counts, games and incidents.
type batchResult struct {
	res       sprt.Results
	pgns      []string
	games     []gameLabel // by game index
	incidents map[string]int64
}

// checkBatchResult refuses a result that does not fit its batch of pairs
// game pairs: a pentanomial that does not count the pairs, W/D/L that cannot
// come from it, a PGN count that differs from the games, a PGN over its
// limit, an incident naming a game outside the batch, game outcomes that
// are missing, repeated, or disagree with the W/D/L and pentanomial (game
// 2k has engine A as White, game 2k+1 engine B).
func checkBatchResult(unit string, pairs int, r *arbiterv1.GamePairBatchResult) (*batchResult, error) {
	u := apierr.Q(unit)
	games := 2 * pairs
	p := r.GetPentanomial()
	if p == nil {
		return nil, malformed("unit %s: pentanomial missing", u)
	}
	penta := sprt.Pentanomial{int64(min(p.GetLl(), maxCount+1)), int64(min(p.GetLd(), maxCount+1)), int64(min(p.GetDd(), maxCount+1)),
		int64(min(p.GetWd(), maxCount+1)), int64(min(p.GetWw(), maxCount+1))}
	for _, v := range penta {
		if v > maxCount {
			return nil, malformed("unit %s: pentanomial count out of range", u)
		}
	}
	if got := penta.Pairs(); got != int64(pairs) {
		return nil, malformed("unit %s has %d pairs; the pentanomial counts %d", u, pairs, got)
	}
	if r.GetWins() > maxCount || r.GetDraws() > maxCount || r.GetLosses() > maxCount {
		return nil, malformed("unit %s: W/D/L out of range", u)
	}
	res := sprt.Results{Wins: int64(r.GetWins()), Draws: int64(r.GetDraws()), Losses: int64(r.GetLosses()), Pentanomial: &penta}
	if res.Wins+res.Draws+res.Losses != int64(games) {
		return nil, malformed("unit %s has %d games; W/D/L count %d", u, games, res.Wins+res.Draws+res.Losses)
	}
	if err := res.Validate(); err != nil {
		return nil, malformed("unit %s: %v", u, err)
	}
	if len(r.GetPgns()) != games {
		return nil, malformed("unit %s has %d games; the result has %d PGNs", u, games, len(r.GetPgns()))
	}
	total := 0
	for i, g := range r.GetPgns() {
		if len(g) > MaxPGNBytes {
			return nil, malformed("unit %s: PGN %d is %d bytes, over the %d-byte limit", u, i, len(g), MaxPGNBytes)
		}
		if !strings.HasPrefix(strings.TrimSpace(g), "[") {
			return nil, malformed("unit %s: PGN %d is not a PGN game", u, i)
		}
		if total += len(g); total > MaxResultPGNBytes {
			return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge,
				"unit %s: the PGNs pass %d bytes; a batch result may carry at most that", u, MaxResultPGNBytes)
		}
	}
	if len(r.GetIncidents()) > maxIncidentsPerGame*games {
		return nil, malformed("unit %s: %d incidents for %d games", u, len(r.GetIncidents()), games)
	}
	incidents := map[string]int64{}
	for i, inc := range r.GetIncidents() {
		if inc.GetGameIndex() >= uint32(games) {
			return nil, malformed("unit %s: incident %d names game %d of %d", u, i, inc.GetGameIndex(), games)
		}
		incidents[incidentClass(inc.GetKind())]++
	}
	if n := r.GetOverruns(); n > 0 {
		if n > maxCount {
			return nil, malformed("unit %s: overruns out of range", u)
		}
		incidents[incOverrun] += int64(n)
	}
	labels, err := checkGames(u, pairs, r.GetGames(), res)
	if err != nil {
		return nil, err
	}
	return &batchResult{res: res, pgns: r.GetPgns(), games: labels, incidents: incidents}, nil
}

// checkGames checks the per-game outcomes against the batch's counts and
// returns their metric labels in game order.
func checkGames(u string, pairs int, games []*arbiterv1.GameOutcome, res sprt.Results) ([]gameLabel, error) {
	n := 2 * pairs
	if len(games) != n {
		return nil, malformed("unit %s has %d games; the result has %d game outcomes", u, n, len(games))
	}
	labels := make([]gameLabel, n)
	seen := make([]bool, n)
	for i, g := range games {
		k := g.GetGameIndex()
		if k >= uint32(n) || seen[k] {
			return nil, malformed("unit %s: game outcome %d names game %d (each of 0..%d once)", u, i, k, n-1)
		}
		seen[k] = true
		l, err := labelOf(g.GetResult(), g.GetTermination())
		if err != nil {
			return nil, malformed("unit %s: game %d: %v", u, k, err)
		}
		labels[k] = l
	}
	// Engine A's outcome in each game, and its pair scores.
	var wdl sprt.Results
	var penta sprt.Pentanomial
	for k := 0; k < n; k += 2 {
		a, b := outcomeOfA(labels[k].result, true), outcomeOfA(labels[k+1].result, false)
		if a < 0 || b < 0 {
			return nil, malformed("unit %s: pair %d has an unfinished game", u, k/2)
		}
		_ = wdl.AddPair(sprt.Outcome(a), sprt.Outcome(b))
		penta[a+b]++
	}
	if wdl.Wins != res.Wins || wdl.Draws != res.Draws || wdl.Losses != res.Losses {
		return nil, malformed("unit %s: the game outcomes give W/D/L %d/%d/%d; the result says %d/%d/%d",
			u, wdl.Wins, wdl.Draws, wdl.Losses, res.Wins, res.Draws, res.Losses)
	}
	if penta != *res.Pentanomial {
		return nil, malformed("unit %s: the game outcomes give pentanomial %v; the result says %v", u, penta, *res.Pentanomial)
	}
	return labels, nil
}

// outcomeOfA is engine A's outcome (sprt.Loss, Draw, Win) in a game whose
// White is A when aWhite; -1 for an unfinished game.
func outcomeOfA(result string, aWhite bool) int {
	switch {
	case result == gamelabel.Draw:
		return int(sprt.Draw)
	case result == gamelabel.White && aWhite, result == gamelabel.Black && !aWhite:
		return int(sprt.Win)
	case result == gamelabel.White, result == gamelabel.Black:
		return int(sprt.Loss)
	}
	return -1
}

func incidentClass(k arbiterv1.IncidentKind) string {
	switch k {
	case arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS:
		return incTimeLoss
	case arbiterv1.IncidentKind_INCIDENT_KIND_CRASH:
		return incCrash
	case arbiterv1.IncidentKind_INCIDENT_KIND_ILLEGAL_MOVE:
		return incIllegal
	case arbiterv1.IncidentKind_INCIDENT_KIND_HANG:
		return incHang
	case arbiterv1.IncidentKind_INCIDENT_KIND_DISCONNECT:
		return incDisconnect
	}
	return incOther
}

// Result implements core.Workload. The core has checked that the worker
// holds (or held, under this coordinator's signature) the batch's lease.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	unit, wk := rc.Lease.UnitID, rc.Worker
	r, ok := rc.Result.(*arbiterv1.GamePairBatchResult)
	if !ok || r == nil {
		return core.Outcome{}, malformed("unit %s is a game-pair batch; the result is not a game-pair result", apierr.Q(unit))
	}
	jobID, idx, ok := parseUnit(unit)
	w.mu.Lock()
	t := w.tests[jobID]
	switch {
	case !ok || t == nil:
		w.mu.Unlock()
		return core.Outcome{}, unknownUnit(unit)
	case !t.running():
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded}, nil
	case idx >= t.batches:
		w.mu.Unlock()
		return core.Outcome{}, unknownUnit(unit)
	}
	_, pairs := t.pairsOf(idx)
	w.mu.Unlock()

	log := w.log.With(zap.String(logging.JobID, jobID), zap.String(logging.UnitID, unit), zap.String(logging.WorkerID, wk.ID),
		zap.String(logging.LeaseID, rc.Lease.ID))
	br, err := checkBatchResult(unit, pairs, r)
	if err != nil {
		log.Warn("batch result refused", zap.Error(err))
		return core.Outcome{}, err
	}

	// Decide under mu, write the store without it (commitMu keeps commits
	// and their decisions in order), then apply under mu.
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	if !t.running() {
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded}, nil
	}
	if t.stored[idx] {
		// Counted already (or its row is in the store): never added again.
		if h, held := t.open[idx]; held && rc.Live && h.worker == wk.ID {
			delete(t.open, idx)
		}
		w.mu.Unlock()
		log.Info("duplicate batch result; not counted")
		return core.Outcome{Verdict: core.Duplicate}, nil
	}
	now := w.cfg.Now()
	leasedAt := rc.Lease.Granted
	if h, held := t.open[idx]; leasedAt.IsZero() && held && h.worker == wk.ID {
		leasedAt = h.granted
	}
	b := &store.Batch{UnitID: unit, JobID: jobID, Idx: idx, WorkerID: wk.ID, Pairs: pairs, Penta: *br.res.Pentanomial,
		Wins: br.res.Wins, Draws: br.res.Draws, Losses: br.res.Losses, Incidents: encodeIncidents(br.incidents),
		LeasedAt: leasedAt, At: now, ElapsedMS: rc.Elapsed.Milliseconds()}
	// The new totals, SPRT and judgement on copies: memory changes after
	// the commit.
	total, penta := t.results, t.penta
	addCounts(&total, &penta, b)
	seq, jobChange, err := w.nextSPRT(t, total, now)
	if err != nil {
		w.mu.Unlock()
		return core.Outcome{}, err
	}
	if jobChange == nil && t.totalPairs > 0 && t.done+1 == t.batches {
		jobChange = &store.JobChange{State: store.StateDone, FinishedAt: now}
	}
	entry := windowEntry{games: 2 * pairs, bad: badGames(br.incidents)}
	events := incidentEvents(t, unit, wk.ID, r.GetIncidents(), now)
	tw := t.workers[wk.ID]
	excludedNow := false
	if _, reason := judge(windowOf(tw), entry, w.cfg.IncidentWindow, w.cfg.IncidentMaxRate); reason != "" && (tw == nil || !tw.excluded) {
		events = append(events, eventOf(t, unit, wk.ID, evExcluded, reason, now))
		excludedNow = true
	}
	seqState, err := seqJSON(seq)
	w.mu.Unlock()
	if err != nil {
		return core.Outcome{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "unit %s: %v", apierr.Q(unit), err)
	}

	if err := w.store.CommitBatch(ctx, b, br.pgns, seqState, jobChange, events); err != nil {
		log.Error("store commit failed", zap.Error(err))
		return core.Outcome{}, apierr.Store(err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	t.stored[idx] = true
	delete(t.open, idx)
	t.done++
	t.seq = seq
	t.pgns += int64(len(br.pgns))
	w.countBatch(t, b, br.incidents)
	tw = t.worker(wk.ID)
	tw.window, _ = judge(tw.window, entry, w.cfg.IncidentWindow, w.cfg.IncidentMaxRate)
	if excludedNow && !tw.excluded {
		w.exclude(t, wk.ID, events[len(events)-1].Detail)
	}
	if t.hist != nil {
		llr := 0.0
		if t.seq != nil {
			llr = t.seq.LLR
		}
		t.hist.add(pointOf(t.results, t.penta, llr))
	}
	w.noteActivity(wk.ID, now, int64(2*pairs), incidentCount(br.incidents))
	w.seen(wk)
	w.metrics.observeGames(br.games)
	fields := []zap.Field{zap.Int("pairs", pairs), zap.Int64("games", t.results.Games()), zap.Duration("elapsed", rc.Elapsed)}
	if t.seq != nil {
		fields = append(fields, zap.Float64("llr", t.seq.LLR), zap.String("sprt", string(t.seq.State)))
	}
	log.Info("batch accepted", fields...)
	if jobChange != nil {
		w.finish(t, jobChange)
		return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: true}, nil
	}
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true}, nil
}

func unknownUnit(unit string) error {
	return apierr.New(apierr.NotFound, apierr.ReasonUnknownUnit, "unknown unit %s", apierr.Q(unit))
}

func windowOf(tw *testWorker) []windowEntry {
	if tw == nil {
		return nil
	}
	return tw.window
}

// nextSPRT is t's SPRT after seeing total (a copy; nil without SPRT) and
// the job's final state when it decides. Caller holds mu.
func (w *Workload) nextSPRT(t *test, total sprt.Results, now time.Time) (*sprt.Sequential, *store.JobChange, error) {
	if t.seq == nil {
		return nil, nil, nil
	}
	cp := *t.seq
	if t.seq.Overshoot != nil {
		o := *t.seq.Overshoot
		cp.Overshoot = &o
	}
	st, err := cp.Update(total)
	if err != nil {
		// The counts passed every check, so this is the SPRT's failure, not
		// the worker's: nothing is stored.
		w.log.Error("SPRT update failed", zap.String(logging.JobID, t.rec.ID), zap.Error(err))
		return nil, nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "test %s: SPRT update: %v", t.rec.ID, err)
	}
	if st.State != sprt.Continue {
		return &cp, &store.JobChange{State: store.StateDone, FinishedAt: now}, nil
	}
	return &cp, nil, nil
}

// addCounts adds a batch's counts to a test's totals.
func addCounts(total *sprt.Results, penta *sprt.Pentanomial, b *store.Batch) {
	for i := range penta {
		penta[i] += b.Penta[i]
	}
	total.Wins += b.Wins
	total.Draws += b.Draws
	total.Losses += b.Losses
	p := *penta
	total.Pentanomial = &p
}

// countBatch adds a counted batch to the test's totals and to its worker's
// games and incidents. Caller holds mu (or is loading).
func (w *Workload) countBatch(t *test, b *store.Batch, inc map[string]int64) {
	addCounts(&t.results, &t.penta, b)
	tw := t.worker(b.WorkerID)
	tw.games += int64(2 * b.Pairs)
	for k, n := range inc {
		tw.incidents[k] += n
	}
}
