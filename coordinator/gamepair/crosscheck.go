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

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Cross-identity replay of fixed-node batches. ReplayBatch proves that a
// batch's games are games; it cannot prove that the engines played them:
// a worker can invent legal moves. Where both engines of a test are
// deterministic at a fixed node count (CrossCheckable), a game is a
// function of the batch (openings, seeds, engines, limits), so another
// identity playing the same batch must produce the same moves. Which
// batches are checked follows the trust of their identity (trust.go):
//
//   - every batch of an untrusted identity is held; a share
//     ReplayFraction of a trusted identity's batches, drawn by the
//     coordinator with crypto/rand when the first result arrives, is
//     held too. A held batch is not counted: it is parked
//     (Batches.Park), and its worker is answered accepted like any
//     other, so it cannot tell which of its batches are checked;
//   - the batch is leased again, the same unit with the same openings,
//     seeds and pair indexes, to a worker of another identity: a
//     trusted one when the held result is an untrusted identity's (two
//     newcomers agreeing prove nothing);
//   - results are compared move for move: each game's moves, result and
//     termination (not times, nor the comments that carry them). Two
//     identities that agree settle the batch: it is counted once, from
//     the result that completed the agreement, and an untrusted identity
//     confirmed by a trusted one earns one step of trust;
//   - a mismatch needs no third identity. An untrusted identity whose
//     batch a trusted identity's replay contradicts is found lying at
//     once: its identity is excluded from the test, stored as a liar,
//     every batch it counted in the test is purged and the test's state
//     recomputed without them (purge.go), and the trusted replay counts.
//     An untrusted replay that contradicts a trusted identity's held
//     result brands nobody (the newcomer has the less trust, and one
//     result it did not make is no proof against it): the batch is
//     played afresh. Two trusted identities that disagree stop the test
//     for an admin (pause): it is cancelled with the reason, nothing of
//     the batch counts, and an admin resumes it once the liar's
//     credential is revoked;
//   - an identity with maxHeldPerIdentity results held in a job gets no
//     fresh batch of it until replays catch up (memory, and no way to
//     outrun the check).
//
// Counting stays exact: a held batch counts once, only after two
// identities agreed on every move; a batch held when the test ends is
// never counted. What is held lives in memory only: a coordinator that
// restarts forgets it, and the batch, not stored, is played afresh (a
// result is never counted without the check it was selected for). The
// exclusions of identities from a job and the liars are stored
// (store/trust.go) and survive a restart. Batches of a trusted identity
// that were not selected count on its word: a trusted liar is caught at
// its first selected batch, after 1/ReplayFraction of its batches on
// average, and everything it counted in the test is then purged.

