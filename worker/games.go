package worker

// Game-pair batches: a worker plays a batch of a match or SPRT test with the
// match library (one pair at a time per slot; slots = cores, and a game
// whose engines ask for more than one thread takes that many cores from the
// worker's budget), and reports the pentanomial, W/D/L, every PGN and the
// incidents. An engine the worker cannot run (a UCI binary that is missing
// or not executable, an engine that refuses an option) is a refusal: the
// lease is released with cannot_run and the coordinator stops offering the
// test to this worker.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// DefaultBenchDepth is the start-up bench's depth: about 0.1 s on one core.
const DefaultBenchDepth = 7

type gameRunner struct {
	nps       uint64
	signature uint64

	mu   sync.Mutex
	cond *sync.Cond
	used int // cores taken by running games
}

// runBench measures the worker's speed once, before it registers.
func (w *Worker) runBench() {
	g := &w.games
	if g.nps != 0 {
		return
	}
	if w.cfg.BenchNPS > 0 {
		g.nps = w.cfg.BenchNPS
		return
	}
	depth := w.cfg.BenchDepth
	if depth < 0 {
		return
	}
	if depth == 0 {
		depth = DefaultBenchDepth
	}
	res, err := search.Bench(depth, nil)
	if err != nil {
		w.log.Warn("bench failed; reporting no speed", zap.Error(err))
		return
	}
	g.nps, g.signature = uint64(res.NPS()), uint64(res.Nodes)
	w.log.Info("bench", zap.Int("depth", depth), zap.Uint64("nodes", g.signature), zap.Uint64("nps", g.nps),
		zap.Duration("elapsed", res.Elapsed))
}

// BenchNPS is the speed the worker reports (after Run started).
func (w *Worker) BenchNPS() uint64 { return w.games.nps }

func (w *Worker) gameCapabilities() []string {
	caps := []string{capability.GamePair, capability.EngineLimits, capability.MovegenGate}
	if w.cfg.Builtin != nil {
		caps = append(caps, capability.Builtin)
	}
	if w.cfg.Syzygy != nil {
		caps = append(caps, capability.EngineSyzygy)
		for n := 3; n <= w.cfg.Syzygy.MaxPieces(); n++ {
			caps = append(caps, capability.Syzygy(n))
		}
	}
	return caps
}

// acquire takes n cores of the worker's budget (Threads), waiting for
// running games to give them back; n is capped at the budget.
func (g *gameRunner) acquire(ctx context.Context, n, budget int) bool {
	n = min(max(n, 1), budget)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	for g.used+n > budget {
		if ctx.Err() != nil {
			return false
		}
		g.cond.Wait()
	}
	g.used += n
	return true
}

func (g *gameRunner) releaseCores(n, budget int) {
	n = min(max(n, 1), budget)
	g.mu.Lock()
	g.used -= n
	if g.cond != nil {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

// takeCores takes the cores one game of engines uses (the most threads
// any of them asks for) from the worker's budget; give gives them back.
func (w *Worker) takeCores(ctx context.Context, engines []*arbiterv1.EngineSpec) (give func(), err error) {
	threads := 1
	for _, e := range engines {
		threads = max(threads, threadsOf(e))
	}
	if !w.games.acquire(ctx, threads, w.cfg.Threads) {
		return nil, errStopping
	}
	return func() { w.games.releaseCores(threads, w.cfg.Threads) }, nil
}

// errStopping ends a unit the worker stopped before it could start.
var errStopping = errors.New("worker stopping")

// threadsOf is the number of threads a game of e uses.
func threadsOf(e *arbiterv1.EngineSpec) int {
	for k, v := range e.GetOptions() {
		if strings.EqualFold(k, "Threads") {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n
			}
		}
	}
	return 1
}

// cannotRun says why this worker cannot play an engine, or "".
func cannotRun(e *arbiterv1.EngineSpec, builtin match.BuiltinFactory) string {
	if matchspec.IsBuiltin(e) {
		if builtin == nil {
			return fmt.Sprintf("engine %q: the embedded engine is not in this worker", e.GetName())
		}
		return ""
	}
	if _, err := engineproc.LookPath(e.GetCommand(), e.GetDir()); err != nil {
		return fmt.Sprintf("engine %q: command %q is not present or not executable on this worker: %v", e.GetName(), e.GetCommand(), err)
	}
	return ""
}

// allowedEngines replaces each installed engine (cmd=) with the one the
// worker's operator allows under that name: the client chooses which
// engine, never the program, its arguments or its working directory. An
// error (a refusal) says what is not allowed. The embedded engine and
// uploaded ones (run in the sandbox) pass as they are; engines is not
// changed.
func allowedEngines(engines []*arbiterv1.EngineSpec, allowed *engineallow.List) ([]*arbiterv1.EngineSpec, error) {
	out := slices.Clone(engines)
	for i, e := range engines {
		if e == nil || matchspec.IsBuiltin(e) || e.GetArtifact() != nil {
			continue
		}
		a, err := allowed.Resolve(e.GetCommand(), e.GetArgs(), e.GetDir())
		if err == nil {
			err = a.CheckOptions(e.GetOptions())
		}
		if err != nil {
			return nil, &refusalError{fmt.Errorf("engine %q: %v", e.GetName(), err)}
		}
		r := proto.Clone(e).(*arbiterv1.EngineSpec)
		r.Command, r.Args, r.Dir = a.Cmd, slices.Clone(a.Args), a.Dir
		out[i] = r
	}
	return out, nil
}

// refuseUnit releases a lease the worker cannot run, saying so.
func (w *Worker) refuseUnit(ctx context.Context, leaseID, reason string) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w.mu.Lock()
	w.stats.Released++
	w.mu.Unlock()
	if _, err := w.worker.Release(cctx, &arbiterv1.ReleaseRequest{WorkerId: w.workerID(), LeaseId: leaseID, Reason: reason, CannotRun: true}); err != nil {
		w.log.Warn("release failed", zap.String("lease_id", leaseID), zap.Error(err))
	}
}

