package search

import (
	"math"
	"sync/atomic"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/eval"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// Score bounds. Mate in n plies from the root scores MateScore-n; anything
// beyond ±MateBound is a mate score, and static evaluations stay inside
// ±eval.MaxEval.
const (
	MaxPly    = 128
	Infinity  = 32001
	MateScore = 32000
	MateBound = MateScore - 2*MaxPly
)

// Evaluator is what the search needs from an evaluation: a score from the
// side to move's point of view, within ±eval.MaxEval, allocating nothing.
type Evaluator interface {
	Evaluate(p *engine.Position) int
}

var _ Evaluator = (*eval.Evaluator)(nil)

// worker is one search thread. Everything it writes during a search is its
// own (the TT is the only shared mutable state, and it is lock-free), so a
// node allocates nothing and takes no lock.
type worker struct {
	e      *Engine
	id     int
	isMain bool

	nodes    int64
	pub      atomic.Int64 // nodes, published every checkEvery nodes for the main thread
	tbHits   atomic.Int64 // tablebase probes with a result (read by makeInfo while searching)
	seldepth int

	// keys[0:rootIdx] are the game's positions before the root; keys[rootIdx+ply]
	// is the position at ply in the current line (repetition detection).
	keys    []uint64
	rootIdx int

	// stack[ply] holds the position at ply (copy-make). Children live here
	// rather than in the recursion's frames: taking a frame variable's
	// address for the recursive call makes the compiler heap-allocate it.
	stack     [MaxPly + 1]engine.Position
	killers   [MaxPly + 1][2]engine.Move
	history   [2][64][64]int32
	evalStack [MaxPly + 2]int
	pv        [MaxPly + 1][MaxPly + 1]engine.Move
	pvLen     [MaxPly + 1]int

	// With UseNNUE, net is the engine's net and acc[ply] the accumulator of
	// stack[ply], valid while accOK[ply]. Making a move into stack[ply+1]
	// clears accOK[ply+1]; the evaluation brings the accumulators up to date
	// lazily from the nearest valid ancestor (nodes cut off before they
	// evaluate cost no update), and going back up the line costs nothing
	// (copy-make keeps the parent's accumulator).
	net   *nnue.Net
	acc   [MaxPly + 1]nnue.Accumulator
	accOK [MaxPly + 1]bool

	rootDepth int
	rootBest  engine.Move // best root move found in the current iteration
	rootScore int
	done      Result // the last completed iteration (main thread)
}

// checkEvery is the mask of nodes between clock checks: 256 nodes is well
// under a millisecond at full speed, and still only a few milliseconds when
// a loaded machine gives the thread a small share of a core.
const checkEvery = 255

// stopped reports whether the search must unwind: when it is told to stop,
// except in the first iteration, which runs to its end so that there is
// always a searched move, unless a node limit is passed by far
// (depth1NodeCap) and one root move has a score. Depth 1 used to run to
// its end whatever the limit, and its quiescence search alone can take
// thousands of nodes in a position full of captures: `go nodes 500`
// searched 4,799 (datagen's node check refused the engine for it). Cut
// at the limit itself, a tiny limit (nodes=300) would often play the
// first move in static order, blind to the evaluation.
func (w *worker) stopped() bool {
	if !w.e.stop.Load() {
		return false
	}
	if w.rootDepth > 1 {
		return true
	}
	n := w.e.tm.nodeStop
	return n > 0 && w.rootBest != engine.NullMove && w.nodes >= depth1NodeCap(n)
}

// depth1NodeCap is where a node limit cuts the first iteration: twice the
// limit, and at least the limit and a thousand nodes.
func depth1NodeCap(limit int64) int64 { return limit + max(limit, 1000) }

// countNode counts a node and, on the main thread, checks the limits.
func (w *worker) countNode() {
	w.nodes++
	if w.nodes&checkEvery != 0 {
		if w.isMain && w.e.tm.nodeStop > 0 && len(w.e.workers) == 1 && w.nodes >= w.e.tm.nodeStop {
			w.e.stop.Store(true)
		}
		return
	}
	w.pub.Store(w.nodes)
	if !w.isMain || w.rootDepth <= 1 {
		return // depth 1 always completes, so there is always a move
	}
	if w.e.tm.hardStop() {
		w.e.stop.Store(true)
	}
	if w.e.tm.nodeStop > 0 && w.e.totalNodes() >= w.e.tm.nodeStop {
		w.e.stop.Store(true)
	}
}

func (w *worker) isRepetition(p *engine.Position, ply int) bool {
	idx := w.rootIdx + ply
	key := p.Key()
	stop := max(idx-p.HalfmoveClock(), 0)
	for i := idx - 4; i >= stop; i -= 2 {
		if w.keys[i] == key {
			return true
		}
	}
	return false
}

// evaluate returns the static evaluation of p, which is stack[ply]. With
// UseNNUE it is the net's. The built-in evaluator is called directly: a call
// through the interface would make the compiler move every position of the
// search to the heap (it cannot prove the callee keeps no pointer), costing
// an allocation per node. Other evaluators get a copy.
func (w *worker) evaluate(p *engine.Position, ply int) int {
	if w.net != nil {
		return w.evaluateNNUE(ply)
	}
	if ev, ok := w.e.eval.(*eval.Evaluator); ok {
		return ev.Evaluate(p)
	}
	q := *p
	return w.e.eval.Evaluate(&q)
}

// resetAccumulators starts a search's accumulators at the root, stack[0].
func (w *worker) resetAccumulators() {
	w.accOK = [MaxPly + 1]bool{}
	if w.net != nil {
		w.net.Refresh(&w.acc[0], &w.stack[0])
		w.accOK[0] = true
	}
}

// evaluateNNUE updates the accumulators from the nearest valid one down to
// ply (usually just ply itself) and evaluates stack[ply].
func (w *worker) evaluateNNUE(ply int) int {
	j := ply
	for !w.accOK[j] {
		j-- // stops at 0: the root's is always valid
	}
	for ; j < ply; j++ {
		w.net.Update(&w.acc[j+1], &w.acc[j], &w.stack[j], &w.stack[j+1])
		w.accOK[j+1] = true
	}
	return min(max(w.net.Evaluate(&w.acc[ply], w.stack[ply].SideToMove()), -eval.MaxEval), eval.MaxEval)
}

func hasNonPawnMaterial(p *engine.Position) bool {
	us := p.SideToMove()
	return p.ColorPieces(us)&^(p.Pieces(us, engine.Pawn)|p.Pieces(us, engine.King)) != 0
}

// search is the principal-variation alpha-beta search of p at ply to depth.
func (w *worker) search(p *engine.Position, alpha, beta, depth, ply int, nullOK bool) int {
	w.pvLen[ply] = ply
	if depth <= 0 {
		return w.qsearch(p, alpha, beta, ply)
	}
	w.countNode()
	if w.stopped() {
		return 0
	}
	e := w.e
	v := &e.params
	pvNode := beta-alpha > 1
	root := ply == 0
	inCheck := p.InCheck()
	w.keys[w.rootIdx+ply] = p.Key()
	if ply > w.seldepth {
		w.seldepth = ply
	}

	if !root {
		var s int
		var done bool
		if s, alpha, beta, done = w.endsBeforeSearch(p, alpha, beta, ply, inCheck); done {
			return s
		}
	}

	tte, hit := e.tt.Probe(p.Key())
	ttMove := engine.NullMove
	if hit {
		ttMove = tte.Move
		if !pvNode && tte.Depth >= depth {
			s := scoreFromTT(tte.Score, ply)
			if tte.Bound == BoundExact || (tte.Bound == BoundLower && s >= beta) || (tte.Bound == BoundUpper && s <= alpha) {
				return s
			}
		}
	}

	if !root && e.tbRun.cardinality > 0 {
		if s, ok := w.probeTB(p, alpha, beta, depth, ply, inCheck); ok {
			return s
		}
	}

	staticEval := -Infinity
	if !inCheck {
		if hit {
			staticEval = tte.Eval
		} else {
			staticEval = w.evaluate(p, ply)
		}
	}
	w.evalStack[ply] = staticEval
	improving := !inCheck && ply >= 2 && staticEval > w.evalStack[ply-2]
	impr := 0
	if improving {
		impr = 1
	}

	if !pvNode && !inCheck && abs(beta) < MateBound {
		if s, ok := w.pruneNode(p, beta, depth, ply, staticEval, impr, nullOK); ok {
			return s
		}
	}

	// Internal iterative reduction: without a TT move this node was never
	// searched; a shallower search is cheaper and fills the TT for later.
	if depth >= v[IIRDepth] && ttMove == engine.NullMove {
		depth--
	}

	var ml engine.MoveList
	p.GenerateMoves(&ml)
	if root && len(w.e.searchMoves) > 0 {
		restrictMoves(&ml, w.e.searchMoves)
	}
	if ml.N == 0 {
		if inCheck {
			return -MateScore + ply
		}
		return 0
	}
	nd := node{depth: depth, ply: ply, staticEval: staticEval, impr: impr, pvNode: pvNode, root: root, inCheck: inCheck, improving: improving}
	origAlpha := alpha
	best, bestMove, stopped := w.searchMoves(p, &ml, ttMove, &nd, alpha, beta)
	if stopped {
		return 0
	}

	bound := BoundExact
	if best <= origAlpha {
		bound = BoundUpper
	} else if best >= beta {
		bound = BoundLower
	}
	e.tt.Store(p.Key(), TTEntry{Move: bestMove, Score: scoreToTT(best, ply), Eval: staticEval, Depth: depth, Bound: bound})
	return best
}

// node is what search knows of a node when it comes to its moves.
type node struct {
	depth, ply, staticEval, impr     int
	pvNode, root, inCheck, improving bool
}

// searchMoves searches the moves ml of p (the node nd) in order, with
// pruning, reductions and principal-variation re-searches, and returns
// the best score and the move that raised alpha last (NullMove if none
// did), or stopped when the search must unwind. It updates the PV, the root's best move and, on a cut-off, the
// killers and history.
func (w *worker) searchMoves(p *engine.Position, ml *engine.MoveList, ttMove engine.Move, nd *node, alpha, beta int) (best int, bestMove engine.Move, stopped bool) {
	depth, ply, staticEval, impr := nd.depth, nd.ply, nd.staticEval, nd.impr
	pvNode, root, inCheck, improving := nd.pvNode, nd.root, nd.inCheck, nd.improving
	var scores [256]int32
	w.scoreMoves(p, ml, &scores, ttMove, ply)

	best, bestMove = -Infinity, engine.NullMove
	var quiets [64]engine.Move
	nq := 0
	moves := 0
	lmpLimit := w.e.params[LMPBase] + depth*depth/(2-impr)
	// Move-count, futility and SEE pruning only with pieces on the board:
	// in pawn endings a quiet-looking move is often the only one that holds.
	canPrune := !root && hasNonPawnMaterial(p)
	for i := 0; i < ml.N; i++ {
		m := pickNext(ml, &scores, i)
		capture := p.IsCapture(m)
		quiet := !capture && !m.IsPromotion()

		if canPrune && best > -MateBound && w.pruneMove(p, m, quiet, inCheck, depth, staticEval, alpha, moves, lmpLimit) {
			continue
		}

		c := &w.stack[ply+1]
		*c = *p
		c.MakeMove(m)
		w.accOK[ply+1] = false
		moves++
		givesCheck := c.InCheck()
		newDepth := depth - 1
		if givesCheck && ply < 2*w.rootDepth {
			newDepth++ // check extension
		}

		var s int
		if moves == 1 {
			s = -w.search(c, -beta, -alpha, newDepth, ply+1, true)
		} else {
			r := 0
			if depth >= 3 && moves > 2 && quiet {
				r = w.reduction(p, m, depth, moves, ply, newDepth, pvNode, improving, givesCheck || inCheck)
			}
			s = -w.search(c, -alpha-1, -alpha, newDepth-r, ply+1, true)
			if s > alpha && r > 0 {
				s = -w.search(c, -alpha-1, -alpha, newDepth, ply+1, true)
			}
			if s > alpha && s < beta {
				s = -w.search(c, -beta, -alpha, newDepth, ply+1, true)
			}
		}
		if w.stopped() {
			return 0, engine.NullMove, true
		}

		if s > best {
			best = s
			if s > alpha {
				alpha = s
				bestMove = m
				w.pv[ply][ply] = m
				n := w.pvLen[ply+1]
				copy(w.pv[ply][ply+1:n], w.pv[ply+1][ply+1:n])
				w.pvLen[ply] = max(n, ply+1)
				if root {
					w.rootBest, w.rootScore = m, s
				}
				if s >= beta {
					if quiet {
						w.onCutoff(p, m, quiets[:nq], depth, ply)
					}
					break
				}
			}
		}
		if quiet && nq < len(quiets) {
			quiets[nq] = m
			nq++
		}
	}

	return best, bestMove, false
}

// endsBeforeSearch ends a non-root node before any search when it is a
// draw by rule or the ply limit, or mate distance pruning closes the
// window; otherwise it returns the window narrowed by that pruning.
func (w *worker) endsBeforeSearch(p *engine.Position, alpha, beta, ply int, inCheck bool) (score, newAlpha, newBeta int, done bool) {
	if w.isRepetition(p, ply) || p.InsufficientMaterial() {
		return 0, alpha, beta, true
	}
	if p.HalfmoveClock() >= 100 && (!inCheck || p.LegalMoveCount() > 0) {
		return 0, alpha, beta, true
	}
	if ply >= MaxPly-1 {
		return w.evaluate(p, ply), alpha, beta, true
	}
	// Mate distance pruning: no line from here beats a shorter mate.
	alpha = max(alpha, -MateScore+ply)
	beta = min(beta, MateScore-ply-1)
	if alpha >= beta {
		return alpha, alpha, beta, true
	}
	return 0, alpha, beta, false
}

// pruneNode tries the cut-offs of a non-PV node out of check before its
// moves are searched: reverse futility and null move. ok says it is cut,
// with score.
func (w *worker) pruneNode(p *engine.Position, beta, depth, ply, staticEval, impr int, nullOK bool) (score int, ok bool) {
	v := &w.e.params
	// Reverse futility: far above beta at low depth, a quiet move will
	// not bring it back down.
	if depth <= v[RFPDepth] && staticEval-v[RFPMargin]*(depth-impr) >= beta {
		return staticEval, true
	}
	// Null move: if passing still fails high, a real move will too
	// (unsound in zugzwang, hence not without pieces).
	if nullOK && depth >= v[NMPMinDepth] && staticEval >= beta && hasNonPawnMaterial(p) {
		r := v[NMPBase] + depth/v[NMPDepthDiv] + min((staticEval-beta)/v[NMPEvalDiv], 3)
		c := &w.stack[ply+1]
		*c = *p
		c.MakeNullMove()
		w.accOK[ply+1] = false
		s := -w.search(c, -beta, -beta+1, depth-1-r, ply+1, false)
		if w.stopped() {
			return 0, true
		}
		if s >= beta {
			if s >= TBWinBound { // an unproven win: the null move is no move
				s = beta
			}
			return s, true
		}
	}
	return 0, false
}

// pruneMove says whether move m of p can be skipped unsearched: late-move,
// futility and SEE pruning.
func (w *worker) pruneMove(p *engine.Position, m engine.Move, quiet, inCheck bool, depth, staticEval, alpha, moves, lmpLimit int) bool {
	v := &w.e.params
	if !quiet {
		return depth <= v[SEEPruneDepth] && !seeGE(p, m, -v[SEECaptureMargin]*depth)
	}
	if depth <= v[LMPDepth] && moves >= lmpLimit {
		return true
	}
	if !inCheck && depth <= v[FutDepth] && staticEval+v[FutBase]+v[FutMargin]*depth <= alpha {
		return true
	}
	return depth <= v[SEEPruneDepth] && !seeGE(p, m, -v[SEEQuietMargin]*depth)
}

// reduction is the late-move reduction of quiet move m, the moves-th
// searched at depth, clamped so the reduced search keeps at least a ply.
func (w *worker) reduction(p *engine.Position, m engine.Move, depth, moves, ply, newDepth int, pvNode, improving, check bool) int {
	r := int(w.e.lmr[min(depth, 63)][min(moves, 63)])
	if pvNode {
		r--
	}
	if !improving {
		r++
	}
	if m == w.killers[ply][0] || m == w.killers[ply][1] {
		r--
	}
	if check {
		r--
	}
	r -= int(w.history[p.SideToMove()][m.From()][m.To()]) / 8192
	return max(0, min(r, newDepth-1))
}

// qsearch resolves captures (and check evasions) until the position is
// quiet, so the evaluation is never taken in the middle of an exchange.
func (w *worker) qsearch(p *engine.Position, alpha, beta, ply int) int {
	w.countNode()
	if ply > w.seldepth {
		w.seldepth = ply
	}
	e := w.e
	if ply >= MaxPly-1 {
		return w.evaluate(p, ply)
	}
	if w.stopped() {
		return 0
	}
	pvNode := beta-alpha > 1
	tte, hit := e.tt.Probe(p.Key())
	if hit && !pvNode {
		s := scoreFromTT(tte.Score, ply)
		if tte.Bound == BoundExact || (tte.Bound == BoundLower && s >= beta) || (tte.Bound == BoundUpper && s <= alpha) {
			return s
		}
	}
	inCheck := p.InCheck()
	best := -Infinity
	standPat := -Infinity
	if !inCheck {
		if hit {
			standPat = tte.Eval
		} else {
			standPat = w.evaluate(p, ply)
		}
		if standPat >= beta {
			return standPat
		}
		alpha = max(alpha, standPat)
		best = standPat
	}

	var ml engine.MoveList
	p.GenerateMoves(&ml)
	var scores [256]int32
	if inCheck {
		if ml.N == 0 {
			return -MateScore + ply
		}
		w.scoreMoves(p, &ml, &scores, engine.NullMove, min(ply, MaxPly))
	} else {
		scoreCaptures(p, &ml, &scores)
	}
	origAlpha := alpha
	bestMove := engine.NullMove
	for i := 0; i < ml.N; i++ {
		m := pickNext(&ml, &scores, i)
		if !inCheck {
			// Delta pruning: even winning the piece cannot raise alpha.
			if !m.IsPromotion() && standPat+seeValue[capturedType(p, m)]+e.params[DeltaMargin] <= alpha {
				continue
			}
			if !seeGE(p, m, 0) {
				continue
			}
		}
		c := &w.stack[ply+1]
		*c = *p
		c.MakeMove(m)
		w.accOK[ply+1] = false
		s := -w.qsearch(c, -beta, -alpha, ply+1)
		if s > best {
			best = s
			if s > alpha {
				alpha = s
				bestMove = m
				if s >= beta {
					break
				}
			}
		}
	}
	if w.stopped() {
		return 0
	}
	bound := BoundUpper
	if best >= beta {
		bound = BoundLower
	} else if best > origAlpha {
		bound = BoundExact
	}
	ev := standPat
	if inCheck {
		ev = 0
	}
	e.tt.Store(p.Key(), TTEntry{Move: bestMove, Score: scoreToTT(best, ply), Eval: ev, Depth: 0, Bound: bound})
	return best
}

// restrictMoves keeps only the moves of ml that are in allowed (UCI `go
// searchmoves`), in their generated order.
func restrictMoves(ml *engine.MoveList, allowed []engine.Move) {
	n := 0
	for _, m := range ml.Moves[:ml.N] {
		for _, a := range allowed {
			if m == a {
				ml.Moves[n] = m
				n++
				break
			}
		}
	}
	ml.N = n
}

// buildLMR fills the late-move reduction table from the parameters.
func buildLMR(t *[64][64]int8, v *Values) {
	for d := 1; d < 64; d++ {
		for m := 1; m < 64; m++ {
			r := float64(v[LMRBase])/100 + math.Log(float64(d))*math.Log(float64(m))*100/float64(v[LMRDiv])
			t[d][m] = int8(r)
		}
	}
}
