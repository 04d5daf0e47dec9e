package test

import (
	"embed"
	"fmt"
	"html/template"
	"net/url"
	"strconv"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The page of a test (/tests/{id}): its engines and openings, its status
// with the fastchess-style report and the SPRT's verdict, its result
// block, its LLR and Elo charts from the workload's history, its workers
// and incidents, and the forms that change, stop, resume and copy it (the
// layout's parts, from the page kit of coordinator/web). Its games pages
// and PGN downloads are games.go's, the forms' POST routes manage.go's.

//go:embed templates/test.html
var pageTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "test", Templates: pageTemplates, Pattern: "GET /tests/{id}", Followable: true, Render: renderPage})
}

// pageData is what templates/test.html reads as .Page.
type pageData struct {
	Job     *arbiterv1.Job
	State   string
	Pending bool   // waits for an approver before workers play it
	Report  string // the fastchess-style report, as arbiter status prints it
	Block   any
	Diff    any
	Verdict string
	Params  *sprt.Params
	// TakeAlpha is a take's alpha in a group of takes (alpha / takes).
	TakeAlpha   float64
	LLRChart    template.HTML
	EloChart    template.HTML
	WorkerTable any
	// Sigs are the distinct bench signatures of the workers that played
	// (a difference means different engine builds).
	Sigs      []string
	Events    []testview.Event
	EventsAll int
	// Actions are the forms that change, stop, resume and copy the test
	// (nil: the viewer may do none of it).
	Actions any
}

// maxEventsShown bounds the incidents a test page lists (newest first).
const maxEventsShown = 200

func renderPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	j, err := pr.TestJob(id)
	if err != nil {
		return err
	}
	wl, _ := pr.Workload(Kind)
	w, ok := wl.(*Workload)
	if !ok {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(id))
	}
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	d := &pageData{Job: j, State: pr.State(j), Pending: j.GetState() == arbiterv1.JobState_JOB_STATE_PENDING,
		Actions: pr.TestActions(j), Block: pr.Block(j), Diff: pr.EngineDiff(spec)}
	d.Params, d.Verdict = verdict(j)
	if mp.GetGames() > 0 {
		p := mp.GetPentanomial()
		penta := sprt.Pentanomial{int64(p.GetLl()), int64(p.GetLd()), int64(p.GetDd()), int64(p.GetWd()), int64(p.GetWw())}
		d.Report = sprt.FormatReport(sprt.Report{First: spec.GetEngineA().GetName(), Second: spec.GetEngineB().GetName(),
			Details: limits(spec) + ", " + spec.GetBookName(), SPRT: d.Params,
			Results: sprt.Results{Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()), Pentanomial: &penta}})
	}
	if spec.GetGroup() != "" {
		d.TakeAlpha = spec.GetSprt().GetAlpha() / float64(max(spec.GetGroupTakes(), 1))
	}
	hist, err := w.History(pr.R.Context(), id)
	if err != nil {
		return err
	}
	if d.Params != nil {
		d.LLRChart = web.LLRChart(hist, mp.GetLowerBound(), mp.GetUpperBound())
	}
	d.EloChart = web.EloChart(hist)
	d.WorkerTable, d.Sigs = pr.GameWorkers("test-workers", "test", mp.GetWorkers())
	evs, err := w.Events(pr.R.Context(), id)
	if err != nil {
		return err
	}
	d.EventsAll = len(evs)
	for i := len(evs) - 1; i >= 0 && len(d.Events) < maxEventsShown; i-- {
		d.Events = append(d.Events, readableEvent(evs[i]))
	}
	pr.Show(fmt.Sprintf("Test %s: %s vs %s", id, spec.GetEngineA().GetName(), spec.GetEngineB().GetName()), d, j)
	pr.DashboardVars("arbiter-sprt", url.Values{"var-test": {id}})
	return nil
}

// verdict is an SPRT test's design and where it stands in words (nil and
// "" for a match).
func verdict(j *arbiterv1.Job) (*sprt.Params, string) {
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	sp := spec.GetSprt()
	if j.GetKind() != jobkind.SPRT {
		return nil, ""
	}
	m, _ := sprt.ParseModel(sp.GetModel())
	params := &sprt.Params{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: m}
	switch mp.GetSprtState() {
	case string(sprt.Accepted):
		return params, "H1 accepted"
	case string(sprt.Rejected):
		return params, "H0 accepted (H1 rejected)"
	}
	v := "no decision yet"
	if j.GetState() == arbiterv1.JobState_JOB_STATE_DONE && spec.GetGames() > 0 {
		v = fmt.Sprintf("no decision: the cap of %d games was reached", spec.GetGames())
	}
	if mp.GetStoppedByHand() {
		v = "no verdict: " + jobreport.StoppedByHandNote
	}
	return params, v
}

// readableEvent gives an event whose stored detail is a bare figure the
// words that say what it is: a "bench" event holds the bench speed a
// worker had when it played a batch, stored when new for the test
// (gamepair.EvBench).
func readableEvent(e testview.Event) testview.Event {
	if e.Kind == gamepair.EvBench {
		if nps, err := strconv.ParseUint(e.Detail, 10, 64); err == nil {
			e.Detail = fmt.Sprintf("bench speed %d nodes/s: the worker's speed when it played this batch (new for this test)", nps)
		}
	}
	return e
}
