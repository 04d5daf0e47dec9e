package datagen

// DATAGEN's worker side: a worker plays a leased batch's self-play games
// with the datagen library (the same games `arbiter datagen` plays locally
// from the batch's seed) and submits them as one shard. The runner is
// registered from init, for DatagenBatch units, offering capability
// Datagen; an engine the worker cannot run is a refusal, as for game
// pairs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/capability"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"

	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/worker"
)

func init() {
	worker.RegisterRunner(worker.Runner{
		Unit:       func() proto.Message { return &arbiterv1.DatagenBatch{} },
		Capability: capability.Datagen,
		Run:        runDatagenUnit,
	})
}

// runDatagenUnit is the runner's Run: unit is a *DatagenBatch.
func runDatagenUnit(ctx context.Context, host worker.Host, unit proto.Message) (proto.Message, error) {
	b, ok := unit.(*arbiterv1.DatagenBatch)
	if !ok {
		return nil, worker.Refuse(fmt.Errorf("datagen runner: unit of type %T, want a DatagenBatch", unit))
	}
	if b.GetEngine() == nil {
		return nil, worker.Refuse(errors.New("dataset batch: no engine"))
	}
	// The engine is made ready as a game pair's would be (both sides are
	// it), and a game of it takes the cores its Threads asks for.
	ready, done, err := host.ReadyEngines(ctx, b.GetEngine())
	if err != nil {
		return nil, err
	}
	defer done()
	engine := ready[0]
	give, err := host.TakeCores(ctx, engine)
	if err != nil {
		return nil, err
	}
	defer give()
	res, err := runDatagenBatch(ctx, host, b, engine)
	if err != nil {
		return nil, err // not a typed nil: Run's answer is one or the other
	}
	return res, nil
}

// runDatagenBatch plays batch b with engine (ready to start) and encodes its
// shard.
func runDatagenBatch(ctx context.Context, host worker.Host, b *arbiterv1.DatagenBatch, engine *arbiterv1.EngineSpec) (*arbiterv1.DatagenBatchResult, error) {
	log, settings := host.Logger(), host.Settings()
	start := time.Now()
	newPlayer := func() (match.Player, error) {
		p, err := match.NewPlayer(matchspec.EngineFromProto(engine), settings.Builtin)
		if err != nil {
			return nil, worker.Refuse(err)
		}
		return p, nil
	}
	s := BatchSettings(b)
	if settings.Syzygy != nil {
		s.Tablebase.Tables, s.Tablebase.Warn = settings.Syzygy, func(msg string) { log.Warn(msg) }
	}
	games, err := dg.PlayGames(ctx, newPlayer, s, b.GetSeed(), int(b.GetGames()))
	switch {
	case worker.IsRefusal(err):
		return nil, err
	case err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled):
		// The engine could not start, or played what a dataset cannot use
		// (no score, nodes ignored): another batch would fare no better.
		return nil, worker.Refuse(err)
	case err != nil:
		return nil, err
	}
	var shard bytes.Buffer
	if err := dg.EncodeShard(&shard, games); err != nil {
		return nil, fmt.Errorf("shard not encoded: %w", err)
	}
	log.Info("dataset batch played", zap.Int("games", len(games)), zap.Int("shard_bytes", shard.Len()),
		zap.Duration("elapsed", time.Since(start)))
	return &arbiterv1.DatagenBatchResult{Shard: shard.Bytes()}, nil
}
