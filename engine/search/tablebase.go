package search

// Syzygy tablebases in the search, as Stockfish uses them:
//
//   - At the root, when the position is in the tables, the root moves are
//     ranked by DTZ (syzygy.RootMoves) and the search is restricted to the
//     moves of the best rank, so a won ending is converted within the
//     50-move rule and a drawn one is never lost. The search then scores
//     those moves by its evaluation, without probing (every move already
//     keeps the result; the evaluation finds the progress). Without DTZ
//     tables the moves are ranked by WDL, and the search probes on only if
//     the root is won.
//   - Inside the tree, a position right after a capture or pawn move
//     (halfmove clock 0), without castling rights and with at most
//     `cardinality` pieces (min(SyzygyProbeLimit, the tables' largest)) is
//     probed for WDL at depth >= SyzygyProbeDepth (at any depth when it has
//     fewer pieces than the cardinality: such positions are rarer and their
//     tables smaller). A win scores TBWinScore-ply, a loss the opposite,
//     below the mate scores, so a real mate still outranks a TB win.
//
// Invariants:
//   - Without SyzygyPath nothing here runs (cardinality 0): the search, and
//     so the bench signature, is the same as before tablebases existed.
//   - TB scores lie in (TBWinBound, TBWinScore]; evaluations stay within
//     ±eval.MaxEval, far below TBWinBound, and mates beyond MateBound, above
//     TBWinScore. scoreToTT/scoreFromTT make both relative to the node.
//   - A Tablebase is opened once per directory in a process and shared by
//     every engine (the worker runs several): tablebaseCache. It is never
//     closed, since an engine may probe it until the process ends, and the
//     directory's listing is read once: tables added later need a new
//     process (or another directory).
//   - A probe that fails (a table missing from the directory, a damaged
//     file) is not a result: the search goes on as if the position were not
//     in the tables. The first failure of a search other than a missing
//     table (a partial set is normal; a damaged file is not) is reported
//     in its Info (TBError), which `arbiter uci` prints as `info string`.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

// Tablebase options, named and ranged as Stockfish's.
const (
	OptSyzygyPath        = "SyzygyPath"
	OptSyzygyProbeDepth  = "SyzygyProbeDepth"
	OptSyzygy50MoveRule  = "Syzygy50MoveRule"
	OptSyzygyProbeLimit  = "SyzygyProbeLimit"
	defaultTBProbeDepth  = 1
	maxTBProbeDepth      = 100
	defaultTBProbeLimit  = 7
	maxTBProbeLimit      = 7
	emptyPathOptionValue = "<empty>"
)

// TB scores: a tablebase win at ply scores TBWinScore-ply.
const (
	TBWinScore = MateBound - 1
	TBWinBound = TBWinScore - MaxPly
)

// tbSettings are the tablebase options of an engine.
type tbSettings struct {
	tb         *syzygy.Tablebase // nil: SyzygyPath is empty
	probeDepth int
	probeLimit int
	rule50     bool
}

func defaultTBSettings() tbSettings {
	return tbSettings{probeDepth: defaultTBProbeDepth, probeLimit: defaultTBProbeLimit, rule50: true}
}

func tbOptionSpecs() []OptionSpec {
	return []OptionSpec{
		{Name: OptSyzygyPath, Type: "string", Default: emptyPathOptionValue, NamesFile: true},
		{Name: OptSyzygyProbeDepth, Type: "spin", Default: fmt.Sprint(defaultTBProbeDepth), Min: 1, Max: maxTBProbeDepth},
		{Name: OptSyzygy50MoveRule, Type: "check", Default: "true"},
		{Name: OptSyzygyProbeLimit, Type: "spin", Default: fmt.Sprint(defaultTBProbeLimit), Min: 0, Max: maxTBProbeLimit},
	}
}

// setTBOption applies a tablebase option; handled is false for any other
// name.
func (e *Engine) setTBOption(name, value string) (handled bool, err error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "syzygypath":
		tb, err := tablebaseCache.open(strings.TrimSpace(value))
		if err == nil {
			e.tbs.tb = tb
		}
		return true, err
	case "syzygyprobedepth":
		v, err := parseSpin(OptSyzygyProbeDepth, value, 1, maxTBProbeDepth)
		if err == nil {
			e.tbs.probeDepth = v
		}
		return true, err
	case "syzygy50moverule":
		v, err := parseCheck(OptSyzygy50MoveRule, value)
		if err == nil {
			e.tbs.rule50 = v
		}
		return true, err
	case "syzygyprobelimit":
		v, err := parseSpin(OptSyzygyProbeLimit, value, 0, maxTBProbeLimit)
		if err == nil {
			e.tbs.probeLimit = v
		}
		return true, err
	}
	return false, nil
}

