package test

import (
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Scheduling is gamepair.Set's (batches in order, lost leases re-issued,
// adoption after a restart); what a test adds is how a batch is rendered
// for a worker.

// referenceNPS is the speed t's clock is meant for.
func (w *Workload) referenceNPS(t *test) uint64 { return w.cfg.Reference(t.spec.GetReferenceNps()) }

// batchProto renders batch idx of t for a worker of speed benchNPS: its
// openings, its seed, and the test's clock scaled to the worker. Caller
// holds mu.
func (w *Workload) batchProto(t *test, idx int, benchNPS uint64) (*arbiterv1.WorkUnit, error) {
	first, n := t.pairsOf(idx)
	s := t.spec
	b := gamepair.Batch{JobID: t.Rec.ID, Idx: idx, FirstPair: first, Pairs: n, Openings: t.Openings,
		EngineA: s.GetEngineA(), EngineB: s.GetEngineB(), TimeControl: s.GetTimeControl(), Adjudication: s.GetAdjudication(),
		Seed: s.GetSeed(), Chess960: s.GetChess960(), TimeMargin: s.GetTimeMargin(), HangTimeout: s.GetHangTimeout(),
		Event: s.GetEvent(), ReferenceNPS: w.referenceNPS(t)}
	return b.WorkUnit(benchNPS), nil
}
