// Package jobfind is how lists find jobs: a filter over what workloads
// describe of their jobs (core.JobInfo) by submitter, engine, state,
// verdict, kind, tag, time control, date and free text, and the keyset
// cursor of its pages. The web list and the JobService's ListJobs (arbiter
// status) share it, so a filter means the same everywhere.
//
// Why filter in memory rather than in SQL: the coordinator holds every job
// it serves in memory (core's registry, the workloads' maps) and a job's
// state and verdict change there first; a list is one pass over the
// registry, newest first, that stops when a page is full, with no second
// copy to keep in step and the same behaviour on SQLite and PostgreSQL.
// BenchmarkFindTests (coordinator/web) measures it at 100,000 stored tests.
package jobfind

import (
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// States and verdicts a filter accepts ("" for all).
var (
	States   = []string{"running", "pending", "approval", "done", "cancelled", "failed"}
	Verdicts = []string{"passed", "failed", "none"}
)

// MaxField bounds a filter's text fields.
const MaxField = 100

// Filter is what a list keeps; empty fields keep everything.
type Filter struct {
	Kind        string // one of Kinds()
	State       string // one of States; "running" takes pending jobs too
	Submitter   string // exact identity name
	Engine      string // either engine's name, exact (case-insensitive)
	Verdict     string // one of Verdicts
	Tag         string // exact tag
	TimeControl string // as lists show it, e.g. "10+0.1"
	Text        string // case-insensitive substring of id, engines, tags, notes, submitter
	// After and Before bound the creation time (zero: unbounded); Before
	// is exclusive.
	After, Before time.Time
	// lowerText is Text in lower case, made by Check (once, not per job).
	lowerText string
}

// Kinds lists the kinds a filter accepts ("" for all), read from the
// registries: every coordinator kind (workload.Kinds, in their order:
// "test" keeps sprt and match jobs) and then every other kind clients know
// (jobkind.Names: "sprt", "match"). Call it once the kinds have
// registered (not from a package variable's initializer).
func Kinds() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range workload.Kinds() {
		out, seen[k.Name] = append(out, k.Name), true
	}
	for _, n := range jobkind.Names() {
		if !seen[n] {
			out, seen[n] = append(out, n), true
		}
	}
	return out
}

func oneOf(v string, allowed []string) bool {
	if v == "" {
		return true
	}
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// Check refuses a filter with a value it does not know, naming the field.
func (f *Filter) Check() error {
	f.Submitter, f.Engine, f.Tag = strings.TrimSpace(f.Submitter), strings.TrimSpace(f.Engine), strings.ToLower(strings.TrimSpace(f.Tag))
	f.TimeControl, f.Text = strings.TrimSpace(f.TimeControl), strings.TrimSpace(f.Text)
	f.lowerText = strings.ToLower(f.Text)
	switch {
	case !oneOf(f.Kind, Kinds()):
		return apierr.Invalid("kind %s: want one of %s (or nothing for all)", apierr.Q(f.Kind), strings.Join(Kinds(), ", "))
	case !oneOf(f.State, States):
		return apierr.Invalid("state %s: want one of %s (or nothing for all)", apierr.Q(f.State), strings.Join(States, ", "))
	case !oneOf(f.Verdict, Verdicts):
		return apierr.Invalid("verdict %s: want passed, failed or none (or nothing for all)", apierr.Q(f.Verdict))
	case !f.After.IsZero() && !f.Before.IsZero() && !f.Before.After(f.After):
		return apierr.Invalid("dates: from %s is not before to %s", f.After.Format(time.DateOnly), f.Before.Format(time.DateOnly))
	}
	for _, fl := range []struct{ name, v string }{{"submitter", f.Submitter}, {"engine", f.Engine}, {"tag", f.Tag},
		{"time control", f.TimeControl}, {"text", f.Text}} {
		if len(fl.v) > MaxField {
			return apierr.Invalid("%s %s: at most %d bytes", fl.name, apierr.Q(fl.v), MaxField)
		}
	}
	return nil
}

// TestOnly reports whether the filter asks about what only tests have
// (engine, verdict, tag, time control): other jobs never pass it.
func (f *Filter) TestOnly() bool {
	return f.Engine != "" || f.Verdict != "" || f.Tag != "" || f.TimeControl != ""
}

// Empty reports whether the filter keeps every job.
func (f *Filter) Empty() bool { return *f == Filter{} }

// State is a job's state as lists show it: a running job that has not
// started is pending; a job waiting for an approver (core.StatePending) is
// "approval", as the pages show it.
func State(j core.JobInfo) string {
	if j.State == core.StatePending {
		return "approval"
	}
	if j.State == "running" && !j.Started {
		return "pending"
	}
	return j.State
}

// Keep reports whether job j passes the filter.
func (f *Filter) Keep(j core.JobInfo) bool {
	// A job passes its own kind and the coordinator kind that runs it
	// ("test" keeps sprt and match jobs: jobkind.Kind.Workload).
	if f.Kind != "" && j.Kind != f.Kind && jobkind.Lookup(j.Kind).Workload != f.Kind {
		return false
	}
	if f.Submitter != "" && j.Submitter != f.Submitter {
		return false
	}
	switch st := State(j); f.State {
	case "":
	case "running":
		if st != "running" && st != "pending" {
			return false
		}
	default:
		if st != f.State {
			return false
		}
	}
	if f.Verdict != "" && j.Verdict != f.Verdict {
		return false
	}
	if f.Engine != "" && !containsFold(j.Engines, f.Engine) {
		return false
	}
	if f.Tag != "" && !contains(j.Tags, f.Tag) {
		return false
	}
	if f.TimeControl != "" && !strings.EqualFold(j.TimeControl, f.TimeControl) {
		return false
	}
	if !f.After.IsZero() && j.Created.Before(f.After) {
		return false
	}
	if !f.Before.IsZero() && !j.Created.Before(f.Before) {
		return false
	}
	if f.Text != "" {
		lower := f.lowerText
		if lower == "" {
			lower = strings.ToLower(f.Text) // a filter Check did not see
		}
		if !matchesText(j, lower) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// matchesText reports whether text (lower case) occurs, ignoring case, in
// the job's id, submitter, engines, tags or notes: in the searchable text
// its workload keeps, or one made now.
func matchesText(j core.JobInfo, text string) bool {
	t := j.Text
	if t == "" {
		t = core.SearchText(j.ID, j.Submitter, j.Notes, append(append([]string(nil), j.Engines...), j.Tags...))
	}
	return strings.Contains(t, text)
}

// Cursor is a page's keyset cursor: the sequence number of the last job
// shown ("" for the first page). It is opaque to clients.
func Cursor(seq int64) string {
	if seq <= 0 {
		return ""
	}
	return strconv.FormatInt(seq, 10)
}

// ParseCursor reads a cursor (0 for "").
func ParseCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(c, 10, 64)
	if err != nil || n <= 0 {
		return 0, apierr.Invalid("cursor %s: not a cursor of this list (want the next page's link as given)", apierr.Q(c))
	}
	return n, nil
}

// Page lists one page of jobs that pass f, newest first, after cursor
// (0: from the newest): at most limit, and the cursor of the next page (""
// after the last).
func Page(c *core.Core, f *Filter, cursor int64, limit int) ([]core.JobInfo, string) {
	infos, more := c.ListBefore(cursor, 0, limit, f.Keep)
	next := ""
	if more && len(infos) > 0 {
		next = Cursor(infos[len(infos)-1].Seq)
	}
	return infos, next
}
