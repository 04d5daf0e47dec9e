// Package search is Arbiter's alpha-beta search: iterative deepening with
// aspiration windows, PVS, a lock-free transposition table shared by Lazy
// SMP threads, quiescence with SEE pruning, killer/history move ordering,
// null-move pruning, late-move reductions and pruning, check extensions,
// repetition and fifty-move draws, and mate scores.
//
// The package does no I/O: an Engine takes a position, the game's earlier
// position keys, Limits and a context (the stop signal), and returns the
// best move and an Info. Front ends (UCI, the match runner's builtin player)
// wrap it.
package search

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/eval"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// Limits say when a search ends, as UCI's `go` does. Zero fields are unset;
// with nothing set the search runs to MaxPly (or until stopped).
type Limits struct {
	Depth     int
	Nodes     int64
	MoveTime  time.Duration
	TimeSet   bool             // Time and Inc were given (a game clock)
	Time      [2]time.Duration // remaining clock by colour (engine.White, engine.Black)
	Inc       [2]time.Duration
	MovesToGo int
	Infinite  bool // search until stopped
	Ponder    bool // search until PonderHit (then under the limits) or stopped
	// SearchMoves restricts the root to these moves (UCI `go searchmoves`);
	// moves that are not legal are ignored, and if none is, all are searched.
	SearchMoves []engine.Move
}

// Info reports a completed iteration.
type Info struct {
	Depth    int
	SelDepth int
	Score    int // centipawns from the side to move, or a mate score (see Mate)
	Mate     int // moves to mate: > 0 we mate, < 0 we are mated, 0 no mate
	Nodes    int64
	Time     time.Duration
	NPS      int64
	Hashfull int
	PV       []engine.Move
	TBHits   int64 // tablebase probes that gave a result (UCI tbhits)
	// TBError is the search's first tablebase probe that failed other than
	// for a missing table (a damaged file); the search went on without it.
	TBError error
}

// OptionSpec describes one engine option for a front end (UCI `option`).
type OptionSpec struct {
	Name    string
	Type    string // "spin", "check" or "button"
	Default string
	Min     int
	Max     int
	// NamesFile marks an option whose value is a file or directory the
	// engine opens: the one list front ends read to refuse such options
	// from whoever may not name the machine's files (a client of the
	// coordinator).
	NamesFile bool
}

// NamesFile reports whether the option name (any case) makes the engine
// open a file or directory (OptionSpec.NamesFile).
func NamesFile(name string) bool {
	for _, s := range baseOptionSpecs() {
		if s.NamesFile && strings.EqualFold(strings.TrimSpace(name), s.Name) {
			return true
		}
	}
	return false
}

// Engine options that are not Params.
const (
	OptHash         = "Hash"
	OptThreads      = "Threads"
	OptMoveOverhead = "Move Overhead"
	OptClearHash    = "Clear Hash"
	OptChess960     = "UCI_Chess960"
	OptPonder       = "Ponder"
	OptUseNNUE      = "UseNNUE"  // evaluate with the net instead of the hand-written evaluation
	OptEvalFile     = "EvalFile" // the net file; empty: the net embedded in the binary

	DefaultHashMB       = 16
	MaxHashMB           = 16384
	MaxThreads          = 256
	DefaultMoveOverhead = 30 // ms: covers process and pipe latency under load
)

// Engine is the embedded chess engine. One search runs at a time; Go
// serializes them, and SetOption waits for a running search.
type Engine struct {
	mu sync.Mutex // held for a whole search, and by SetOption/NewGame

	hashMB       int
	threads      int
	moveOverhead time.Duration
	chess960     bool
	ponder       bool
	weights      eval.Weights
	params       Values
	useNNUE      bool
	net          *nnue.Net // EvalFile's net, or the embedded default (nil if none)
	tbs          tbSettings
	tbRun        tbSearch // the current search's use of the tables

	eval    Evaluator
	tt      TransTable
	workers []*worker
	lmr     [64][64]int8
	clock   Clock

	stop        atomic.Bool
	tm          timeManager
	searchMoves []engine.Move // root restriction of the current search
	ponderHit   chan struct{}

	// OnInfo, if set, is called on the searching goroutine after every
	// completed iteration of the main thread.
	OnInfo func(Info)
}

