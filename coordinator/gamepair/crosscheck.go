package gamepair

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/logging"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Cross-identity replay of fixed-node batches. ReplayBatch proves that a
// batch's games are games; it cannot prove that the engines played them:
// a worker can invent legal moves. Where both engines of a test are
// deterministic at a fixed node count (CrossCheckable), a game is a
// function of the batch (openings, seeds, engines, limits), so another
// identity playing the same batch must produce the same moves. A share of
// batches (Settings.ReplayFraction), drawn by the coordinator with
// crypto/rand when the first result arrives, is checked that way, as
// perft units are verified:
//
//   - the first result of a selected batch is held, not counted: the
//     batch is parked (Batches.Park), and its worker is answered accepted
//     like any other, so it cannot tell which of its batches are checked;
//   - the batch is leased again, the same unit with the same openings,
//     seeds and pair indexes, to a worker of an identity that has no result
//     of it yet;
//   - results are compared move for move: each game's moves, result and
//     termination (not times, nor the comments that carry them). Two
//     identities that agree settle the batch: it is counted once, from
//     the result that completed the agreement (its PGNs, counts and
//     incidents, credited to its worker), as an unselected batch would
//     have been; a held result keeps only its moves;
//   - a mismatch waits for a third identity: a value backed by two
//     identities and by more than any other settles it, and every identity
//     that reported another value is excluded from the test: its workers
//     get no more batches of it, their results of it are discarded, its
//     results held in other batches are dropped (a batch left with none
//     is played afresh), and each of its workers that reported a losing
//     result is excluded with an event naming the first differing move;
//   - four results without a majority drop the batch's results: it is
//     played afresh;
//   - an identity with maxHeldPerIdentity results held in a job gets no
//     fresh batch of it until replays catch up (memory, and no way to
//     outrun the check).
//
// Counting stays exact: a selected batch counts once, only after two
// identities agreed on every move; a batch held when the test ends is
// never counted. What is held lives in memory only: a coordinator that
// restarts forgets it, and the batch, not stored, is played afresh (a
// result is never counted without the check it was selected for). The
// exclusion of an identity is in memory too (its excluded workers stay
// excluded after a restart, by their stored events). Batches that were
// not selected count on the word of their worker: a lying identity is
// caught at its first selected batch, after 1/ReplayFraction of its
// batches on average; a test that must count no unchecked batch runs
// with ReplayFraction 1.

// maxHeldResults bounds the results one held batch collects: four
// without a majority (three different values and a fourth) drop them all.
const maxHeldResults = 4

// Outcomes of arbiter_batch_crosschecks_total.
const (
	CrossHeld      = "held"      // a selected batch's first result, held for a replay
	CrossAgreed    = "agreed"    // two identities agreed on every move: counted
	CrossMismatch  = "mismatch"  // a replay's moves differ from a held result's
	CrossSettled   = "settled"   // a majority of identities settled a mismatch: counted, the others excluded
	CrossUndecided = "undecided" // maxHeldResults without a majority: played afresh
	CrossDropped   = "dropped"   // a held result of an identity excluded from the test, dropped
)

// CrossOutcomes are every value of the outcome label, exported at 0 from
// start-up.
var CrossOutcomes = []string{CrossHeld, CrossAgreed, CrossMismatch, CrossSettled, CrossUndecided, CrossDropped}

// CrossCheckCounter is arbiter_batch_crosschecks_total.
type CrossCheckCounter struct{ vec *prometheus.CounterVec }

// NewCrossCheckCounter returns the counter with every outcome at 0.
func NewCrossCheckCounter() *CrossCheckCounter {
	c := &CrossCheckCounter{vec: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arbiter_batch_crosschecks_total",
		Help: "Game-pair batches of fixed-node tests checked by a replay of another identity, by outcome (held, agreed, mismatch, settled, undecided, dropped)."},
		[]string{"outcome"})}
	for _, o := range CrossOutcomes {
		c.vec.WithLabelValues(o)
	}
	return c
}

// Vec is the counter itself: what to register, and what tests read.
func (c *CrossCheckCounter) Vec() *prometheus.CounterVec { return c.vec }

func (c *CrossCheckCounter) inc(outcome string) {
	if c != nil {
		c.vec.WithLabelValues(outcome).Inc()
	}
}

// Selected draws whether a batch whose first result just arrived is
// checked: true with probability fraction, from crypto/rand, so that no
// worker can tell which of its batches will be.
func Selected(fraction float64) bool {
	switch {
	case fraction <= 0:
		return false
	case fraction >= 1:
		return true
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return true // no randomness: check rather than trust
	}
	return float64(binary.LittleEndian.Uint64(b[:])>>11)/(1<<53) < fraction
}

