// Package perftsplit turns one perft job into work units.
//
// The root is expanded to a split ply; the positions reached there are merged
// by their full identity (the FEN without move counters: placement, side to
// move, castling rights and en-passant square — not a hash, so two positions
// are merged only when they really are the same) and each unique position
// keeps its multiplicity per root move. perft(root, depth) is then
//
//	sum over unique positions P:  mult(P) × perft(P, depth − splitPly)
//
// and divide is the same sum restricted to one root move. Units are batches
// of consecutive unique positions sized to a target amount of work.
package perftsplit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// MaxSplitPly bounds the expansion the coordinator does in memory
// (ply 6 of the start position is 119 million leaves, 9.4 million unique).
const MaxSplitPly = 6

// MaxDepth is the deepest perft the coordinator accepts.
const MaxDepth = 20

// RootMult says a position occurs N times below root move Root.
type RootMult struct {
	Root int
	N    uint64
}

// Position is a unique position at the split ply.
type Position struct {
	FEN  string     // full FEN (X-FEN in Chess960), counters included
	Mult []RootMult // by ascending root index
	// Est is the estimated number of leaf nodes below the position.
	Est float64
}

// Plan is a split perft job.
type Plan struct {
	Depth     int
	SplitPly  int
	Remaining int      // depth − SplitPly, the depth each unit computes
	RootMoves []string // UCI, in generation order; divide is indexed by these
	Leaves    uint64   // positions reached at the split ply, with repeats
	Positions []Position
}

// ChooseSplitPly picks a split ply from the depth: deep enough to give many
// units, shallow enough that the coordinator's expansion stays cheap, leaving
// each unit about five plies (where the workers' hash tables pay off).
func ChooseSplitPly(depth int) int {
	switch {
	case depth <= 0:
		return 0
	case depth <= 2:
		return 1
	case depth <= 4:
		return 1
	case depth <= 6:
		return 2
	default:
		return min(depth-5, MaxSplitPly)
	}
}

// estimateLeaves returns the number of positions at ply below root: exact
// while the counts stay under limit, then extrapolated by the last
// branching factor (so that the estimate itself never walks far past the
// limit).
func estimateLeaves(root engine.Position, ply int, limit uint64) float64 {
	prev := 1.0
	for k := 1; k <= ply; k++ {
		n := float64(engine.Perft(&root, k))
		if k == ply || n > float64(limit) {
			return n * math.Pow(n/prev, float64(ply-k))
		}
		if n*n/prev > 4*float64(limit) {
			// The next ply would be expensive to count: extrapolate.
			return n * math.Pow(n/prev, float64(ply-k))
		}
		prev = max(n, 1)
	}
	return prev
}

// ChooseSplitPlyFor is ChooseSplitPly lowered until the split fits lim: it
// counts the leaves of root ply by ply (exact, cheap at small plies) and
// stops before a ply whose count, extrapolated from the last branching
// factor, would pass lim.MaxLeaves.
func ChooseSplitPlyFor(root engine.Position, depth int, lim Limits) int {
	want := ChooseSplitPly(depth)
	if want <= 1 || lim.MaxLeaves == 0 {
		return want
	}
	prev := uint64(1)
	for ply := 1; ply <= want; ply++ {
		n := engine.Perft(&root, ply)
		if n > lim.MaxLeaves {
			return max(ply-1, 1)
		}
		if ply < want && prev > 0 && float64(n)*float64(n)/float64(prev) > float64(lim.MaxLeaves) {
			return ply
		}
		prev = n
	}
	return want
}

// ChooseSplitPlyWorkers is ChooseSplitPlyFor for a farm of workers
// workers: the shallowest ply with at least 32 leaves per worker (and at
// least 64), so that units are as deep as the farm allows. A deep unit
// keeps more of its transpositions in one worker's table, and the
// coordinator walks and stores fewer positions; the units of a slice
// (PlanSlices) share their plies above the key ply in the table of the
// worker that computes the slice, so the split ply costs the workers
// nothing. It is never deeper than ChooseSplitPlyFor, nor so shallow that
// a unit computes more than maxUnitDepth plies.
func ChooseSplitPlyWorkers(root engine.Position, depth, workers, maxUnitDepth int, lim Limits) int {
	most := ChooseSplitPlyFor(root, depth, lim)
	want := uint64(max(64, 32*workers))
	for ply := max(1, depth-maxUnitDepth); ply < most; ply++ {
		if engine.Perft(&root, ply) >= want {
			return ply
		}
	}
	return most
}

