package gamepairs

// Playing a batch: the match library plays its game pairs (one pair at a
// time; a unit runs on one slot) and the result is built from them.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/worker"
)

// PlayBatch plays a batch's game pairs (A white first, then B white) with
// builtin making the embedded engine's players, and builds the result:
// pentanomial and W/D/L from engine A's side, every game as PGN and as a
// structured outcome in pair order, incidents. An engine that cannot start
// is a refusal (worker.Refuse); a batch cut short (ctx) is an error.
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
			return nil, worker.Refuse(fmt.Errorf("the test adjudicates by Syzygy tables of %d pieces; this worker's have %d (arbiter worker --syzygy DIR)", rule.Pieces, have))
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
			return nil, worker.Refuse(fmt.Errorf("time control: %w", err))
		}
	}
	for i, e := range []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()} {
		if tc := e.GetTimeControl(); tc != nil {
			l, err := matchspec.LimitsFromProto(tc, 1)
			if err != nil {
				return nil, worker.Refuse(fmt.Errorf("engine %q: time control: %w", e.GetName(), err))
			}
			engines[i].Limits = l
		}
	}
	if err := withEngineTables(&engines, tables); err != nil {
		return nil, worker.Refuse(err)
	}
	var openings []match.Opening
	for i, o := range b.GetOpenings() {
		op, err := matchspec.OpeningFromProto(o, b.GetChess960())
		if err != nil {
			return nil, worker.Refuse(fmt.Errorf("opening %d of the batch: %w", i, err))
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
		return nil, worker.Refuse(err)
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
