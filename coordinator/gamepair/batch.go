package gamepair

import (
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// DefaultReferenceNPS is the bench nps of the development machine (2 cores,
// one thread of the `arbiter bench` search): jobs that name no reference
// speed are scaled to it.
const DefaultReferenceNPS = 2_000_000

// UnitID is the unit id of batch idx of job jobID.
func UnitID(jobID string, idx int) string { return jobID + "." + strconv.Itoa(idx) }

// ParseUnit splits a unit id into its job and batch index. It costs
// O(len(unitID)) whatever the index.
func ParseUnit(unitID string) (jobID string, idx int, ok bool) {
	i := strings.LastIndexByte(unitID, '.')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(unitID[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return unitID[:i], n, true
}

// TimeScale is a job's reference speed over a worker's, clamped to
// [0.1, 10]; 1 when the worker reported no speed.
func TimeScale(refNPS, workerNPS uint64) float64 {
	if workerNPS == 0 {
		return 1
	}
	return min(max(float64(refNPS)/float64(workerNPS), 0.1), 10)
}

// Scaled reports whether a time control's limits are times (scaled per
// worker) and not nodes or depth (never scaled).
func Scaled(tc *arbiterv1.TimeControl) bool {
	switch tc.GetKind().(type) {
	case *arbiterv1.TimeControl_Clock, *arbiterv1.TimeControl_MoveTime:
		return true
	}
	return false
}

// AnyScaled reports whether any engine plays under a scaled time control
// (Scaled), its own or the job's.
func AnyScaled(tc *arbiterv1.TimeControl, engines ...*arbiterv1.EngineSpec) bool {
	for _, e := range engines {
		if Scaled(matchspec.EngineTimeControl(tc, e)) {
			return true
		}
	}
	return false
}

// scaleTimeControl is a copy of tc with its clock or move time multiplied
// by scale; nodes and depth are copied as they are.
func scaleTimeControl(tc *arbiterv1.TimeControl, scale float64) *arbiterv1.TimeControl {
	tc = proto.Clone(tc).(*arbiterv1.TimeControl)
	by := func(d *durationpb.Duration) *durationpb.Duration {
		return durationpb.New(time.Duration(float64(d.AsDuration()) * scale))
	}
	switch k := tc.GetKind().(type) {
	case *arbiterv1.TimeControl_Clock:
		k.Clock.Base, k.Clock.Increment = by(k.Clock.GetBase()), by(k.Clock.GetIncrement())
	case *arbiterv1.TimeControl_MoveTime:
		k.MoveTime = by(k.MoveTime)
	}
	return tc
}

// Batch is one batch of game pairs as a job defines it.
type Batch struct {
	JobID string
	Idx   int
	// FirstPair is the index of the batch's first pair in the job; its
	// pairs play Openings[(FirstPair+i) mod len(Openings)].
	FirstPair, Pairs int
	Openings         []*arbiterv1.Opening // the job's, in the order of play
	EngineA, EngineB *arbiterv1.EngineSpec
	TimeControl      *arbiterv1.TimeControl
	Adjudication     *arbiterv1.Adjudication
	// Seed is the job's; the batch's is derived from it and Idx.
	Seed                    uint64
	Chess960                bool
	TimeMargin, HangTimeout *durationpb.Duration
	Event                   string
	// ReferenceNPS is the speed the time control is meant for.
	ReferenceNPS uint64
	// PGNParams are the engine options each game's PGN records (an SPSA
	// batch's parameters: GamePairBatch.pgn_params).
	PGNParams []string
}

// WorkUnit renders the batch for a worker of speed workerNPS: its
// openings, its seed, and the job's clock scaled to the worker, and each
// engine's own clock (time odds) by the same factor.
func (b *Batch) WorkUnit(workerNPS uint64) *arbiterv1.WorkUnit {
	scale := 1.0
	if AnyScaled(b.TimeControl, b.EngineA, b.EngineB) {
		scale = TimeScale(b.ReferenceNPS, workerNPS)
	}
	var tc *arbiterv1.TimeControl
	if b.TimeControl != nil {
		tc = scaleTimeControl(b.TimeControl, scale)
	}
	engA, engB := b.EngineA, b.EngineB
	for _, e := range []**arbiterv1.EngineSpec{&engA, &engB} {
		if own := (*e).GetTimeControl(); own != nil {
			c := proto.Clone(*e).(*arbiterv1.EngineSpec)
			c.TimeControl = scaleTimeControl(own, scale)
			*e = c
		}
	}
	ops := make([]*arbiterv1.Opening, b.Pairs)
	for i := range ops {
		ops[i] = b.Openings[(b.FirstPair+i)%len(b.Openings)]
	}
	unit := UnitID(b.JobID, b.Idx)
	return &arbiterv1.WorkUnit{UnitId: unit, JobId: b.JobID, Payload: &arbiterv1.WorkUnit_GamePairs{
		GamePairs: &arbiterv1.GamePairBatch{
			TestId: b.JobID, Openings: ops, PairsPerOpening: 1,
			EngineA: engA, EngineB: engB, TimeControl: tc,
			Adjudication: b.Adjudication, Seed: b.Seed*1_000_003 + uint64(b.Idx), Chess960: b.Chess960,
			TimeScale: scale, FirstPair: uint32(b.FirstPair), TimeMargin: b.TimeMargin, HangTimeout: b.HangTimeout,
			Event: b.Event, PgnParams: b.PGNParams,
		}}}
}