// readyEngines makes engines ready to play for a unit of job jobID (the
// Host's ReadyEngines, whose doc says what that takes): it returns them
// in order, ready to start, and done, which unpins the uploaded ones. An
// error is a refusal, or errStopping.
func (w *Worker) readyEngines(ctx context.Context, jobID string, engines []*arbiterv1.EngineSpec, log *zap.Logger) ([]*arbiterv1.EngineSpec, func(), error) {
	engines, err := allowedEngines(engines, w.cfg.Engines)
	if err != nil {
		return nil, nil, err
	}
	engines, done, err := w.prepareArtifacts(ctx, jobID, engines, log)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range engines {
		if why := cannotRun(e, w.cfg.Builtin); why != "" {
			done()
			return nil, nil, &refusalError{errors.New(why)}
		}
	}
	return engines, done, nil
}

// runGames plays one leased batch and puts the result in the outbox.
func (w *Worker) runGames(ctx, bg context.Context, h *held, b *arbiterv1.GamePairBatch, log *zap.Logger) {
	res, elapsed, err := w.playGames(ctx, h.jobID, b, log)
	var gateFailed *gateFailedError
	switch {
	case errors.As(err, &gateFailed):
		w.answerGateFailure(h, gateFailed, log)
		return
	case err != nil:
		w.giveBack(bg, h, err, log)
		return
	}
	log.Info("batch played", zap.Int("games", len(res.GetPgns())), zap.Duration("elapsed", elapsed),
		zap.Uint64("wins", res.GetWins()), zap.Uint64("draws", res.GetDraws()), zap.Uint64("losses", res.GetLosses()))
	w.metrics.batchPlayed(res)
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, elapsed: elapsed,
		answer: &arbiterv1.SubmitRequest{Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: res}}}, 0)
}

// playGames readies a batch's engines, passes them through their movegen
// gate when the test asks (movegengate.go), takes its cores and plays it.
// An error is a refusal, a failed gate (*gateFailedError), or the batch
// cut short.
func (w *Worker) playGames(ctx context.Context, jobID string, b *arbiterv1.GamePairBatch, log *zap.Logger) (*arbiterv1.GamePairBatchResult, time.Duration, error) {
	leased := []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()}
	engines, done, err := w.readyEngines(ctx, jobID, leased, log)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	if err := w.passMovegenGates(ctx, leased, engines, log); err != nil {
		return nil, 0, err
	}
	if engines[0] != b.GetEngineA() || engines[1] != b.GetEngineB() {
		b = proto.Clone(b).(*arbiterv1.GamePairBatch)
		b.EngineA, b.EngineB = engines[0], engines[1]
	}
	give, err := w.takeCores(ctx, engines)
	if err != nil {
		return nil, 0, err
	}
	defer give()
	start := time.Now()
	var tables match.TBProber
	if w.cfg.Syzygy != nil {
		tables = w.cfg.Syzygy
	}
	res, err := PlayBatchTables(ctx, b, w.cfg.Builtin, tables, func(msg string) { log.Warn(msg) })
	return res, time.Since(start), err
}

