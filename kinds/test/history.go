package test

import (
	"context"
	"fmt"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/sprt"
)

// A test's history is its statistics after each accepted batch, in
// acceptance order (the order the SPRT saw them), for charts of the LLR and
// of Elo against games.
//
// It is built once from the stored batches, on first request, and then
// extended by each accepted batch, so a page asking again costs nothing.
// It keeps at most 2 × MaxHistoryPoints points: every stride-th batch,
// the stride doubling (and every other point dropped) when it fills up,
// plus the latest batch; a long test's chart is thinned evenly and its
// memory stays bounded whatever the number of batches (at most about 20 KB
// a test, kept after the test ends once a page asked for it).

// MaxHistoryPoints is about the number of points a history keeps (between
// it and twice it, plus the latest).
const MaxHistoryPoints = 256

type history struct {
	stride int // batches between kept points
	seen   int // batches added
	points []testview.HistoryPoint
	last   testview.HistoryPoint // the latest batch's point
}

func newHistory(batches int) *history {
	h := &history{stride: 1}
	for batches/h.stride > 2*MaxHistoryPoints {
		h.stride *= 2
	}
	return h
}

// due reports whether the next batch added is kept (so its LLR is needed).
func (h *history) due() bool { return (h.seen+1)%h.stride == 0 }

func (h *history) add(p testview.HistoryPoint) {
	h.seen++
	h.last = p
	if h.seen%h.stride != 0 {
		return
	}
	h.points = append(h.points, p)
	if len(h.points) > 2*MaxHistoryPoints {
		// Keep the points at multiples of twice the stride: the odd
		// indexes (point i is batch (i+1)×stride).
		kept := h.points[:0]
		for i := 1; i < len(h.points); i += 2 {
			kept = append(kept, h.points[i])
		}
		h.points = kept
		h.stride *= 2
	}
}

// list is the history with its origin and its latest point.
func (h *history) list() []testview.HistoryPoint {
	out := make([]testview.HistoryPoint, 0, len(h.points)+2)
	out = append(out, testview.HistoryPoint{})
	out = append(out, h.points...)
	if h.seen > 0 && h.seen%h.stride != 0 {
		out = append(out, h.last)
	}
	return out
}

// pointOf is the statistics of cumulative results r; llr is the SPRT's LLR
// for them (0 without SPRT).
func pointOf(r sprt.Results, penta sprt.Pentanomial, llr float64) testview.HistoryPoint {
	p := testview.HistoryPoint{Games: r.Games(), LLR: llr}
	if p.Games > 0 {
		r.Pentanomial = &penta
		fe := sprt.FixedGamesElo(r)
		p.Elo, p.EloLow, p.EloHigh = gamepair.Finite(fe.Elo), gamepair.Finite(fe.CI95[0]), gamepair.Finite(fe.CI95[1])
	}
	return p
}

// History returns test jobID's statistics after its batches, thinned as
// described above, the origin first.
func (w *Workload) History(ctx context.Context, jobID string) ([]testview.HistoryPoint, error) {
	w.Mu.Lock()
	t := w.Jobs[jobID]
	if t == nil {
		w.Mu.Unlock()
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown test %s", apierr.Q(jobID))
	}
	if t.hist != nil {
		defer w.Mu.Unlock()
		return t.hist.list(), nil
	}
	w.Mu.Unlock()

	// Build it holding commitMu: no batch is accepted meanwhile, so the
	// history kept is exactly what was counted and later batches extend
	// it. This holds results back once per test, for one read of its
	// batches (a few ms for 10,000 games).
	w.CommitMu.Lock()
	defer w.CommitMu.Unlock()
	w.Mu.Lock()
	if t.hist != nil {
		defer w.Mu.Unlock()
		return t.hist.list(), nil
	}
	var params *sprt.Params
	if t.seq != nil {
		p := t.seq.Params
		params = &p
	}
	done := t.Done
	w.Mu.Unlock()
	batches, err := StoredBatches(ctx, w.store, jobID)
	if err != nil {
		return nil, apierr.Store(err)
	}
	h, err := buildHistory(batches, params)
	if err != nil {
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "test %s: history: %v", jobID, err)
	}
	w.Mu.Lock()
	defer w.Mu.Unlock()
	// A batch skipped at load (LoadProblems) is in the store but not
	// counted: such a history is shown but not kept.
	if len(batches) == done {
		t.hist = h
	}
	return h.list(), nil
}

// buildHistory replays stored batches in acceptance order.
func buildHistory(batches []Batch, params *sprt.Params) (*history, error) {
	h := newHistory(len(batches))
	var total sprt.Results
	var penta sprt.Pentanomial
	for i := range batches {
		b := &batches[i]
		gamepair.AddCounts(&total, &penta, b.Penta, b.Wins, b.Draws, b.Losses)
		llr := 0.0
		if params != nil && (h.due() || i == len(batches)-1) {
			var err error
			if llr, err = sprt.LLR(*params, total); err != nil {
				return nil, fmt.Errorf("batch %d: %w", batches[i].Idx, err)
			}
		}
		h.add(pointOf(total, penta, llr))
	}
	return h, nil
}
