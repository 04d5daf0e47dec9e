package perft

import (
	"embed"
	"fmt"
	"html/template"
	"sort"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The page of a perft job (/perft/{id}): its position (or suite), the
// progress of its snapshot, its divide (or the suite's positions) as it
// completes, read from the workload (Workload.Progress), and the
// published count of a well-known position at that depth.

//go:embed templates/perft.html
var pageTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "perft", Templates: pageTemplates, Pattern: "GET /perft/{id}", Followable: true, Render: renderPage})
}

type pageData struct {
	Job    *arbiterv1.Job
	State  string
	Board  template.HTML
	Divide []RootCount
	// Suite lists a suite job's positions (Divide is then empty): the
	// divide in suite order, numbered.
	Suite    []suiteRow
	Complete int
	Elapsed  time.Duration
	Nodes    string // the total, or the nodes counted so far
	Recent   string // Mnps since this coordinator tracks the job
	// Published is the published count of this position at this depth
	// ("" when none is known); Matches says whether the total equals it.
	Published string
	Matches   bool
	Manage    bool
	Running   bool
	Form      any
}

// suiteRow is a suite job's position, numbered, and its count.
type suiteRow struct {
	Number int
	RootCount
}

func renderPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	j, err := pr.Job(id, "a perft job", func(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyPerft) })
	if err != nil {
		return err
	}
	wl, _ := pr.Workload(Kind)
	w, ok := wl.(*Workload)
	if !ok {
		return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s", apierr.Q(id))
	}
	prog, err := w.Progress(id)
	if err != nil {
		return err
	}
	s := j.GetPerft()
	d := &pageData{Job: j, State: pr.State(j), Board: pr.Board(s.GetFen(), 36), Divide: prog.Divide,
		Running: j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING}
	d.Form = pr.ManageForm(j, s.GetPriority(), s.GetThroughput())
	d.Manage = d.Form != nil
	if s.GetSuiteSize() > 0 {
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
	end := pr.Now()
	if t := j.GetFinishedAt(); t != nil {
		end = t.AsTime()
	}
	if t := j.GetCreatedAt(); t != nil {
		d.Elapsed = end.Sub(t.AsTime())
	} else {
		d.Elapsed = end.Sub(time.Time{})
	}
	d.Nodes = j.GetNodes()
	if d.Nodes == "" {
		d.Nodes = j.GetProgress().GetNodesDone()
	}
	if prog.NodesPerSecond > 0 {
		d.Recent = fmt.Sprintf("%.1f", prog.NodesPerSecond/1e6)
	}
	if want, ok := publishedPerft(s.GetFen(), int(s.GetDepth())); ok {
		d.Published = want
		d.Matches = j.GetNodes() == want
	}
	pr.Show(fmt.Sprintf("Perft %s: depth %d", id, s.GetDepth()), d, j)
	pr.Dashboard("arbiter-perft")
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