// heldResult is what a held batch keeps of one identity's result: whose
// it is and its games' moves. Not the PGNs: the batch counts from the
// result that completes its check (settleHeld), which is in hand then, so
// a held result costs its moves, not its comments.
type heldResult struct {
	owner, worker string
	games         []string // BatchMoves of the result
}

// heldBatch is a batch whose results wait for agreement.
type heldBatch struct {
	results []*heldResult
	// The replay lease out now: the worker, its identity and when ("":
	// none).
	leasedTo, leasedOwner string
	leasedAt              time.Time
}

func (h *heldBatch) has(owner string) bool {
	return slices.ContainsFunc(h.results, func(r *heldResult) bool { return r.owner == owner })
}

// CrossCheck is what a running job keeps of its checked batches: those
// held, and the identities excluded from it. The Set's Mu guards it.
type CrossCheck struct {
	held       map[int]*heldBatch
	distrusted map[string]string // identity → why it was excluded
}

func newCrossCheck() *CrossCheck {
	return &CrossCheck{held: map[int]*heldBatch{}, distrusted: map[string]string{}}
}

// Distrusts reports whether identity owner was excluded from the job.
func (c *CrossCheck) Distrusts(owner string) bool {
	if c == nil {
		return false
	}
	_, ok := c.distrusted[owner]
	return ok
}

// leased is the number of replay leases out now.
func (c *CrossCheck) leased() int {
	if c == nil {
		return 0
	}
	n := 0
	for _, h := range c.held {
		if h.leasedTo != "" {
			n++
		}
	}
	return n
}

// forIdentity is a held batch that identity owner may replay now (it has
// no result of it and nobody replays it), or false.
func (c *CrossCheck) forIdentity(owner string) (int, bool) {
	if c == nil || c.Distrusts(owner) {
		return 0, false
	}
	best := -1
	for idx, h := range c.held {
		// The lowest index: replays go out in the order of play.
		if h.leasedTo == "" && !h.has(owner) && (best < 0 || idx < best) {
			best = idx
		}
	}
	return best, best >= 0
}

// maxHeldPerIdentity bounds the held results of one identity in a job:
// past it, the identity gets no fresh batches of the job (replays of
// others' batches still) until replays by other identities catch up. It
// bounds the coordinator's memory (a held result is its games' moves) and
// keeps a fast identity from outrunning the check: its batches wait,
// they are never let through unchecked.
const maxHeldPerIdentity = 256

// heldBy is the number of held results of identity owner.
func (c *CrossCheck) heldBy(owner string) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, h := range c.held {
		if h.has(owner) {
			n++
		}
	}
	return n
}

// crossVerdict is what the results of a held batch add up to.
type crossVerdict struct {
	decided  bool
	winner   int      // index of the result to count when decided
	losers   []string // identities whose results differ from the winner's
	disputed bool     // results differ
	failed   bool     // maxHeldResults without a majority
}

// settleHeld judges the results of one batch, each from a different
// identity: all agreeing, two settle it; disagreeing, a value backed by
// two or more identities and by more than any other settles it, and the
// rest lose. Otherwise the batch waits for another identity, until
// maxHeldResults.
func settleHeld(results []*heldResult) crossVerdict {
	type group struct {
		first int
		n     int
	}
	var groups []group
	of := make([]int, len(results)) // group of each result
	for i, r := range results {
		g := slices.IndexFunc(groups, func(g group) bool { return slices.Equal(results[g.first].games, r.games) })
		if g < 0 {
			g = len(groups)
			groups = append(groups, group{first: i})
		}
		groups[g].n++
		of[i] = g
	}
	v := crossVerdict{disputed: len(groups) > 1}
	best := 0
	for i, g := range groups {
		if g.n > groups[best].n {
			best = i
		}
	}
	for i, g := range groups {
		if i != best && g.n >= groups[best].n {
			best = -1 // a tie
			break
		}
	}
	if best >= 0 && groups[best].n >= 2 {
		v.decided, v.winner = true, groups[best].first
		for i, r := range results {
			if of[i] != best {
				v.losers = append(v.losers, r.owner)
			}
		}
		return v
	}
	v.failed = len(results) >= maxHeldResults
	return v
}