// NewEngine returns an engine with default options overridden by options
// (names are case-insensitive, as in UCI). An unknown name or a bad value is
// an error naming the option and its range.
func NewEngine(options map[string]string) (*Engine, error) {
	e := &Engine{
		hashMB:       DefaultHashMB,
		threads:      1,
		moveOverhead: DefaultMoveOverhead * time.Millisecond,
		weights:      eval.DefaultWeights(),
		params:       DefaultValues(),
		tbs:          defaultTBSettings(),
		clock:        realClock{},
		ponderHit:    make(chan struct{}, 1),
	}
	net, err := nnue.DefaultNet()
	if err != nil {
		return nil, err
	}
	e.net = net
	e.useNNUE = net != nil // a binary with a net plays with it by default
	names := make([]string, 0, len(options))
	for k := range options {
		names = append(names, k)
	}
	slices.Sort(names)
	// UseNNUE last: it needs the net that EvalFile, in any spelling, loads.
	slices.SortStableFunc(names, func(a, b string) int {
		return compareBool(strings.EqualFold(a, OptUseNNUE), strings.EqualFold(b, OptUseNNUE))
	})
	for _, k := range names {
		if err := e.setOption(k, options[k], false); err != nil {
			return nil, err
		}
	}
	e.tt = NewTable(e.hashMB)
	e.eval = eval.New(e.weights)
	buildLMR(&e.lmr, &e.params)
	e.makeWorkers()
	return e, nil
}

// embedsNet says whether the binary carries a default net, which makes
// UseNNUE's default true.
func embedsNet() bool {
	n, err := nnue.DefaultNet()
	return err == nil && n != nil
}

// CheckEvalWeights refuses options that set weights of the hand-written
// evaluation while the net evaluates (UseNNUE true, its default in a binary
// with a net): they would change nothing, and a test or tune of them would
// measure noise. The engine itself accepts them (a GUI may send every
// option); front ends that take a user's settings call this.
func CheckEvalWeights(options map[string]string) error {
	useNet := embedsNet()
	var weights []string
	for k, v := range options {
		if strings.EqualFold(strings.TrimSpace(k), OptUseNNUE) {
			b, err := parseCheck(OptUseNNUE, v)
			if err != nil {
				return err
			}
			useNet = b
		}
		if eval.FindParam(eval.Params[:], k) >= 0 {
			weights = append(weights, k)
		}
	}
	if !useNet || len(weights) == 0 {
		return nil
	}
	slices.Sort(weights)
	return fmt.Errorf("option %q is a weight of the hand-written evaluation, which the engine uses only with %s=false (the net evaluates by default): set %s=false beside it", weights[0], OptUseNNUE, OptUseNNUE)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// SetEvaluator replaces the evaluation (tests, experiments).
func (e *Engine) SetEvaluator(ev Evaluator) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.eval = ev
}

// SetClock replaces the time source (tests).
func (e *Engine) SetClock(c Clock) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clock = c
}

func (e *Engine) makeWorkers() {
	e.workers = make([]*worker, e.threads)
	for i := range e.workers {
		e.workers[i] = &worker{e: e, id: i, isMain: i == 0}
	}
}

// Options lists every option with its type, default and range: the engine
// options first, then the evaluation weights, then the search constants.
func (e *Engine) Options() []OptionSpec {
	specs := baseOptionSpecs()
	for _, p := range eval.Params {
		specs = append(specs, OptionSpec{Name: p.Name, Type: "spin", Default: strconv.Itoa(p.Default), Min: p.Min, Max: p.Max})
	}
	for _, p := range Params {
		specs = append(specs, OptionSpec{Name: p.Name, Type: "spin", Default: strconv.Itoa(p.Default), Min: p.Min, Max: p.Max})
	}
	return specs
}

