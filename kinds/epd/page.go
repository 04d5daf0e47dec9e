package epd

import (
	"embed"
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

// The page of an EPD job (/epd/{id}): its suite, limit, state and
// progress, the per-engine table of `arbiter epd` over the results merged
// so far, each position's result per engine, and the job's result block.
// A running job's page streams its "live" part as the other job pages do.
//
// Invariant: every figure the page shows comes from the same Table and
// results as `arbiter status JOB` and --json (farmRunOf of the full
// snapshot), formatted here; the template escapes every text (html/template),
// so engine names and suite ids are shown as given, never as markup.

const pagePath = "/epd/"

//go:embed templates/epd.html
var pageTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "epd", Templates: pageTemplates, Pattern: "GET " + pagePath + "{id}", Followable: true, Render: renderPage})
}

type pageData struct {
	Job   *arbiterv1.Job
	D     *arbiterv1.EpdJob
	State string
	Limit string
	// BatchesDone and Batches for the progress bar (uint64s).
	BatchesDone, Batches uint64
	// Merge is why the results could not be shown ("" when they are).
	Merge     string
	Engines   []engineCell
	Positions []positionRow
	Block     string
}

// engineCell is one engine's row of the per-engine table.
type engineCell struct {
	Name               string
	Spec               *arbiterv1.EngineSpec
	Solved, Searched   int
	Percent, Time      string
	Depth              string
	Nodes              int64
	OnlySolver, Errors int
}

// positionRow is one position with each engine's result (spec order).
type positionRow struct {
	ID, Want string
	Line     int
	Results  []resultCell
}

// resultCell is one engine's search of one position; Done is false while
// its batch is not merged.
type resultCell struct {
	Done, Solved bool
	Move, Solve  string
	Error        string
}

func renderPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	j, err := pr.Job(id, "an EPD job", func(j *arbiterv1.Job) bool { return jobkind.Is(j, FamilyEPD) })
	if err != nil {
		return err
	}
	d := detailOf(j)
	limit, _ := LimitOf(d.GetSpec().GetLimit())
	data := &pageData{Job: j, D: d, State: pr.State(j), Limit: limit.String(), Block: resultblock.Of(j, resultblock.OpenBench, ""),
		BatchesDone: uint64(d.GetBatchesDone()), Batches: uint64(d.GetBatches())}
	if run, err := farmRunOf(j); err != nil {
		data.Merge = err.Error()
	} else {
		data.Engines = engineCells(d.GetSpec(), Table(run.names, run.results))
		data.Positions = positionRows(run)
	}
	pr.Show(fmt.Sprintf("EPD job %s: %s", id, d.GetSpec().GetName()), data, j)
	return nil
}

func engineCells(spec *arbiterv1.EpdSpec, rows []EngineRow) []engineCell {
	cells := make([]engineCell, len(rows))
	for i, r := range rows {
		cells[i] = engineCell{Name: r.Engine, Spec: spec.GetEngines()[i], Solved: r.Solved, Searched: r.Positions,
			Percent: "-", Time: "-", Depth: "-", Nodes: r.Nodes, OnlySolver: r.OnlySolver, Errors: r.Errors}
		if r.Positions > 0 {
			cells[i].Percent = fmt.Sprintf("%.1f%%", 100*float64(r.Solved)/float64(r.Positions))
		}
		if r.Solved > 0 {
			cells[i].Time, cells[i].Depth = fmtSeconds(r.MeanSolveTime), fmt.Sprintf("%.1f", r.MeanSolveDepth)
		}
	}
	return cells
}

func positionRows(run *farmRun) []positionRow {
	rows := make([]positionRow, len(run.cfg.Suite.Positions))
	for i := range rows {
		p := &run.cfg.Suite.Positions[i]
		want := strings.Join(p.Best, " ")
		if len(p.Avoid) > 0 {
			want = strings.TrimSpace(want + " not " + strings.Join(p.Avoid, " "))
		}
		rows[i] = positionRow{ID: p.ID, Line: p.Line, Want: want, Results: make([]resultCell, len(run.names))}
	}
	for _, r := range run.results {
		if r.Position < 0 || r.Position >= len(rows) || r.Engine < 0 || r.Engine >= len(run.names) {
			continue // Merger keeps them in range; a bad one is not shown
		}
		c := resultCell{Done: true, Solved: r.Solved, Move: orDash(r.Move), Error: r.Error}
		if r.Solved {
			c.Solve = fmt.Sprintf("%s depth %d", fmtSeconds(r.SolveTime), r.SolveDepth)
		}
		rows[r.Position].Results[r.Engine] = c
	}
	return rows
}
