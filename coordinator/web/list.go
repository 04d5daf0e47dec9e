package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/perftjob"
	"github.com/arbiter-chess/arbiter/coordinator/spsajob"
	"github.com/arbiter-chess/arbiter/coordinator/verifyjob"
	"github.com/arbiter-chess/arbiter/internal/jobkind"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The list of work: tests, perft jobs, SPSA tunes and verify sessions, newest first, filtered by kind,
// state and submitter, a page at a time.

// PageSize is the number of rows of a list page.
const PageSize = 50

// listFilter is what the list page shows.
type listFilter struct {
	Kind      string // "", "test", "perft", "spsa", "verify"
	State     string // "", "running" (pending too), "pending", "done", "cancelled", "failed"
	Submitter string
	Page      int // from 1
}

var (
	kinds  = []string{"", "test", "perft", "spsa", "verify"}
	states = []string{"", "running", "pending", "done", "cancelled", "failed"}
)

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// parseFilter reads the list's query, refusing values it does not know.
func parseFilter(q url.Values) (listFilter, error) {
	f := listFilter{Kind: q.Get("kind"), State: q.Get("state"), Submitter: strings.TrimSpace(q.Get("submitter")), Page: 1}
	if !oneOf(f.Kind, kinds) {
		return f, pageError(http.StatusBadRequest, "Bad filter", "kind %s: want test, perft, spsa or verify (or nothing for all).", clipQ(f.Kind))
	}
	if !oneOf(f.State, states) {
		return f, pageError(http.StatusBadRequest, "Bad filter", "state %s: want running, pending, done, cancelled or failed (or nothing for all).", clipQ(f.State))
	}
	if len(f.Submitter) > 64 {
		return f, pageError(http.StatusBadRequest, "Bad filter", "submitter %s: names are at most 64 bytes.", clipQ(f.Submitter))
	}
	var err error
	f.Page, err = pageNumber(q)
	return f, err
}

// maxPage bounds a page number (so that offsets stay small).
const maxPage = 100000

// pageNumber reads the page query parameter (1 when absent).
func pageNumber(q url.Values) (int, error) {
	p := q.Get("page")
	if p == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > maxPage {
		return 0, pageError(http.StatusBadRequest, "Bad page", "page %s: want a number from 1 to %d.", clipQ(p), maxPage)
	}
	return n, nil
}

// infoState is a job's state as pages show it (see jobState).
func infoState(j core.JobInfo) string {
	if j.State == core.StatePending {
		return "approval"
	}
	if j.State == "running" && !j.Started {
		return "pending"
	}
	return j.State
}

func (f listFilter) keep(j core.JobInfo) bool {
	kind := "test" // match and SPRT tests are of several kinds
	switch j.Kind {
	case perftjob.Kind:
		kind = "perft"
	case spsajob.Kind:
		kind = "spsa"
	}
	switch {
	case f.Kind != "" && f.Kind != kind:
		return false
	case f.Submitter != "" && j.Submitter != f.Submitter:
		return false
	}
	switch st := infoState(j); f.State {
	case "":
		return true
	case "running":
		return st == "running" || st == "pending"
	default:
		return st == f.State
	}
}

type listData struct {
	Filter listFilter
	Query  url.Values
	Tests  []*arbiterv1.Job
	Perft  []*arbiterv1.Job
	Tunes  []*arbiterv1.Job
	// Other holds jobs of kinds without a table of their own here.
	Other    []*arbiterv1.Job
	Verify   []verifyjob.SessionView
	VerifyN  int // verify sessions in all
	Prev     string
	Next     string
	Kinds    []string
	States   []string
	ShowJobs bool
}

func (s *Server) listPage(r *http.Request, v *view) error {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	d := &listData{Filter: f, Query: r.URL.Query(), Kinds: kinds[1:], States: states[1:], ShowJobs: f.Kind != "verify"}
	offset := (f.Page - 1) * PageSize
	more := false
	if d.ShowJobs {
		// Filter on what the workloads describe cheaply; render snapshots
		// of the page's jobs only.
		infos, m := s.cfg.Core.List(offset, PageSize, f.keep)
		more = m
		for _, info := range infos {
			snap, err := s.jobSnapshot(info.ID, false)
			if err != nil {
				continue // gone meanwhile
			}
			j := snap.(*arbiterv1.Job)
			switch jobkind.Of(j).Family {
			case jobkind.FamilyTest:
				d.Tests = append(d.Tests, j)
			case jobkind.FamilyTune:
				d.Tunes = append(d.Tunes, j)
			case jobkind.FamilyPerft:
				d.Perft = append(d.Perft, j)
			default:
				d.Other = append(d.Other, j)
			}
		}
	}
	switch {
	case f.Kind == "verify":
		d.Verify, d.VerifyN, err = s.verifySessions(r, f, offset, PageSize)
		more = offset+PageSize < d.VerifyN
	case f.Kind == "" && f.Page == 1:
		// The first page of everything shows the latest sessions too.
		d.Verify, d.VerifyN, err = s.verifySessions(r, f, 0, 10)
	}
	if err != nil {
		return err
	}
	if f.Page > 1 {
		d.Prev = query(d.Query, "page", strconv.Itoa(f.Page-1))
	}
	if more {
		d.Next = query(d.Query, "page", strconv.Itoa(f.Page+1))
	}
	v.Title, v.Nav, v.Page, v.tmpl = "Work", "list", d, "list"
	v.Live = r.URL.Path + query(d.Query, "live", "1")
	v.Grafana = s.grafana("arbiter-overview", nil)
	return nil
}

// verifySessions lists sessions that pass the filter (state: a live
// session is running, a reported one done).
func (s *Server) verifySessions(r *http.Request, f listFilter, offset, limit int) ([]verifyjob.SessionView, int, error) {
	if f.State == "" && f.Submitter == "" {
		return s.cfg.Verify.Sessions(r.Context(), offset, limit)
	}
	// Filtered: read the live ones and the latest reported ones (sessions
	// are few) and filter here.
	all, _, err := s.cfg.Verify.Sessions(r.Context(), 0, verifyjob.MaxSessions+maxFilteredSessions)
	if err != nil {
		return nil, 0, err
	}
	var kept []verifyjob.SessionView
	for _, sv := range all {
		st := "done"
		if sv.Live {
			st = "running"
		}
		if (f.State == "" || f.State == st) && (f.Submitter == "" || f.Submitter == sv.Owner) {
			kept = append(kept, sv)
		}
	}
	n := len(kept)
	if offset >= n {
		return nil, n, nil
	}
	return kept[offset:min(n, offset+limit)], n, nil
}

// maxFilteredSessions bounds the reported verify sessions a filtered list
// looks through.
const maxFilteredSessions = 10000

// grafana links a dashboard with variables ("" without Grafana).
func (s *Server) grafana(uid string, vars url.Values) string {
	if s.cfg.GrafanaURL == "" {
		return ""
	}
	u := s.cfg.GrafanaURL + "/d/" + uid + "/"
	if len(vars) > 0 {
		u += "?" + vars.Encode()
	}
	return u
}