// firstDifference names where games b differ from games a ("game 3, ply
// 17: Nf3 against Nc3"), for the exclusion's reason.
func firstDifference(a, b []string) string {
	for k := range min(len(a), len(b)) {
		if a[k] == b[k] {
			continue
		}
		// Each is its moves, then its result and termination.
		x, y := strings.Fields(a[k]), strings.Fields(b[k])
		for p := range min(len(x), len(y)) - 2 {
			if x[p] != y[p] {
				return fmt.Sprintf("game %d, ply %d: %s against %s", k, p+1, apierr.Q(y[p]), apierr.Q(x[p]))
			}
		}
		end := func(f []string) string { return strings.Join(f[max(len(f)-2, 0):], " ") }
		return fmt.Sprintf("game %d: %d plies ending %s against %d ending %s", k, len(y)-2, end(y), len(x)-2, end(x))
	}
	return fmt.Sprintf("%d games against %d", len(b), len(a))
}

// BatchMoves is what a replay at fixed nodes must reproduce of a batch
// result (already checked by ReplayBatch): for each game, its SAN moves,
// its result token and its termination, space-separated. Clock and score
// comments are left out.
func BatchMoves(r *arbiterv1.GamePairBatchResult) ([]string, error) {
	terms := make([]arbiterv1.GameTermination, len(r.GetPgns()))
	for _, o := range r.GetGames() {
		if k := o.GetGameIndex(); k < uint32(len(terms)) {
			terms[k] = o.GetTermination()
		}
	}
	out := make([]string, len(r.GetPgns()))
	var g gameText
	var sb strings.Builder
	for k, pgn := range r.GetPgns() {
		if err := splitPGN(pgn, &g); err != nil {
			return nil, InvalidGame("game %d: %v", k, err)
		}
		sb.Reset()
		for _, m := range g.moves {
			sb.WriteString(m.san)
			sb.WriteByte(' ')
		}
		sb.WriteString(g.token)
		sb.WriteByte(' ')
		sb.WriteString(termWord(terms[k]))
		out[k] = sb.String()
	}
	return out, nil
}

// heldOf is the held batch idx, or nil.
func (c *CrossCheck) heldOf(idx int) *heldBatch {
	if c == nil {
		return nil
	}
	return c.held[idx]
}

// crossCheck adds cand, the moves of a checked result of batch idx of j
// that is held (held) or was just selected (held nil), to the batch's
// results. When they settle the batch, cand is on the winning side (held
// results all differ from one another, so only cand can make a majority):
// it changes nothing and returns done false, and the caller counts cand's
// result, then calls crossApply. Otherwise cand is held (or the batch
// dropped) and out is the caller's answer (done true). Caller holds
// CommitMu and Mu.
func (s *Set[J]) crossCheck(j J, idx int, held *heldBatch, cand *heldResult, log *zap.Logger) (v crossVerdict, out core.Outcome, done bool) {
	b := j.Base()
	if held != nil && held.leasedTo == cand.worker {
		held.leasedTo, held.leasedOwner = "", ""
	}
	if held != nil && held.has(cand.owner) {
		log.Info("a second result of a held batch from the same identity; not counted")
		return v, core.Outcome{Verdict: core.Duplicate}, true
	}
	var before []*heldResult
	if held != nil {
		before = held.results
	}
	results := append(slices.Clone(before), cand)
	v = settleHeld(results)
	if v.disputed && (len(before) == 0 || !settleHeld(before).disputed) {
		s.CrossChecks.inc(CrossMismatch)
		log.Warn("replay of another identity differs", zap.String("where", firstDifference(before[0].games, cand.games)))
	}
	if v.decided && slices.Equal(results[v.winner].games, cand.games) {
		return v, out, false
	}
	if v.decided || v.failed {
		// No majority with cand (v.decided here would be a majority among
		// held results, which settleHeld never leaves held).
		delete(b.Cross.held, idx)
		b.Batches.Unpark(idx)
		b.Batches.Reopen(idx)
		s.CrossChecks.inc(CrossUndecided)
		log.Warn("held batch has no majority after its replays; played afresh", zap.Int("results", len(results)))
		if s.Host != nil {
			s.Host.WorkAvailable()
		}
		return crossVerdict{}, core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}, true
	}
	if held == nil {
		if b.Cross == nil {
			b.Cross = newCrossCheck()
		}
		held = &heldBatch{}
		b.Cross.held[idx] = held
		b.Batches.Park(idx)
		s.CrossChecks.inc(CrossHeld)
		log.Info("batch held for a replay by another identity")
	}
	held.results = results
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	return v, core.Outcome{Verdict: core.Accepted, EndUnitLeases: true}, true
}

