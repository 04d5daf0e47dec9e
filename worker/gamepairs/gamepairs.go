// Package gamepairs is the worker side of game pairs, the units that match
// and SPRT tests (kinds/test) and SPSA tunes (kinds/spsa) lease through the
// skeleton they share (coordinator/gamepair is its coordinator side). Both
// kinds import it; its init registers the runner of GamePairBatch units
// (worker.RegisterRunner, made per worker by worker.Runner.New), so a
// worker program without either kind offers no game-pair capability.
//
// A worker plays a leased batch with the match library: its engines made
// ready by the worker (worker.Host.ReadyEngines: installed ones as its
// operator allows them, uploaded ones built and run in the sandbox),
// passed through verify's movegen gate when the test asks (movegengate.go),
// the cores a game takes taken from the worker's budget
// (worker.Host.TakeCores), one pair at a time. It answers with the
// pentanomial, W/D/L, every PGN, each game's outcome and the incidents,
// or with the gate's failure instead of games. An engine the worker
// cannot run (a program that is missing or not executable, an engine that
// refuses an option, tables it lacks) is a refusal: the lease is released
// with cannot_run and the coordinator stops offering the test to this
// worker. Units and results travel in the typed fields WorkUnit.game_pairs
// and SubmitRequest.game_pairs, as in the release before.
package gamepairs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker"
)

func init() {
	worker.RegisterRunner(worker.Runner{
		Unit: func() proto.Message { return &arbiterv1.GamePairBatch{} },
		New:  func(s worker.Settings) (worker.Instance, error) { return newRunner(s), nil },
	})
}

// runner is the game-pair runner on one worker: the worker's embedded
// engine and tables, and the movegen gate's verdicts by build.
type runner struct {
	builtin match.BuiltinFactory
	tables  match.TBProber // nil: none
	gates   gateCache
}

func newRunner(s worker.Settings) *runner {
	r := &runner{builtin: s.Builtin}
	if s.Syzygy != nil {
		r.tables = s.Syzygy
	}
	return r
}

// Capabilities are the game-pair capabilities: batches with each engine's
// own limits and the movegen gate, and the worker's tables given to the
// embedded engine when it has tables.
func (r *runner) Capabilities() []string {
	caps := []string{capability.GamePair, capability.EngineLimits, capability.MovegenGate}
	if r.tables != nil {
		caps = append(caps, capability.EngineSyzygy)
	}
	return caps
}

// Close keeps nothing running: engines live as long as their batch.
func (r *runner) Close() {}

// Run plays a *GamePairBatch: its result (games, or the failed gate), or
// why not (a refusal, or the batch cut short).
func (r *runner) Run(ctx context.Context, host worker.Host, unit proto.Message) (proto.Message, error) {
	b, ok := unit.(*arbiterv1.GamePairBatch)
	if !ok {
		return nil, worker.Refuse(fmt.Errorf("game-pair runner: unit of type %T, want a GamePairBatch", unit))
	}
	log := host.Logger()
	res, elapsed, err := r.play(ctx, host, b)
	var gateFailed *gateFailedError
	switch {
	case errors.As(err, &gateFailed):
		// The coordinator checks the failure and fails the test with it.
		log.Warn("movegen gate failed; answering the batch with the verdict", zap.String("verdict", gateFailed.Error()))
		host.SetElapsed(0)
		return &arbiterv1.GamePairBatchResult{MovegenGateFailure: gateFailed.failure}, nil
	case err != nil:
		return nil, err
	}
	log.Info("batch played", zap.Int("games", len(res.GetPgns())), zap.Duration("elapsed", elapsed),
		zap.Uint64("wins", res.GetWins()), zap.Uint64("draws", res.GetDraws()), zap.Uint64("losses", res.GetLosses()))
	host.CountGames(gamesOf(res))
	host.SetElapsed(elapsed)
	return res, nil
}

// play readies a batch's engines, passes them through their movegen gate
// when the test asks, takes its cores and plays it; elapsed is the play's
// time. An error is a refusal, a failed gate (*gateFailedError), or the
// batch cut short.
func (r *runner) play(ctx context.Context, host worker.Host, b *arbiterv1.GamePairBatch) (res *arbiterv1.GamePairBatchResult, elapsed time.Duration, err error) {
	log := host.Logger()
	leased := []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()}
	engines, done, err := host.ReadyEngines(ctx, leased...)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	if err := r.gates.pass(ctx, leased, engines, log); err != nil {
		return nil, 0, err
	}
	if engines[0] != b.GetEngineA() || engines[1] != b.GetEngineB() {
		b = proto.Clone(b).(*arbiterv1.GamePairBatch)
		b.EngineA, b.EngineB = engines[0], engines[1]
	}
	give, err := host.TakeCores(ctx, engines...)
	if err != nil {
		return nil, 0, err
	}
	defer give()
	start := time.Now()
	res, err = PlayBatchTables(ctx, b, r.builtin, r.tables, func(msg string) { log.Warn(msg) })
	return res, time.Since(start), err
}

// gamesOf counts a played batch's games that reached an end (a result
// other than "*"), and the engine restarts its incidents imply (a crashed,
// hung or unstartable engine process is killed and started again for the
// next game).
func gamesOf(res *arbiterv1.GamePairBatchResult) (games, restarts uint64) {
	for _, pgn := range res.GetPgns() {
		if !strings.Contains(pgn, `[Result "*"]`) {
			games++
		}
	}
	for _, inc := range res.GetIncidents() {
		switch inc.GetKind() {
		case arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, arbiterv1.IncidentKind_INCIDENT_KIND_HANG:
			restarts++
		}
	}
	return games, restarts
}
