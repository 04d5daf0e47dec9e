package web

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/jobfind"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// The list of work, newest first, filtered by kind, state and submitter,
// a page at a time: the table of each kind that registers one
// (listsections.go: tests, perft jobs, SPSA tunes), the jobs of kinds
// without a table, and verify sessions.

// PageSize is the number of rows of a list page.
const PageSize = 50

// listFilter is what the list page shows: a jobfind.Filter, and where the
// page starts (a keyset cursor, or a page number for links of old).
type listFilter struct {
	jobfind.Filter
	Page   int   // from 1
	Cursor int64 // the sequence number the page starts below (0: none)
}

var states = append([]string{""}, jobfind.States...)

// parseFilter reads the list's query, refusing values it does not know
// with a page naming the field.
func parseFilter(q url.Values) (listFilter, error) {
	f := listFilter{Filter: jobfind.Filter{Kind: q.Get("kind"), State: q.Get("state"), Submitter: q.Get("submitter"),
		Engine: q.Get("engine"), Verdict: q.Get("verdict"), Tag: q.Get("tag"), TimeControl: q.Get("tc"), Text: q.Get("q")}, Page: 1}
	bad := func(format string, args ...any) error {
		return pageError(http.StatusBadRequest, "Bad filter", format, args...)
	}
	var err error
	for _, d := range []struct {
		key string
		t   *time.Time
		add int
	}{{"from", &f.After, 0}, {"to", &f.Before, 1}} {
		v := strings.TrimSpace(q.Get(d.key))
		if v == "" {
			continue
		}
		day, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return f, bad("%s %s: want a date as YYYY-MM-DD.", d.key, clipQ(v))
		}
		*d.t = day.AddDate(0, 0, d.add) // "to" takes its whole day
	}
	if err := f.Check(); err != nil {
		return f, bad("%s.", asWebError(err).Msg)
	}
	if f.Cursor, err = jobfind.ParseCursor(q.Get("cursor")); err != nil {
		return f, bad("%s.", asWebError(err).Msg)
	}
	f.Page, err = pageNumber(q)
	return f, err
}

// any reports whether the filter keeps less than everything.
func (f listFilter) any() bool { return !f.Filter.Empty() }

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

// query0 is q without key.
func query0(q url.Values, key string) url.Values {
	c := url.Values{}
	for k, v := range q {
		if k != key {
			c[k] = v
		}
	}
	return c
}

type listData struct {
	Filter listFilter
	Query  url.Values
	// Sections are the tables the kinds register (listsections.go),
	// rendered.
	Sections []template.HTML
	// Other holds jobs of kinds without a table of their own.
	Other    []*arbiterv1.Job
	Verify   []verifyproto.SessionView
	VerifyN  int // verify sessions in all
	Prev     string
	Next     string
	Kinds    []string
	States   []string
	Verdicts []string
	ShowJobs bool
	// Any: the filter keeps less than everything.
	Any bool
	// User is the submitter whose page this is ("" on the list).
	User string
}

func (s *Server) listPage(r *http.Request, v *view) error {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	return s.listJobs(r, v, f, "")
}

// userPage lists one submitter's jobs (/users/{name}), filtered like the
// list.
func (s *Server) userPage(r *http.Request, v *view) error {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	f.Submitter = name
	if err := f.Check(); err != nil {
		return pageError(http.StatusBadRequest, "Bad user", "%s.", asWebError(err).Msg)
	}
	return s.listJobs(r, v, f, name)
}

func (s *Server) listJobs(r *http.Request, v *view, f listFilter, user string) error {
	var err error
	d := &listData{Filter: f, Query: r.URL.Query(), Kinds: jobfind.Kinds(), States: states[1:], Verdicts: jobfind.Verdicts,
		ShowJobs: f.Kind != "verify", Any: f.any(), User: user}
	delete(d.Query, "live")
	offset := (f.Page - 1) * PageSize
	more := false
	var last int64
	if d.ShowJobs {
		// Filter on what the workloads describe cheaply; render snapshots
		// of the page's jobs only.
		infos, m := s.cfg.Core.ListBefore(f.Cursor, offset, PageSize, f.Keep)
		more = m
		if len(infos) > 0 {
			last = infos[len(infos)-1].Seq
		}
		byFamily := map[jobkind.Family][]*arbiterv1.Job{}
		for _, info := range infos {
			snap, err := s.jobSnapshot(info.ID, false)
			if err != nil {
				continue // gone meanwhile
			}
			j := snap.(*arbiterv1.Job)
			if fam := jobkind.Of(j).Family; sectionFamily(fam) {
				byFamily[fam] = append(byFamily[fam], j)
			} else {
				d.Other = append(d.Other, j)
			}
		}
		if d.Sections, err = s.renderSections(byFamily, f.Kind, d.Any, v.Now); err != nil {
			return err
		}
	}
	switch {
	case f.TestOnly():
		// Verify sessions have no engines, verdicts or tags.
	case f.Kind == "verify":
		d.Verify, d.VerifyN, err = s.verifySessions(r, f, offset, PageSize)
		more = offset+PageSize < d.VerifyN
	case f.Kind == "" && f.Page == 1 && f.Cursor == 0 && user == "":
		// The first page of everything shows the latest sessions too.
		d.Verify, d.VerifyN, err = s.verifySessions(r, f, 0, 10)
	}
	if err != nil {
		return err
	}
	switch {
	case f.Cursor > 0:
		// Keyset pages link back to the newest; the browser's back
		// button goes one page back.
		d.Prev = query(query0(d.Query, "cursor"), "page", "")
	case f.Page > 1:
		d.Prev = query(d.Query, "page", strconv.Itoa(f.Page-1))
	}
	if more {
		if d.ShowJobs && last > 0 {
			// The next page starts below the last job shown: a keyset
			// cursor, so that no page passes the jobs of the pages before.
			d.Next = query(query0(d.Query, "page"), "cursor", jobfind.Cursor(last))
		} else {
			d.Next = query(d.Query, "page", strconv.Itoa(f.Page+1))
		}
	}
	v.Title, v.Nav, v.Page, v.tmpl = "Work", "list", d, "list"
	if user != "" {
		v.Title = "Work of " + user
	}
	v.Live = r.URL.Path + query(d.Query, "live", "1")
	v.Grafana = s.grafana("arbiter-overview", nil)
	return nil
}

// verifySessions lists sessions that pass the filter (state: a live
// session is running, a reported one done).
func (s *Server) verifySessions(r *http.Request, f listFilter, offset, limit int) ([]verifyproto.SessionView, int, error) {
	if s.cfg.Verify == nil {
		return nil, 0, nil
	}
	if f.State == "" && f.Submitter == "" {
		return s.cfg.Verify.Sessions(r.Context(), offset, limit)
	}
	// Filtered: read the live ones and the latest reported ones (sessions
	// are few) and filter here.
	all, _, err := s.cfg.Verify.Sessions(r.Context(), 0, verifyproto.MaxSessions+maxFilteredSessions)
	if err != nil {
		return nil, 0, err
	}
	var kept []verifyproto.SessionView
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