// crossLoser is a worker whose result a settled batch contradicted.
type crossLoser struct {
	worker, owner, reason string
	where                 string // the first move that differs
}

// crossLosers are the workers of the results v rejects among the results
// of batch idx (held's and cand), with the reason of their exclusion.
// Caller holds Mu.
func (s *Set[J]) crossLosers(j J, idx int, held *heldBatch, cand *heldResult, v crossVerdict) []crossLoser {
	if !v.decided || len(v.losers) == 0 {
		return nil
	}
	var results []*heldResult
	if held != nil {
		results = held.results
	}
	results = append(slices.Clone(results), cand)
	agree := 0
	for _, r := range results {
		if slices.Equal(r.games, cand.games) {
			agree++
		}
	}
	var out []crossLoser
	for _, r := range results {
		if slices.Contains(v.losers, r.owner) {
			where := fmt.Sprintf("batch %d, %s", idx, firstDifference(cand.games, r.games))
			out = append(out, crossLoser{worker: r.worker, owner: r.owner, where: where, reason: fmt.Sprintf(
				"its games of batch %d differ from those %d other identities played at the same nodes and seeds (%s): its identity is excluded from the %s",
				idx, agree, firstDifference(cand.games, r.games), s.What)})
		}
	}
	return out
}

// crossApply makes a settled batch's verdict the job's once the batch is
// counted: the batch is no longer held, and each losing identity is
// excluded from the job (its held results elsewhere dropped). Caller
// holds Mu.
func (s *Set[J]) crossApply(j J, idx int, v crossVerdict, losers []crossLoser) {
	b := j.Base()
	if b.Cross != nil {
		delete(b.Cross.held, idx)
	}
	if !v.disputed {
		s.CrossChecks.inc(CrossAgreed)
	} else {
		s.CrossChecks.inc(CrossSettled)
	}
	for _, l := range losers {
		if b.Cross == nil {
			b.Cross = newCrossCheck()
		}
		if _, seen := b.Cross.distrusted[l.owner]; !seen {
			b.Cross.distrusted[l.owner] = l.reason
			s.Logger.Warn("identity excluded from "+s.What+": a replay by other identities contradicts its games",
				zap.String(logging.JobID, b.Rec.ID), zap.String("identity", l.owner), zap.String(logging.WorkerID, l.worker),
				zap.String("reason", l.reason))
			s.dropHeldOf(b, l.owner)
		}
		if b.Workers.Exclude(l.worker, l.reason) {
			s.logExcluded(b, l.worker, l.reason)
		}
		s.Activity.Note(l.worker, s.Now(), 0, 1)
	}
	if len(losers) > 0 && s.Host != nil {
		s.Host.WorkAvailable()
	}
}

// dropHeldOf drops the held results of identity owner in b: a batch left
// with none is played afresh. Caller holds Mu.
func (s *Set[J]) dropHeldOf(b *Job, owner string) {
	for idx, h := range b.Cross.held {
		if h.leasedOwner == owner {
			// Its replay counts for nothing now: let another identity's.
			h.leasedTo, h.leasedOwner = "", ""
		}
		i := slices.IndexFunc(h.results, func(r *heldResult) bool { return r.owner == owner })
		if i < 0 {
			continue
		}
		h.results = slices.Delete(h.results, i, i+1)
		s.CrossChecks.inc(CrossDropped)
		if len(h.results) == 0 {
			delete(b.Cross.held, idx)
			b.Batches.Unpark(idx)
			b.Batches.Reopen(idx)
		}
	}
}

// takeReplay leases a held batch of j that wk's identity may replay, or
// false. Caller holds Mu.
func (s *Set[J]) takeReplay(j J, wk *core.Worker, now time.Time) (int, bool) {
	c := j.Base().Cross
	idx, ok := c.forIdentity(wk.Owner)
	if !ok {
		return 0, false
	}
	h := c.held[idx]
	h.leasedTo, h.leasedOwner, h.leasedAt = wk.ID, wk.Owner, now
	return idx, true
}

// endReplay ends the replay lease of worker on batch idx of j, if it
// holds one, and reports whether it did. Caller holds Mu.
func (s *Set[J]) endReplay(j J, idx int, worker string) bool {
	h := j.Base().Cross.heldOf(idx)
	if h == nil || h.leasedTo != worker {
		return false
	}
	h.leasedTo, h.leasedOwner = "", ""
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	return true
}