// KeyDepth is the depth left below the key positions of a sliced unit
// (engine.PerftSlice): three plies above the leaves, so that every subtree
// a table shares (depth 3 and 2) lies in one slice.
const KeyDepth = 3

// SlicePly returns the key ply below a split position of a unit of depth
// remaining, or 0 when the unit is too shallow to slice.
func SlicePly(remaining int) int {
	if remaining <= KeyDepth {
		return 0
	}
	return remaining - KeyDepth
}

// PositionKey is the identity of a position without move counters.
func PositionKey(p *engine.Position) string {
	f := p.FEN()
	for i := 0; i < 2; i++ {
		if j := strings.LastIndexByte(f, ' '); j >= 0 {
			f = f[:j]
		}
	}
	return f
}

// Limits bound what one split may cost the coordinator: the leaves walked
// (time) and the unique positions kept (memory, about 200 bytes each).
type Limits struct {
	MaxLeaves    uint64
	MaxPositions int
}

// DefaultLimits keep one split under about ten seconds of walking (a leaf
// costs about a microsecond: it is keyed by its FEN) and the coordinator's
// memory for it under some 400 MB while it runs (a plan holds about 180
// bytes per unique position, measured; the walk's index and the job's
// copy for the store about as much again). The start position splits at
// ply 4 (72,078 unique positions), not at ply 5 (822,518); Kiwipete at
// ply 3, not at ply 4 (1.37 million). Farms that need deeper splits raise
// the limit (the coordinator's --perft-max-split-positions).
var DefaultLimits = Limits{MaxLeaves: 10_000_000, MaxPositions: 500_000}

// EstimateNodes estimates the leaves of perft(depth) from root: exact
// counts of the first plies while they stay cheap (under a million), then
// extrapolated by the last ply's branching factor. It is for refusing
// work that cannot finish, not for reporting; it runs low at depth (the
// branching factor grows with it: from the start position it says
// 1.2×10^20 for perft(15), whose count is 2.0×10^21).
func EstimateNodes(root engine.Position, depth int) float64 {
	if depth <= 0 {
		return 1
	}
	return estimateLeaves(root, depth, 1_000_000)
}

// ErrTooLarge marks a split over its limits; ErrTooManyPositions (which
// is also ErrTooLarge) one over Limits.MaxPositions.
var (
	ErrTooLarge         = errors.New("split too large")
	ErrTooManyPositions = fmt.Errorf("%w: too many unique positions", ErrTooLarge)
)

// Split expands root to splitPly with the default limits.
func Split(root engine.Position, depth, splitPly int) (*Plan, error) {
	return SplitLimited(context.Background(), root, depth, splitPly, DefaultLimits)
}