// baseOptionSpecs are the engine options that are not parameters.
func baseOptionSpecs() []OptionSpec {
	specs := []OptionSpec{
		{Name: OptHash, Type: "spin", Default: strconv.Itoa(DefaultHashMB), Min: 1, Max: MaxHashMB},
		{Name: OptThreads, Type: "spin", Default: "1", Min: 1, Max: MaxThreads},
		{Name: OptMoveOverhead, Type: "spin", Default: strconv.Itoa(DefaultMoveOverhead), Min: 0, Max: 5000},
		{Name: OptClearHash, Type: "button"},
		{Name: OptChess960, Type: "check", Default: "false"},
		{Name: OptPonder, Type: "check", Default: "false"},
		{Name: OptUseNNUE, Type: "check", Default: strconv.FormatBool(embedsNet())},
		{Name: OptEvalFile, Type: "string", Default: "", NamesFile: true},
	}
	return append(specs, tbOptionSpecs()...)
}

// SetOption sets one option by name (case-insensitive). It waits for a
// running search to end.
func (e *Engine) SetOption(name, value string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.setOption(name, value, true)
}

func parseSpin(name, value string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil {
		return 0, fmt.Errorf("option %q: value %q is not an integer", name, value)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("option %q: value %d out of range [%d, %d]", name, v, lo, hi)
	}
	return v, nil
}

func parseCheck(name, value string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("option %q: value %q is not true or false", name, value)
}

// setOption applies one option; live says whether the engine is built (so
// tables must be rebuilt) or still being configured by NewEngine.
func (e *Engine) setOption(name, value string, live bool) error {
	if handled, err := e.setTBOption(name, value); handled {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "hash":
		v, err := parseSpin(OptHash, value, 1, MaxHashMB)
		if err != nil {
			return err
		}
		e.hashMB = v
		if live {
			e.tt = NewTable(v)
		}
		return nil
	case "threads":
		v, err := parseSpin(OptThreads, value, 1, MaxThreads)
		if err != nil {
			return err
		}
		e.threads = v
		if live {
			e.makeWorkers()
		}
		return nil
	case "move overhead":
		v, err := parseSpin(OptMoveOverhead, value, 0, 5000)
		if err != nil {
			return err
		}
		e.moveOverhead = time.Duration(v) * time.Millisecond
		return nil
	case "clear hash":
		if live {
			e.tt.Clear()
		}
		return nil
	case "uci_chess960":
		v, err := parseCheck(OptChess960, value)
		e.chess960 = v
		return err
	case "ponder":
		v, err := parseCheck(OptPonder, value)
		e.ponder = v
		return err
	case "usennue":
		v, err := parseCheck(OptUseNNUE, value)
		if err != nil {
			return err
		}
		if v && e.net == nil {
			return fmt.Errorf("option %q: no net: this binary embeds none, so set %s to a net file first", OptUseNNUE, OptEvalFile)
		}
		if v != e.useNNUE && live {
			e.tt.Clear() // its static evaluations are the other evaluation's
		}
		e.useNNUE = v
		return nil
	case "evalfile":
		return e.setEvalFile(strings.TrimSpace(value), live)
	}
	if i := eval.FindParam(eval.Params[:], name); i >= 0 {
		v, err := eval.Params[i].ParseValue(value)
		if err != nil {
			return err
		}
		e.weights[i] = v
		if live {
			e.eval = eval.New(e.weights)
		}
		return nil
	}
	if i := eval.FindParam(Params[:], name); i >= 0 {
		v, err := Params[i].ParseValue(value)
		if err != nil {
			return err
		}
		e.params[i] = v
		buildLMR(&e.lmr, &e.params)
		return nil
	}
	return fmt.Errorf("unknown option %q", name)
}