// prepareArtifacts fetches, builds and verifies the uploaded engines
// (and nets) among engines and returns them as programs to start (in the
// sandbox); done unpins them. An error is a refusal, or errStopping.
func (w *Worker) prepareArtifacts(ctx context.Context, jobID string, engines []*arbiterv1.EngineSpec, log *zap.Logger) ([]*arbiterv1.EngineSpec, func(), error) {
	needs := func(e *arbiterv1.EngineSpec) bool { return e.GetArtifact() != nil || e.GetNet() != nil }
	if !slices.ContainsFunc(engines, needs) {
		return engines, func() {}, nil
	}
	if w.arts == nil {
		return nil, nil, &refusalError{errors.New("this worker runs no uploaded engines and keeps no nets (its operator gave no --data)")}
	}
	out := slices.Clone(engines)
	var preps []*prepared
	done := func() {
		for _, p := range preps {
			w.arts.done(p)
		}
	}
	for i, e := range engines {
		if !needs(e) {
			continue
		}
		p, err := w.arts.prepare(ctx, w.workerID(), jobID, e)
		if err != nil {
			done()
			if ctx.Err() != nil {
				return nil, nil, errStopping
			}
			log.Warn("uploaded engine refused", zap.Error(err))
			why := err.Error()
			var r *refusal
			if errors.As(err, &r) {
				why = r.reason()
			}
			return nil, nil, &refusalError{errors.New(why)}
		}
		preps = append(preps, p)
		out[i] = p.spec
	}
	return out, done, nil
}

// refusalError is a unit this worker cannot run (an engine it cannot
// start, a rule it cannot apply); Refuse makes one.
type refusalError struct{ err error }

func (e *refusalError) Error() string { return e.err.Error() }
func (e *refusalError) Unwrap() error { return e.err }

// PlayBatch plays a batch's game pairs (A white first, then B white) with
// builtin making the embedded engine's players, and builds the result:
// pentanomial and W/D/L from engine A's side, every game as PGN and as a
// structured outcome in pair order, incidents. An engine that cannot start
// is a *refusalError; a batch cut short (ctx) is an error.
func PlayBatch(ctx context.Context, b *arbiterv1.GamePairBatch, builtin match.BuiltinFactory) (*arbiterv1.GamePairBatchResult, error) {
	return PlayBatchTables(ctx, b, builtin, nil, nil)
}

// withEngineTables gives engines that probe Syzygy tables in search
// (syzygy_pieces) the worker's: their directory and the pieces asked.
// Tables that are not a directory's (a test's prober) count as none.
func withEngineTables(engines *[2]match.EngineConfig, tables match.TBProber) error {
	dir, have := "", 0
	if d, ok := tables.(interface{ Dir() string }); ok {
		dir, have = d.Dir(), tables.MaxPieces()
	}
	for i := range engines {
		e, err := engines[i].WithSyzygy(dir, have)
		if err != nil {
			return err
		}
		engines[i] = e
	}
	return nil
}