// Outcomes of arbiter_batch_crosschecks_total.
const (
	CrossHeld      = "held"      // a batch's first result, held for a replay
	CrossAgreed    = "agreed"    // two identities agreed on every move: counted
	CrossMismatch  = "mismatch"  // a replay's moves differ from a held result's
	CrossSettled   = "settled"   // a mismatch settled by trust: the trusted side counted, the other found lying
	CrossUndecided = "undecided" // a replay that settled nothing countable: the batch is played afresh
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
// result that completes its check (crossCheck), which is in hand then, so
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

// heldCount is the number of batches held now.
func (c *CrossCheck) heldCount() int {
	if c == nil {
		return 0
	}
	return len(c.held)
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
// no result of it, nobody replays it, and owner is trusted when every
// held result of it is an untrusted identity's), or false.
func (c *CrossCheck) forIdentity(owner string, trusted func(string) bool) (int, bool) {
	if c == nil || c.Distrusts(owner) {
		return 0, false
	}
	ownerTrusted := trusted(owner)
	best := -1
	for idx, h := range c.held {
		// The lowest index: replays go out in the order of play.
		if h.leasedTo != "" || h.has(owner) || (best >= 0 && idx > best) {
			continue
		}
		if !ownerTrusted && !slices.ContainsFunc(h.results, func(r *heldResult) bool { return trusted(r.owner) }) {
			continue
		}
		best = idx
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

// crossVerdict is what a result adds up to with the held one of its
// batch.
type crossVerdict struct {
	decided  bool // cand agrees, or wins a mismatch: it counts
	disputed bool // the results differ
	// confirmed is the untrusted identity a trusted one just confirmed
	// ("": none).
	confirmed string
	// liar is the identity found lying, with its worker and where its
	// games differ ("": none).
	liar, liarWorker, where string
	// pause is why the job stops: two trusted identities disagree.
	pause string
}

// judgeReplay compares cand, a replay, with prev, the held result of the same
// batch by another identity (trusted says who is trusted).
func judgeReplay(prev, cand *heldResult, trusted func(string) bool) crossVerdict {
	tp, tc := trusted(prev.owner), trusted(cand.owner)
	if slices.Equal(prev.games, cand.games) {
		v := crossVerdict{decided: true}
		switch {
		case tp && !tc:
			v.confirmed = cand.owner
		case tc && !tp:
			v.confirmed = prev.owner
		}
		return v
	}
	v := crossVerdict{disputed: true, where: firstDifference(prev.games, cand.games)}
	switch {
	case tp && tc:
		v.pause = fmt.Sprintf("paused: trusted identities %s and %s played different moves (%s); name the liar on the workers page (block, found lying: its results are purged), then resume",
			apierr.Q(prev.owner), apierr.Q(cand.owner), v.where)
	case tc:
		v.decided, v.liar, v.liarWorker = true, prev.owner, prev.worker
	}
	// An untrusted replay that contradicts a trusted identity's held
	// result judges nobody: a newcomer is never branded on the word of
	// one result it did not make (were the trusted side the liar, an
	// honest newcomer would pay). The batch is played afresh.
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
// that is held (held) or was just selected (held nil). When cand counts
// (it agrees with the held result, or a trusted cand contradicts an
// untrusted one) it changes nothing and returns done false: the caller
// counts cand's result, then calls crossApply. Otherwise cand is held, or
// the batch is dropped to be played afresh, and out is the caller's
// answer (done true); v says whether an identity was found lying or the
// job must stop. Caller holds CommitMu and Mu.
func (s *Set[J]) crossCheck(j J, idx int, held *heldBatch, cand *heldResult, log *zap.Logger) (v crossVerdict, out core.Outcome, done bool) {
	b := j.Base()
	if held != nil && held.leasedTo == cand.worker {
		held.leasedTo, held.leasedOwner = "", ""
	}
	if held != nil && held.has(cand.owner) {
		log.Info("a second result of a held batch from the same identity; not counted")
		return v, core.Outcome{Verdict: core.Duplicate}, true
	}
	if held == nil || len(held.results) == 0 {
		if b.Cross == nil {
			b.Cross = newCrossCheck()
		}
		if held == nil {
			held = &heldBatch{}
			b.Cross.held[idx] = held
			b.Batches.Park(idx)
			s.CrossChecks.inc(CrossHeld)
			log.Info("batch held for a replay by another identity")
		}
		held.results = []*heldResult{cand}
		if s.Host != nil {
			s.Host.WorkAvailable()
		}
		return v, core.Outcome{Verdict: core.Accepted, EndUnitLeases: true}, true
	}
	// One result at most is held: every mismatch is settled at once.
	v = judgeReplay(held.results[0], cand, s.Trust.Trusted)
	if v.disputed {
		s.CrossChecks.inc(CrossMismatch)
		log.Warn("replay of another identity differs", zap.String("where", v.where), zap.String("held", held.results[0].owner),
			zap.String("replay", cand.owner))
	}
	if v.decided {
		return v, out, false
	}
	// cand does not count: the batch is played afresh (or, paused, not at
	// all).
	delete(b.Cross.held, idx)
	b.Batches.Unpark(idx)
	b.Batches.Reopen(idx)
	s.CrossChecks.inc(CrossUndecided)
	if s.Host != nil {
		s.Host.WorkAvailable()
	}
	return v, core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}, true
}

// crossApply makes a settled batch's verdict the job's once the batch is
// counted: the batch is no longer held. Caller holds Mu.
func (s *Set[J]) crossApply(j J, idx int, v crossVerdict) {
	b := j.Base()
	if b.Cross != nil {
		delete(b.Cross.held, idx)
	}
	if !v.disputed {
		s.CrossChecks.inc(CrossAgreed)
	} else {
		s.CrossChecks.inc(CrossSettled)
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
	idx, ok := c.forIdentity(wk.Owner, s.Trust.Trusted)
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
