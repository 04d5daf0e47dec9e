package worker

// DATAGEN batches: a worker plays a batch's self-play games with the
// datagen package (the same batches `arbiter datagen` plays locally, from
// the batch's seed) and submits them as one shard. An engine the worker
// cannot run is a refusal, as for game pairs.

import (
	"bytes"
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// DatagenBatchSettings converts a leased batch into the settings it is
// played with. The datagen kind sets it from its init (kinds/datagen
// owns the conversion and this floor may not import it); nil: this binary
// has no datagen kind, and its batches are refused. It goes when the
// worker's runner registry takes the kind's whole runner.
var DatagenBatchSettings func(*arbiterv1.DatagenBatch) datagen.Settings

// runPlugin runs a unit of a kind that plugs into the coordinator, by the
// type of its payload.
func (w *Worker) runPlugin(ctx, bg context.Context, h *held, p *anypb.Any, log *zap.Logger) {
	b := &arbiterv1.DatagenBatch{}
	if !p.MessageIs(b) {
		log.Warn("unit kind not supported; releasing", zap.String("type", p.GetTypeUrl()))
		w.refuseUnit(bg, h.leaseID, "unit type "+p.GetTypeUrl()+" is not supported by this worker")
		return
	}
	if DatagenBatchSettings == nil {
		w.refuseUnit(bg, h.leaseID, "unit type "+p.GetTypeUrl()+" is not supported by this worker (no datagen kind installed)")
		return
	}
	if err := p.UnmarshalTo(b); err != nil {
		w.release(bg, h.leaseID, "malformed unit: "+err.Error())
		return
	}
	w.runDatagen(ctx, bg, h, b, log)
}

// runDatagen plays one leased dataset batch and puts its shard in the
// outbox.
func (w *Worker) runDatagen(ctx, bg context.Context, h *held, b *arbiterv1.DatagenBatch, log *zap.Logger) {
	// The engine is made ready as a game pair's would be (both sides are
	// it).
	pair, done, ok := w.readyEngines(ctx, bg, h, &arbiterv1.GamePairBatch{EngineA: b.GetEngine(), EngineB: b.GetEngine()}, log)
	if !ok {
		return
	}
	defer done()
	e := pair.GetEngineA()
	threads := threadsOf(e)
	if !w.games.acquire(ctx, threads, w.cfg.Threads) {
		w.release(bg, h.leaseID, "worker stopping")
		return
	}
	defer w.games.releaseCores(threads, w.cfg.Threads)
	start := time.Now()
	newPlayer := func() (match.Player, error) {
		p, err := match.NewPlayer(matchspec.EngineFromProto(e), w.cfg.Builtin)
		if err != nil {
			return nil, &refusalError{err}
		}
		return p, nil
	}
	s := DatagenBatchSettings(b)
	if w.cfg.Syzygy != nil {
		s.Tablebase.Tables, s.Tablebase.Warn = w.cfg.Syzygy, func(msg string) { log.Warn(msg) }
	}
	games, err := datagen.PlayGames(ctx, newPlayer, s, b.GetSeed(), int(b.GetGames()))
	elapsed := time.Since(start)
	var refusal *refusalError
	switch {
	case errors.As(err, &refusal) || (err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled)):
		// The engine could not start, or played what a dataset cannot use
		// (no score, nodes ignored): another batch would fare no better.
		log.Warn("cannot run dataset; refusing the batch", zap.Error(err))
		w.refuseUnit(bg, h.leaseID, err.Error())
		return
	case err != nil:
		log.Info("batch not finished; releasing lease", zap.Error(err))
		w.release(bg, h.leaseID, err.Error())
		return
	}
	var shard bytes.Buffer
	if err := datagen.EncodeShard(&shard, games); err != nil {
		log.Error("batch not encoded; releasing", zap.Error(err))
		w.release(bg, h.leaseID, "shard not encoded: "+err.Error())
		return
	}
	res, err := anypb.New(&arbiterv1.DatagenBatchResult{Shard: shard.Bytes()})
	if err != nil {
		w.release(bg, h.leaseID, err.Error())
		return
	}
	log.Info("dataset batch played", zap.Int("games", len(games)), zap.Int("shard_bytes", shard.Len()), zap.Duration("elapsed", elapsed))
	w.queueResult(&result{leaseID: h.leaseID, unitID: h.unitID, jobID: h.jobID, plugin: res, elapsed: elapsed}, 0)
}