// setEvalFile loads the net of EvalFile (the search package's only file
// read: the option names a file, and every front end sets options through
// the engine). Empty or "<empty>" goes back to the embedded net.
func (e *Engine) setEvalFile(path string, live bool) error {
	var net *nnue.Net
	if path == "" || path == "<empty>" {
		def, err := nnue.DefaultNet()
		if err != nil {
			return err
		}
		if def == nil && e.useNNUE {
			return fmt.Errorf("option %q: this binary embeds no net, and %s is on", OptEvalFile, OptUseNNUE)
		}
		net = def
	} else {
		// The size first: a wrong file may be huge.
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("option %q: %w", OptEvalFile, err)
		}
		if err := nnue.CheckSize(fi.Size()); err != nil {
			return fmt.Errorf("option %q: file %s: %w", OptEvalFile, path, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("option %q: %w", OptEvalFile, err)
		}
		if net, err = nnue.Load(data); err != nil {
			return fmt.Errorf("option %q: file %s: %w", OptEvalFile, path, err)
		}
	}
	if live && e.useNNUE {
		e.tt.Clear()
	}
	e.net = net
	return nil
}

// Chess960 reports the UCI_Chess960 option.
func (e *Engine) Chess960() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.chess960
}

// NewGame forgets everything learned in the previous game (hash, history,
// killers), so games are independent and reproducible.
func (e *Engine) NewGame() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tt.Clear()
	for _, w := range e.workers {
		w.killers = [MaxPly + 1][2]engine.Move{}
		w.history = [2][64][64]int32{}
	}
}

// PonderHit tells a pondering search that the opponent played the expected
// move: from now on the search runs under its time limits, counted from now.
func (e *Engine) PonderHit() {
	if e.tm.ponder.Load() {
		e.tm.restart()
		e.tm.ponder.Store(false)
	}
	select {
	case e.ponderHit <- struct{}{}:
	default:
	}
}

func (e *Engine) totalNodes() int64 {
	n := e.workers[0].nodes
	for _, w := range e.workers[1:] {
		n += w.pub.Load()
	}
	return n
}

// Go searches pos and returns the best move and the report of the last
// completed iteration. history holds the Zobrist keys of the game's earlier
// positions (oldest first; the root's own key may be included or not), for
// repetition detection. Cancelling ctx stops the search, which then returns
// its best move so far. With no legal move it returns engine.NullMove.
func (e *Engine) Go(ctx context.Context, pos engine.Position, history []uint64, lim Limits) (engine.Move, Info) {
	return e.Start(ctx, pos, history, lim).Wait()
}

// Search is a running search started by Start.
type Search struct {
	done chan struct{}
	move engine.Move
	info Info
}

// Wait blocks until the search ends and returns its result.
func (s *Search) Wait() (engine.Move, Info) {
	<-s.done
	return s.move, s.info
}

// Done is closed when the search has ended.
func (s *Search) Done() <-chan struct{} { return s.done }

// Start begins a search in the background, like Go. When it returns, the
// limits are in force (so a PonderHit or a cancel that follows applies to
// this search); the engine stays busy until the search ends.
func (e *Engine) Start(ctx context.Context, pos engine.Position, history []uint64, lim Limits) *Search {
	e.mu.Lock()
	e.stop.Store(false)
	select { // a ponderhit meant for an earlier search
	case <-e.ponderHit:
	default:
	}
	e.tm.setup(e.clock, &lim, pos.SideToMove(), e.moveOverhead, &e.params)
	if len(history) > 0 && history[len(history)-1] == pos.Key() {
		history = history[:len(history)-1]
	}
	for _, w := range e.workers {
		w.prepare(&pos, history)
	}
	e.searchMoves = e.searchMoves[:0]
	for _, m := range lim.SearchMoves {
		if pos.IsLegal(m) {
			e.searchMoves = append(e.searchMoves, m)
		}
	}
	e.prepareTablebases(&pos, history)
	s := &Search{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer e.mu.Unlock()
		s.move, s.info = e.run(ctx, &pos, &lim)
	}()
	return s
}