// PlayBatchTables is PlayBatch with the worker's Syzygy tables (nil:
// none), which a batch adjudicated by tablebases needs (a worker without
// tables of its pieces refuses it); warn hears of absent tables, once per
// table and batch.
func PlayBatchTables(ctx context.Context, b *arbiterv1.GamePairBatch, builtin match.BuiltinFactory, tables match.TBProber, warn func(string)) (*arbiterv1.GamePairBatchResult, error) {
	adj := matchspec.AdjudicationFromProto(b.GetAdjudication())
	var tb *match.TablebaseAdjudication
	if rule := adj.Tablebase; rule.Pieces > 0 {
		if tables == nil || tables.MaxPieces() < rule.Pieces {
			have := 0
			if tables != nil {
				have = tables.MaxPieces()
			}
			return nil, &refusalError{fmt.Errorf("the test adjudicates by Syzygy tables of %d pieces; this worker's have %d (arbiter worker --syzygy DIR)", rule.Pieces, have)}
		}
		tb = &match.TablebaseAdjudication{TBRule: rule, Tables: tables, Warn: warn}
	}
	// Limits come scaled to this worker (time_scale): the test's, and an
	// engine's own that replaces them for it. The test may have none when
	// both engines have their own.
	engines := [2]match.EngineConfig{matchspec.EngineFromProto(b.GetEngineA()), matchspec.EngineFromProto(b.GetEngineB())}
	var lim match.Limits
	if tc := b.GetTimeControl(); tc != nil || b.GetEngineA().GetTimeControl() == nil || b.GetEngineB().GetTimeControl() == nil {
		var err error
		if lim, err = matchspec.LimitsFromProto(tc, 1); err != nil {
			return nil, &refusalError{fmt.Errorf("time control: %w", err)}
		}
	}
	for i, e := range []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()} {
		if tc := e.GetTimeControl(); tc != nil {
			l, err := matchspec.LimitsFromProto(tc, 1)
			if err != nil {
				return nil, &refusalError{fmt.Errorf("engine %q: time control: %w", e.GetName(), err)}
			}
			engines[i].Limits = l
		}
	}
	if err := withEngineTables(&engines, tables); err != nil {
		return nil, &refusalError{err}
	}
	var openings []match.Opening
	for i, o := range b.GetOpenings() {
		op, err := matchspec.OpeningFromProto(o, b.GetChess960())
		if err != nil {
			return nil, &refusalError{fmt.Errorf("opening %d of the batch: %w", i, err)}
		}
		for range max(b.GetPairsPerOpening(), 1) {
			openings = append(openings, op)
		}
	}
	site, _ := os.Hostname()
	cfg := match.MatchConfig{
		Engines: engines,
		Limits:  lim,
		Game: match.GameConfig{Adjudication: adj, Tablebase: tb,
			TimeMargin: b.GetTimeMargin().AsDuration(), HangTimeout: b.GetHangTimeout().AsDuration()},
		FirstPair:   int(b.GetFirstPair()),
		Concurrency: 1,
		PGNOptions:  match.PGNOptions{Event: b.GetEvent(), Site: site},
		Builtin:     builtin,
	}
	if cfg.Game.HangTimeout <= 0 {
		cfg.Game.HangTimeout = 30 * time.Second
	}
	cfg.PGNOptions.Params = match.ParamsOf(cfg.Engines, b.GetPgnParams())
	if cfg.PGNOptions.Event == "" {
		cfg.PGNOptions.Event = "Arbiter test " + b.GetTestId()
	}
	t, pairs, err := match.PlayPairs(ctx, cfg, openings)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &refusalError{err}
	}
	if len(pairs) != len(openings) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("played %d of %d pairs", len(pairs), len(openings))
	}
	sort.Slice(pairs, func(i, k int) bool { return pairs[i].Index < pairs[k].Index })
	p := t.Results.Pentanomial
	if p == nil {
		return nil, errors.New("no pentanomial counted")
	}
	res := &arbiterv1.GamePairBatchResult{
		Pentanomial: &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])},
		Wins:        uint64(t.Results.Wins), Draws: uint64(t.Results.Draws), Losses: uint64(t.Results.Losses),
		Overruns: uint64(t.Overruns),
	}
	var buf bytes.Buffer
	for pi, pr := range pairs {
		for gi, g := range pr.Games {
			buf.Reset()
			bw := bufio.NewWriter(&buf)
			if err := match.WritePGN(bw, g, cfg.PGNOptions); err != nil {
				return nil, fmt.Errorf("PGN: %w", err)
			}
			bw.Flush()
			res.Pgns = append(res.Pgns, buf.String())
			res.Games = append(res.Games, matchspec.OutcomeToProto(2*pi+gi, g))
			for _, inc := range g.Incidents {
				k := incidentKind(inc.Kind)
				if k == arbiterv1.IncidentKind_INCIDENT_KIND_UNSPECIFIED {
					continue
				}
				detail := inc.String()
				// The sandbox said which limit killed an uploaded engine.
				if v, ok := sandbox.Verdict(detail); ok {
					k, detail = arbiterv1.IncidentKind_INCIDENT_KIND_LIMIT, "killed by the worker's limits: "+v
				}
				res.Incidents = append(res.Incidents, &arbiterv1.Incident{Kind: k, OpeningIndex: uint32(pr.Opening.ID),
					GameIndex: uint32(2*pi + gi), Engine: inc.Player, Detail: detail})
			}
		}
	}
	return res, nil
}

func incidentKind(k match.IncidentKind) arbiterv1.IncidentKind {
	switch k {
	case match.IncTimeLoss:
		return arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS
	case match.IncCrash, match.IncStartup:
		return arbiterv1.IncidentKind_INCIDENT_KIND_CRASH
	case match.IncIllegal:
		return arbiterv1.IncidentKind_INCIDENT_KIND_ILLEGAL_MOVE
	case match.IncHang:
		return arbiterv1.IncidentKind_INCIDENT_KIND_HANG
	case match.IncOverrun:
		return arbiterv1.IncidentKind_INCIDENT_KIND_UNSPECIFIED // counted in overruns
	case match.IncRestart:
		return arbiterv1.IncidentKind_INCIDENT_KIND_UNSPECIFIED // the crash or hang before it is the incident
	}
	return arbiterv1.IncidentKind_INCIDENT_KIND_OTHER
}