// SplitLimited expands root to splitPly. depth must be ≥ 1 and 1 ≤ splitPly
// ≤ depth. It stops with ErrTooLarge (naming the limit and how far it got)
// as soon as the walk passes a limit, and with ctx's error when ctx ends, so
// no request can make the coordinator walk or keep without bound.
func SplitLimited(ctx context.Context, root engine.Position, depth, splitPly int, lim Limits) (*Plan, error) {
	if depth < 1 || depth > MaxDepth {
		return nil, fmt.Errorf("depth %d out of range 1..%d", depth, MaxDepth)
	}
	if splitPly < 1 || splitPly > depth || splitPly > MaxSplitPly {
		return nil, fmt.Errorf("split ply %d out of range 1..%d", splitPly, min(depth, MaxSplitPly))
	}
	if lim.MaxLeaves > 0 {
		if est := estimateLeaves(root, splitPly, lim.MaxLeaves); est > float64(lim.MaxLeaves) {
			return nil, fmt.Errorf("%w: about %.3g positions at ply %d (limit %d); choose a smaller split ply",
				ErrTooLarge, est, splitPly, lim.MaxLeaves)
		}
	}
	plan := &Plan{Depth: depth, SplitPly: splitPly, Remaining: depth - splitPly}
	w := walk{plan: plan, index: make(map[string]int), ctx: ctx, lim: lim}
	var ml engine.MoveList
	root.GenerateMoves(&ml)
	moves := append([]engine.Move(nil), ml.Slice()...)
	for i, m := range moves {
		plan.RootMoves = append(plan.RootMoves, root.UCIMove(m))
		child := root
		child.MakeMove(m)
		if err := w.expand(&child, 1, i); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

type walk struct {
	plan  *Plan
	index map[string]int
	ctx   context.Context
	lim   Limits
}

func (w *walk) expand(p *engine.Position, ply, rootIdx int) error {
	plan := w.plan
	if ply == plan.SplitPly {
		plan.Leaves++
		if w.lim.MaxLeaves > 0 && plan.Leaves > w.lim.MaxLeaves {
			return fmt.Errorf("%w: more than %d positions at ply %d (limit %d); choose a smaller split ply",
				ErrTooLarge, w.lim.MaxLeaves, plan.SplitPly, w.lim.MaxLeaves)
		}
		if plan.Leaves%4096 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		key := PositionKey(p)
		i, ok := w.index[key]
		if !ok {
			if w.lim.MaxPositions > 0 && len(plan.Positions) >= w.lim.MaxPositions {
				return fmt.Errorf("%w: more than %d at ply %d (limit %d) after %d leaves; choose a smaller split ply",
					ErrTooManyPositions, w.lim.MaxPositions, plan.SplitPly, w.lim.MaxPositions, plan.Leaves)
			}
			i = len(plan.Positions)
			w.index[key] = i
			plan.Positions = append(plan.Positions, Position{FEN: p.FEN(), Est: estimate(p, plan.Remaining)})
		}
		pos := &plan.Positions[i]
		if n := len(pos.Mult); n > 0 && pos.Mult[n-1].Root == rootIdx {
			pos.Mult[n-1].N++
		} else {
			pos.Mult = append(pos.Mult, RootMult{Root: rootIdx, N: 1})
		}
		return nil
	}
	var ml engine.MoveList
	p.GenerateMoves(&ml)
	// A position without moves before the split ply (mate or stalemate)
	// has no leaves at any greater depth: it contributes nothing.
	for _, m := range ml.Slice() {
		child := *p
		child.MakeMove(m)
		if err := w.expand(&child, ply+1, rootIdx); err != nil {
			return err
		}
	}
	return nil
}

// estimate guesses the leaf count below p at the given depth from its
// number of legal moves and a typical branching factor. It only weighs
// positions against each other when batching.
func estimate(p *engine.Position, depth int) float64 {
	if depth == 0 {
		return 1
	}
	var ml engine.MoveList
	p.GenerateMoves(&ml)
	return math.Max(1, float64(ml.N)) * math.Pow(30, float64(depth-1))
}

// Range is a unit: positions [First, End) of the plan.
type Range struct{ First, End int }

// Batch groups consecutive positions into units of about targetNodes
// estimated leaves each, with at least minUnits units (when there are that
// many positions) and at most maxPositions positions per unit.
func (plan *Plan) Batch(targetNodes float64, minUnits, maxPositions int) []Range {
	n := len(plan.Positions)
	if n == 0 {
		return nil
	}
	var total float64
	for _, p := range plan.Positions {
		total += p.Est
	}
	if minUnits > 0 && total/float64(minUnits) < targetNodes {
		targetNodes = total / float64(minUnits)
	}
	if maxPositions < 1 {
		maxPositions = 1
	}
	var out []Range
	first, acc := 0, 0.0
	for i, p := range plan.Positions {
		acc += p.Est
		if acc >= targetNodes || i+1-first >= maxPositions || i == n-1 {
			out = append(out, Range{First: first, End: i + 1})
			first, acc = i+1, 0
		}
	}
	return out
}

// ErrImpossible marks a count that cannot be right for its position.
var ErrImpossible = errors.New("impossible count")

// Check tells whether count can be perft(p, depth): exact for depths 0, 1
// and 2, and for deeper counts zero exactly when no line of that length
// exists, and no more than 218^depth. It is a plausibility check against
// malformed or garbage results, not a recomputation.
func Check(p *engine.Position, depth int, count uint64) error {
	switch depth {
	case 0:
		if count != 1 {
			return fmt.Errorf("%w: perft 0 is 1, got %d", ErrImpossible, count)
		}
		return nil
	case 1:
		var ml engine.MoveList
		p.GenerateMoves(&ml)
		if count != uint64(ml.N) {
			return fmt.Errorf("%w: depth 1 count must equal the %d legal moves, got %d", ErrImpossible, ml.N, count)
		}
		return nil
	case 2:
		var ml engine.MoveList
		p.GenerateMoves(&ml)
		var sum uint64
		for _, m := range ml.Slice() {
			c := *p
			c.MakeMove(m)
			var cl engine.MoveList
			c.GenerateMoves(&cl)
			sum += uint64(cl.N)
		}
		if count != sum {
			return fmt.Errorf("%w: depth 2 count is %d, got %d", ErrImpossible, sum, count)
		}
		return nil
	}
	if float64(count) > math.Pow(218, float64(depth)) {
		return fmt.Errorf("%w: %d exceeds 218^%d", ErrImpossible, count, depth)
	}
	has := hasLine(p, depth)
	if has && count == 0 {
		return fmt.Errorf("%w: count 0 but the position has lines of depth %d", ErrImpossible, depth)
	}
	if !has && count != 0 {
		return fmt.Errorf("%w: no line of depth %d exists, got %d", ErrImpossible, depth, count)
	}
	return nil
}

// hasLine reports whether some sequence of depth legal moves exists.
func hasLine(p *engine.Position, depth int) bool {
	if depth == 0 {
		return true
	}
	var ml engine.MoveList
	p.GenerateMoves(&ml)
	for _, m := range ml.Slice() {
		c := *p
		c.MakeMove(m)
		if hasLine(&c, depth-1) {
			return true
		}
	}
	return false
}

// CheckCount is Check for an exact 128-bit count.
func CheckCount(p *engine.Position, depth int, count engine.Count) error {
	if count.IsUint64() {
		return Check(p, depth, count.Lo)
	}
	if count.Float() > math.Pow(218, float64(depth)) {
		return fmt.Errorf("%w: %s exceeds 218^%d", ErrImpossible, count, depth)
	}
	if !hasLine(p, depth) {
		return fmt.Errorf("%w: no line of depth %d exists, got %s", ErrImpossible, depth, count)
	}
	return nil
}

// CheckSliceCount is CheckCount for one slice of a position's tree
// (engine.PerftSlice): a slice may be empty, so only the bound and "no line
// of that length, no leaves" are checked.
func CheckSliceCount(p *engine.Position, depth int, count engine.Count) error {
	if count.Float() > math.Pow(218, float64(depth)) {
		return fmt.Errorf("%w: %s exceeds 218^%d", ErrImpossible, count, depth)
	}
	if count != (engine.Count{}) && !hasLine(p, depth) {
		return fmt.Errorf("%w: no line of depth %d exists, got %s", ErrImpossible, depth, count)
	}
	return nil
}

// CheckStats tells whether per-position statistics (engine.PerftStatsCount
// order, the node count first and already checked) can be right: no
// statistic exceeds the leaves, en passant captures are captures, and
// discovered, double checks and mates are checks.
func CheckStats(s []engine.Count) error {
	if len(s) != engine.NumPerftStats {
		return fmt.Errorf("%w: %d statistics, want %d", ErrImpossible, len(s), engine.NumPerftStats)
	}
	le := func(a, b engine.Count) bool { return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo <= b.Lo }
	nodes := s[engine.PerftStatNodes]
	for i := 1; i < len(s); i++ {
		if !le(s[i], nodes) {
			return fmt.Errorf("%w: %s %s exceeds the %s leaves", ErrImpossible, engine.PerftStatName(i), s[i], nodes)
		}
	}
	checks := s[engine.PerftStatChecks]
	switch {
	case !le(s[engine.PerftStatEnPassant], s[engine.PerftStatCaptures]):
		return fmt.Errorf("%w: more en passant captures (%s) than captures (%s)", ErrImpossible, s[engine.PerftStatEnPassant], s[engine.PerftStatCaptures])
	case !le(s[engine.PerftStatDiscoveryChecks].AddCount(s[engine.PerftStatDoubleChecks]), checks):
		return fmt.Errorf("%w: more discovered and double checks than checks (%s)", ErrImpossible, checks)
	case !le(s[engine.PerftStatCheckmates], checks):
		return fmt.Errorf("%w: more mates (%s) than checks (%s)", ErrImpossible, s[engine.PerftStatCheckmates], checks)
	}
	return nil
}