func (e *Engine) run(ctx context.Context, pos *engine.Position, lim *Limits) (engine.Move, Info) {
	if pos.LegalMoveCount() == 0 {
		e.waitIfNeeded(ctx, lim)
		return engine.NullMove, Info{}
	}
	stopOnCancel := context.AfterFunc(ctx, func() { e.stop.Store(true) })
	defer stopOnCancel()
	// The hard limit is also enforced by a timer, so the search stops on
	// time even while the node counter advances slowly (a starved thread).
	// Pondering has no deadline yet; the node checks cover it after
	// ponderhit. A test clock (SetClock) is only read by the node checks.
	if _, real := e.clock.(realClock); real && e.tm.timed && !lim.Ponder {
		t := time.AfterFunc(e.tm.hard, func() { e.stop.Store(true) })
		defer t.Stop()
	}
	e.tt.NewSearch()

	var wg sync.WaitGroup
	for _, w := range e.workers[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.iterate(pos, lim)
		}()
	}
	main := e.workers[0]
	main.iterate(pos, lim)
	e.waitIfNeeded(ctx, lim)
	e.stop.Store(true)
	wg.Wait()

	res := main.done
	return res.Move, e.makeInfo(main, res)
}

// waitIfNeeded holds the result of a search that finished early (depth
// limit, forced mate) while the GUI still expects it to run: `go infinite`
// until stop, `go ponder` until ponderhit or stop.
func (e *Engine) waitIfNeeded(ctx context.Context, lim *Limits) {
	if !lim.Infinite && !e.tm.ponder.Load() {
		return
	}
	for {
		if lim.Infinite {
			<-ctx.Done()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-e.ponderHit:
			if !lim.Infinite {
				return
			}
		}
	}
}

// Result is a completed iteration.
type Result struct {
	Move     engine.Move
	Score    int
	Depth    int
	SelDepth int
	PV       [MaxPly]engine.Move
	PVLen    int
}

func (e *Engine) makeInfo(w *worker, r Result) Info {
	el := e.tm.clock.Now().Sub(e.tm.epoch)
	nodes := e.totalNodes()
	info := Info{
		Depth:    r.Depth,
		SelDepth: r.SelDepth,
		Score:    r.Score,
		Nodes:    nodes,
		Time:     el,
		Hashfull: e.tt.Hashfull(),
		PV:       append([]engine.Move(nil), r.PV[:r.PVLen]...),
		TBHits:   e.tbRun.rootHits,
		TBError:  e.tbError(),
	}
	for _, w := range e.workers {
		info.TBHits += w.tbHits.Load()
	}
	if el > 0 {
		info.NPS = int64(float64(nodes) / el.Seconds())
	}
	switch {
	case r.Score >= MateBound:
		info.Mate = (MateScore - r.Score + 1) / 2
	case r.Score <= -MateBound:
		info.Mate = -(MateScore + r.Score) / 2
	}
	return info
}

func (w *worker) prepare(pos *engine.Position, history []uint64) {
	w.net = nil
	if w.e.useNNUE {
		w.net = w.e.net
	}
	need := len(history) + MaxPly + 2
	if cap(w.keys) < need {
		w.keys = make([]uint64, need)
	}
	w.keys = w.keys[:need]
	copy(w.keys, history)
	w.rootIdx = len(history)
	w.nodes = 0
	w.pub.Store(0)
	w.seldepth = 0
	w.tbHits.Store(0)
	w.done = Result{}
	w.rootDepth = 0
}

