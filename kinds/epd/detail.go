package epd

// The `detail` object of an EPD job in `arbiter status --json` and the
// JSON API (detail.schema.json, registered with the kind's report): the
// job's suite, limit and batch counts, and per engine the positions
// searched and solved so far. For one job (a full snapshot) it also
// carries each engine's totals, the row of `arbiter epd --json`'s table,
// and every per-position result merged so far; a list's snapshot has no
// positions, so a list's detail has neither.

import (
	_ "embed"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

//go:embed detail.schema.json
var detailSchema []byte

// DetailJSON is an EPD job's detail object.
type DetailJSON struct {
	Suite         string             `json:"suite"`
	Limit         string             `json:"limit"`
	Batches       uint32             `json:"batches"`
	BatchesDone   uint32             `json:"batches_done"`
	BatchesLeased uint32             `json:"batches_leased"`
	Engines       []DetailEngineJSON `json:"engines"`
	// One job only: the suite's size and the results merged so far
	// (position by position, engines in spec order).
	Positions int              `json:"positions,omitempty"`
	Results   []ResultJSONLine `json:"results,omitempty"`
}

// DetailEngineJSON is one engine of the job.
type DetailEngineJSON struct {
	Engine        jobreport.EngineJSON `json:"engine"`
	Searched      uint32               `json:"searched"`
	Solved        uint32               `json:"solved"`
	SolvedPercent float64              `json:"solved_percent"`
	// Totals is the engine's row of the table over the results merged
	// so far (one job only).
	Totals *EngineRowJSON `json:"totals,omitempty"`
}

// detailJSON is the detail of j (a *DetailJSON), nil when j carries no
// EPD detail or a full snapshot's results do not merge (the error is the
// report's, not the JSON's: a detail is never half true).
func detailJSON(j *arbiterv1.Job) any {
	d := detailOf(j)
	if d == nil {
		return nil
	}
	spec := d.GetSpec()
	limit, _ := LimitOf(spec.GetLimit())
	o := &DetailJSON{Suite: spec.GetName(), Limit: limit.String(), Batches: d.GetBatches(), BatchesDone: d.GetBatchesDone(),
		BatchesLeased: d.GetBatchesLeased(), Engines: make([]DetailEngineJSON, len(spec.GetEngines()))}
	for i, e := range spec.GetEngines() {
		row := DetailEngineJSON{Engine: jobreport.NewEngineJSON(e)}
		row.Searched, row.Solved = engineCounts(d, i)
		if row.Searched > 0 {
			row.SolvedPercent = 100 * float64(row.Solved) / float64(row.Searched)
		}
		o.Engines[i] = row
	}
	if len(spec.GetPositions()) == 0 {
		return o // a list's snapshot
	}
	run, err := farmRunOf(j)
	if err != nil {
		return nil // not a typed nil: the report omits the detail
	}
	rep := reportJSON(run.cfg, run.names, Table(run.names, run.results), run.results)
	o.Positions, o.Results = rep.Positions, rep.Results
	for i := range o.Engines {
		o.Engines[i].Totals = &rep.Engines[i]
	}
	return o
}
