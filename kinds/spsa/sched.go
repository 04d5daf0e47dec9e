package spsa

import (
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Scheduling is gamepair.Set's (batches in order, lost leases re-issued,
// adoption after a restart); what a tune adds is how a batch is rendered:
// its perturbation of θ as θ stands when the batch is handed out.

// batchProto renders batch idx of t for a worker of speed benchNPS: the
// engines with the batch's perturbation of θ, its openings and seed, the
// clock scaled to the worker. Caller holds mu.
func (w *Workload) batchProto(t *tune, idx int, benchNPS uint64) (*arbiterv1.WorkUnit, error) {
	p, err := t.st.Perturbation(idx)
	if err != nil {
		return nil, err
	}
	plus, minus, err := t.st.Sides(p)
	if err != nil {
		return nil, err
	}
	ps := t.st.Params()
	a, b := proto.Clone(t.engineA).(*arbiterv1.EngineSpec), proto.Clone(t.engineB).(*arbiterv1.EngineSpec)
	a.Options, b.Options = optionsWith(t.engineA.GetOptions(), ps, plus), optionsWith(t.engineB.GetOptions(), ps, minus)
	first, n := t.st.Config().BatchRange(idx)
	s := t.spec
	batch := gamepair.Batch{JobID: t.Rec.ID, Idx: idx, FirstPair: first, Pairs: n, Openings: t.Openings,
		EngineA: a, EngineB: b, TimeControl: s.GetTimeControl(), Adjudication: s.GetAdjudication(),
		Seed: s.GetSeed(), Chess960: s.GetChess960(), TimeMargin: s.GetTimeMargin(), HangTimeout: s.GetHangTimeout(),
		Event: s.GetEvent(), ReferenceNPS: w.referenceNPS(t)}
	for _, p := range ps {
		batch.PGNParams = append(batch.PGNParams, p.Name)
	}
	if batch.Event == "" {
		batch.Event = "Arbiter SPSA " + t.Rec.ID
	}
	return batch.WorkUnit(benchNPS), nil
}