// iterate is iterative deepening with aspiration windows. The main thread
// decides when to stop; helpers (Lazy SMP) search the same root, half of
// them one ply deeper, and share what they find through the TT.
func (w *worker) iterate(pos *engine.Position, lim *Limits) {
	e := w.e
	v := &e.params
	maxDepth := MaxPly - 1
	if lim.Depth > 0 {
		maxDepth = min(lim.Depth, maxDepth)
	}
	// A fallback move: the first legal one, so even a search stopped at once
	// answers with a legal move.
	var ml engine.MoveList
	pos.GenerateMoves(&ml)
	if len(e.searchMoves) > 0 {
		restrictMoves(&ml, e.searchMoves)
	}
	w.done.Move = ml.Moves[0]
	w.done.PV[0], w.done.PVLen = ml.Moves[0], 1
	// The root is stack[0], so that the net's accumulators follow the
	// line up from it (evaluateNNUE).
	w.stack[0] = *pos
	root := &w.stack[0]
	w.resetAccumulators()

	score := 0
	lastBest := engine.NullMove
	stable := 0
	for depth := 1; depth <= maxDepth; depth++ {
		d := depth
		if !w.isMain && w.id%2 == 1 && depth > 1 {
			d = min(depth+1, maxDepth)
		}
		w.rootDepth = d
		w.rootBest = engine.NullMove
		w.seldepth = 0

		alpha, beta := -Infinity, Infinity
		window := v[AspWindow]
		if d >= v[AspMinDepth] {
			alpha, beta = max(score-window, -Infinity), min(score+window, Infinity)
		}
		for {
			s := w.search(root, alpha, beta, d, 0, false)
			if w.stopped() {
				break
			}
			if s <= alpha {
				beta = (alpha + beta) / 2
				alpha = max(s-window, -Infinity)
			} else if s >= beta {
				beta = min(s+window, Infinity)
			} else {
				score = s
				break
			}
			window += window / 2
		}
		if !w.isMain {
			if e.stop.Load() {
				return
			}
			continue
		}
		if w.stopped() {
			// An interrupted iteration's best move is trusted only if it
			// beat the previous best inside the window; an interrupted
			// first iteration has nothing before it but the fallback.
			first := w.done.Depth == 0
			if w.rootBest != engine.NullMove && (first || w.rootBest != w.done.Move && w.rootScore > w.done.Score-v[AspWindow]) {
				if first {
					w.done.Depth, w.done.SelDepth = d, w.seldepth
				}
				w.done.Move = w.rootBest
				w.done.PV[0], w.done.PVLen = w.rootBest, 1
				w.done.Score = w.rootScore
				// The last info line named another move; runners such as
				// fastchess warn when bestmove does not begin the last PV.
				w.pub.Store(w.nodes)
				if e.OnInfo != nil {
					e.OnInfo(e.makeInfo(w, w.done))
				}
			}
			break
		}
		w.done = Result{Move: w.pv[0][0], Score: score, Depth: d, SelDepth: w.seldepth}
		w.done.PVLen = copy(w.done.PV[:], w.pv[0][:w.pvLen[0]])
		if w.done.Move == engine.NullMove { // cannot happen with a full window; be safe
			w.done.Move = ml.Moves[0]
		}
		w.pub.Store(w.nodes)
		if e.OnInfo != nil {
			e.OnInfo(e.makeInfo(w, w.done))
		}

		if w.done.Move == lastBest {
			stable++
		} else {
			stable = 0
		}
		lastBest = w.done.Move
		if lim.Infinite || e.tm.ponder.Load() {
			continue
		}
		// A forced mate needs no deeper look once found with margin.
		if abs(score) >= MateBound && d >= MateScore-abs(score)+4 {
			break
		}
		if ml.N == 1 && e.tm.timed && d >= 4 {
			break // the only move: do not spend the clock on it
		}
		// Use less time when the best move is stable, more when it changes.
		scale := 130 - 10*min(stable, 5)
		if e.tm.softStop(scale) {
			break
		}
		if e.tm.nodeStop > 0 && e.totalNodes() >= e.tm.nodeStop {
			break
		}
	}
	w.pub.Store(w.nodes)
}
