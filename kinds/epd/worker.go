package epd

// The worker side of EPD suites on the farm: a worker searches a leased
// batch's positions with the batch's engine (made ready by the Host, as a
// game's engines are) with Solve, the code `arbiter epd` runs locally, and
// returns one EpdPositionResult per position. The runner is registered
// from init for EpdBatch units, offering CapabilityEPD. The batch came from
// the coordinator and is checked like any peer's input: its positions are
// parsed again and bounded in number.

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/worker"
)

func init() {
	worker.RegisterRunner(worker.Runner{
		Unit:       func() proto.Message { return &arbiterv1.EpdBatch{} },
		Capability: CapabilityEPD,
		Run:        runBatchUnit,
	})
}

// checkBatch parses a leased batch's positions and limit again.
func checkBatch(b *arbiterv1.EpdBatch) ([]Position, Limit, error) {
	switch n := len(b.GetPositions()); {
	case b.GetEngineSpec() == nil:
		return nil, Limit{}, errors.New("epd batch: no engine")
	case n == 0 || n > MaxBatchPositions:
		return nil, Limit{}, fmt.Errorf("epd batch: %d positions, want 1 to %d", n, MaxBatchPositions)
	case len(b.GetPositionSpecs()) != n:
		return nil, Limit{}, fmt.Errorf("epd batch: %d position indexes but %d positions", n, len(b.GetPositionSpecs()))
	}
	limit, err := LimitOf(b.GetLimit())
	if err != nil {
		return nil, Limit{}, fmt.Errorf("epd batch: %w", err)
	}
	positions := make([]Position, len(b.PositionSpecs))
	for i, wp := range b.PositionSpecs {
		if positions[i], err = positionOf(wp); err != nil {
			return nil, Limit{}, fmt.Errorf("epd batch: position %d: %w", b.Positions[i], err)
		}
	}
	return positions, limit, nil
}

// runBatchUnit is the runner's Run: unit is an *EpdBatch.
func runBatchUnit(ctx context.Context, host worker.Host, unit proto.Message) (proto.Message, error) {
	b, ok := unit.(*arbiterv1.EpdBatch)
	if !ok {
		return nil, worker.Refuse(fmt.Errorf("epd runner: unit of type %T, want an EpdBatch", unit))
	}
	positions, limit, err := checkBatch(b)
	if err != nil {
		return nil, worker.Refuse(err)
	}
	ready, done, err := host.ReadyEngines(ctx, b.EngineSpec)
	if err != nil {
		return nil, err
	}
	defer done()
	give, err := host.TakeCores(ctx, ready[0])
	if err != nil {
		return nil, err
	}
	defer give()
	p, err := match.NewPlayer(matchspec.EngineFromProto(ready[0]), host.Settings().Builtin)
	if err != nil {
		return nil, worker.Refuse(err)
	}
	defer p.Quit()
	res := &arbiterv1.EpdResult{Batch: b.Batch, Engine: b.Engine, Positions: make([]*arbiterv1.EpdPositionResult, len(positions))}
	for i := range positions {
		r, err := Solve(ctx, p, &positions[i], limit)
		if err != nil {
			return nil, err // ctx ended: the batch is leased again
		}
		r.Position = int(b.Positions[i])
		res.Positions[i] = ResultProto(r)
	}
	host.Logger().Info("epd batch searched", zap.Uint32("batch", b.Batch), zap.Uint32("engine", b.Engine), zap.Int("positions", len(positions)))
	return res, nil
}