// TablebaseSummary says which tables SyzygyPath opened, as Stockfish's
// "info string Found ..." does; empty without tables.
func (e *Engine) TablebaseSummary() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tbs.tb == nil {
		return ""
	}
	wdl, dtz := e.tbs.tb.Counts()
	return fmt.Sprintf("Found %d WDL and %d DTZ tablebase files (up to %d-man) in %s", wdl, dtz, e.tbs.tb.MaxPieces(), e.tbs.tb.Dir())
}

// tablebaseCache holds the tables opened in this process by directory.
var tablebaseCache = &tbCache{byDir: map[string]*syzygy.Tablebase{}}

type tbCache struct {
	mu    sync.Mutex
	byDir map[string]*syzygy.Tablebase
}

// open returns the tables of dir, opening them on first use; "" or
// "<empty>" is no tables (nil). A directory that does not exist, is not a
// directory or holds no table (syzygy.Open) is an error naming the option
// and the path.
func (c *tbCache) open(dir string) (*syzygy.Tablebase, error) {
	if dir == "" || dir == emptyPathOptionValue {
		return nil, nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) && strings.ContainsRune(dir, os.PathListSeparator):
		return nil, fmt.Errorf("option %q: directory %q does not exist (one directory, not a list)", OptSyzygyPath, dir)
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("option %q: directory %q does not exist", OptSyzygyPath, dir)
	case err != nil:
		return nil, fmt.Errorf("option %q: %w", OptSyzygyPath, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("option %q: %q is not a directory", OptSyzygyPath, dir)
	}
	key, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("option %q: %w", OptSyzygyPath, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tb, ok := c.byDir[key]; ok {
		return tb, nil
	}
	tb, err := syzygy.Open(key)
	if err != nil {
		return nil, fmt.Errorf("option %q: %w", OptSyzygyPath, err)
	}
	c.byDir[key] = tb
	return tb, nil
}

// tbSearch is how one search uses the tables, decided at its start.
type tbSearch struct {
	cardinality int   // probe positions with at most this many pieces; 0 never
	rootHits    int64 // root moves ranked from the tables
	// failure is the search's first probe error other than a missing
	// table; threads race to set it.
	failure atomic.Pointer[error]
}

// noteTBError keeps err as the search's probe failure unless it is a
// missing table or one is already kept.
func (e *Engine) noteTBError(err error) {
	var missing *syzygy.MissingTableError
	if !errors.As(err, &missing) {
		e.tbRun.failure.CompareAndSwap(nil, &err)
	}
}

// tbError is the search's probe failure, nil if none.
func (e *Engine) tbError() error {
	if p := e.tbRun.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// prepareTablebases ranks the root moves of pos from the tables when it is
// in them, restricts the search to the best-ranked ones (into
// e.searchMoves, as `go searchmoves` does) and decides whether the search
// probes. history is the game's keys before pos.
func (e *Engine) prepareTablebases(pos *engine.Position, history []uint64) {
	e.tbRun.cardinality, e.tbRun.rootHits = 0, 0
	e.tbRun.failure.Store(nil)
	tb := e.tbs.tb
	if tb == nil || e.tbs.probeLimit == 0 {
		return
	}
	e.tbRun.cardinality = min(e.tbs.probeLimit, tb.MaxPieces())
	if pos.Occupied().Count() > e.tbRun.cardinality || pos.CastlingRights() != 0 {
		return
	}
	ranked, err := tb.RootMoves(pos)
	dtz := err == nil
	if !dtz {
		e.noteTBError(err)
		if ranked, err = rootMovesByWDL(tb, pos); err != nil {
			e.noteTBError(err)
			return // search as without tables
		}
	}
	ranked = e.keepSearchMoves(ranked)
	if len(ranked) == 0 {
		return
	}
	e.tbRun.rootHits = int64(len(ranked))
	best := bestRootMoves(ranked, dtz && hasRepeated(pos, history))
	e.searchMoves = e.searchMoves[:0]
	for _, m := range best {
		e.searchMoves = append(e.searchMoves, m.Move)
	}
	// With DTZ the restriction converts; probing inside would score every
	// kept move a TB win and hide which makes progress. With WDL alone the
	// probes help only a won root find its way.
	if dtz || ranked[0].WDL <= syzygy.Draw {
		e.tbRun.cardinality = 0
	}
}

// keepSearchMoves drops the moves `go searchmoves` excluded.
func (e *Engine) keepSearchMoves(ranked []syzygy.RootMove) []syzygy.RootMove {
	if len(e.searchMoves) == 0 {
		return ranked
	}
	kept := ranked[:0]
	for _, m := range ranked {
		for _, a := range e.searchMoves {
			if m.Move == a {
				kept = append(kept, m)
				break
			}
		}
	}
	return kept
}

// bestRootMoves keeps the moves of the best rank (ranked is sorted best
// first). Every win safely inside the 50-move rule shares the top rank, so
// the search may choose among them; after a repetition only the fastest
// (least DTZ) are kept, so the engine cannot shuffle into a draw.
func bestRootMoves(ranked []syzygy.RootMove, repeated bool) []syzygy.RootMove {
	n := 1
	for n < len(ranked) && ranked[n].Rank == ranked[0].Rank {
		n++
	}
	best := ranked[:n]
	if !repeated || best[0].DTZ <= 0 {
		return best
	}
	least := best[0].DTZ
	for _, m := range best {
		least = min(least, m.DTZ)
	}
	kept := best[:0:0]
	for _, m := range best {
		if m.DTZ == least {
			kept = append(kept, m)
		}
	}
	return kept
}

// rootMovesByWDL ranks the moves of pos by the WDL of the positions they
// reach, for tables without DTZ files: Rank is the WDL, DTZ is unknown (0).
func rootMovesByWDL(tb *syzygy.Tablebase, pos *engine.Position) ([]syzygy.RootMove, error) {
	var ml engine.MoveList
	pos.GenerateMoves(&ml)
	moves := make([]syzygy.RootMove, 0, ml.N)
	for _, m := range ml.Slice() {
		next := *pos
		next.MakeMove(m)
		w, err := tb.ProbeWDL(&next)
		if err != nil {
			return nil, err
		}
		moves = append(moves, syzygy.RootMove{Move: m, WDL: -w, Rank: int(-w)})
	}
	sortByRank(moves)
	return moves, nil
}

func sortByRank(moves []syzygy.RootMove) {
	for i := 1; i < len(moves); i++ { // stable, best first; at most 218 moves
		for j := i; j > 0 && moves[j].Rank > moves[j-1].Rank; j-- {
			moves[j], moves[j-1] = moves[j-1], moves[j]
		}
	}
}

// hasRepeated says whether a position since the last capture or pawn move
// (pos included) occurred twice in the game.
func hasRepeated(pos *engine.Position, history []uint64) bool {
	start := max(len(history)-pos.HalfmoveClock(), 0)
	seen := map[uint64]bool{pos.Key(): true}
	for _, k := range history[start:] {
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// probeTB probes p (stack[ply]) for WDL when the tables hold it and it is
// worth it (see the top of this file). ok says the result ends the node:
// its score is exact or beyond the window.
func (w *worker) probeTB(p *engine.Position, alpha, beta, depth, ply int, inCheck bool) (score int, ok bool) {
	e := w.e
	n := p.Occupied().Count()
	if n > e.tbRun.cardinality || n == e.tbRun.cardinality && depth < e.tbs.probeDepth ||
		p.HalfmoveClock() != 0 || p.CastlingRights() != 0 {
		return 0, false
	}
	wdl, err := e.tbs.tb.ProbeWDL(p)
	if err != nil {
		e.noteTBError(err)
		return 0, false
	}
	w.tbHits.Add(1)
	score, bound := tbScore(wdl, ply, e.tbs.rule50)
	if bound != BoundExact && !(bound == BoundLower && score >= beta) && !(bound == BoundUpper && score <= alpha) {
		return 0, false
	}
	staticEval := -Infinity
	if !inCheck {
		staticEval = w.evaluate(p, ply)
	}
	// Deeper than any search of it: the value is certain.
	e.tt.Store(p.Key(), TTEntry{Score: scoreToTT(score, ply), Eval: staticEval, Depth: min(depth+6, MaxPly-1), Bound: bound})
	return score, true
}

// tbScore is the search score of a WDL at ply and the bound it is: a win
// is at least TBWinScore-ply (a mate may be faster), a loss at most its
// opposite. With the 50-move rule, cursed wins and blessed losses are
// draws, nudged by 2 cp towards the side the rule spoils (as Stockfish),
// so the search prefers them to dead draws; without it they are wins and
// losses.
func tbScore(w syzygy.WDL, ply int, rule50 bool) (int, Bound) {
	draw := 0
	if rule50 {
		draw = 1
	}
	switch v := int(w); {
	case v > draw:
		return TBWinScore - ply, BoundLower
	case v < -draw:
		return -TBWinScore + ply, BoundUpper
	default:
		return 2 * v * draw, BoundExact
	}
}
