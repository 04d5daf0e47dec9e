package web

import (
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/perftwire"
)

// PerftProgress is what the page of a perft job reads beyond the job's
// snapshot: the workload of the perft kind (kinds/perft), a floor above
// this package, answers it, so no page names the kind's package.
type PerftProgress interface {
	// Progress returns a job's divide so far and its recent rate
	// (UNKNOWN_JOB for a job it does not keep).
	Progress(jobID string) (perftwire.Progress, error)
}

// perftProgressOf is the workload of c that keeps perft jobs, nil when
// none does.
func perftProgressOf(c *core.Core) PerftProgress {
	for _, wl := range c.Workloads() {
		if pp, ok := wl.(PerftProgress); ok && wl.Kind() == jobkind.Perft {
			return pp
		}
	}
	return nil
}

type perftData struct {
	Job    *arbiterv1.Job
	State  string
	Board  template.HTML
	Divide []perftwire.RootCount
	// Suite lists a suite job's positions (Divide is then empty): the
	// divide in suite order, numbered.
	Suite    []suiteRow
	Complete int
	Elapsed  time.Duration
	Nodes    string // the total, or the nodes counted so far
	Rate     string // Mnps over the whole run
	Recent   string // Mnps since this coordinator tracks the job
	// Published is the published count of this position at this depth
	// ("" when none is known); Matches says whether the total equals it.
	Published string
	Matches   bool
	Manage    bool
	Running   bool
	Form      *manageForm
}

// suiteRow is a suite job's position, numbered, and its count.
type suiteRow struct {
	Number int
	perftwire.RootCount
}

func (s *Server) perftPage(r *http.Request, v *view) error {
	id := r.PathValue("id")
	j, err := s.jobOf(id, "a perft job", func(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyPerft) })
	if err != nil {
		return err
	}
	if s.cfg.Perft == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(id))
	}
	prog, err := s.cfg.Perft.Progress(id)
	if err != nil {
		return err
	}
	d := &perftData{Job: j, State: jobState(j), Board: boardSVG(j.GetPerft().GetFen(), "", 36), Divide: prog.Divide,
		Running: j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING}
	d.Manage = d.Running && v.Viewer.MayManage(j.GetSubmitter())
	d.Form = &manageForm{ID: id, CSRF: v.CSRF, MinPrio: core.MinPriority, MaxPrio: core.MaxPriority,
		Priority: j.GetPerft().GetPriority(), Share: j.GetPerft().GetThroughput()}
	if s := j.GetPerft(); s.GetSuiteSize() > 0 {
		for i, rc := range d.Divide {
			d.Suite = append(d.Suite, suiteRow{Number: int(s.GetSuiteFirst()) + i, RootCount: rc})
		}
	} else {
		sort.Slice(d.Divide, func(a, b int) bool { return d.Divide[a].Move < d.Divide[b].Move })
	}
	for _, rc := range d.Divide {
		if rc.Complete {
			d.Complete++
		}
	}
	end := v.Now
	if t := tsTime(j.GetFinishedAt()); !t.IsZero() {
		end = t
	}
	d.Elapsed = end.Sub(tsTime(j.GetCreatedAt()))
	d.Nodes = j.GetNodes()
	if d.Nodes == "" {
		d.Nodes = j.GetProgress().GetNodesDone()
	}
	d.Rate = mnps(d.Nodes, d.Elapsed)
	if prog.NodesPerSecond > 0 {
		d.Recent = fmt.Sprintf("%.1f", prog.NodesPerSecond/1e6)
	}
	if want, ok := publishedPerft(j.GetPerft().GetFen(), int(j.GetPerft().GetDepth())); ok {
		d.Published = want
		d.Matches = j.GetNodes() == want
	}
	v.Title = fmt.Sprintf("Perft %s: depth %d", id, j.GetPerft().GetDepth())
	v.Nav, v.Page, v.tmpl, v.watch = "list", d, "perft", []string{id}
	if d.Running {
		v.Live = r.URL.Path + "?live=1"
	}
	v.Grafana = s.grafana("arbiter-perft", nil)
	return nil
}

// published are perft counts the chess programming community agrees on:
// the start position (OEIS A048987) and the Chess Programming Wiki's test
// positions 2 to 6, by normalised FEN and depth.
var published = map[string][]string{
	engine.StartFEN: {"1", "20", "400", "8902", "197281", "4865609", "119060324", "3195901860", "84998978956",
		"2439530234167", "69352859712417", "2097651003696806", "62854969236701747", "1981066775000396239",
		"61885021521585529237", "2015099950053364471960"},
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1":     {"1", "48", "2039", "97862", "4085603", "193690690", "8031647685"},
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1":                                {"1", "14", "191", "2812", "43238", "674624", "11030083", "178633661"},
	"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1":         {"1", "6", "264", "9467", "422333", "15833292", "706045033"},
	"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8":                {"1", "44", "1486", "62379", "2103487", "89941194"},
	"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10": {"1", "46", "2079", "89890", "3894594", "164075551", "6923051137"},
}

// publishedPerft returns the published count of fen at depth, if known.
// The move counters do not change perft, so they are not compared.
func publishedPerft(fen string, depth int) (string, bool) {
	key := fenKey(fen)
	for f, counts := range published {
		if fenKey(f) == key && depth >= 0 && depth < len(counts) {
			return counts[depth], true
		}
	}
	return "", false
}

// fenKey is a FEN without its move counters, normalised.
func fenKey(fen string) string {
	p, err := engine.ParseFEN(fen)
	if err != nil {
		return ""
	}
	f := p.FEN()
	for i, n := len(f)-1, 0; i >= 0; i-- {
		if f[i] == ' ' {
			if n++; n == 2 {
				return f[:i]
			}
		}
	}
	return f
}

func init() {
	RegisterPage(Page{Name: "perft", Pattern: "GET /perft/{id}", Followable: true,
		Render: func(p *PageRequest) error { return p.s.perftPage(p.R, p.v) }})
}
