package web

// The page registry: a page of a kind of job (and the few other pages
// that plug in) registers once from its package's init with RegisterPage:
// its template, route, renderer and whether a signed-in user can follow
// the job it shows. The routes, the templates parsed at start and the
// Follow button are read from here, so this package names no kind that
// plugs in: perft's, the test kind's and SPSA's register from their
// folders under kinds/.
//
// Invariant: a page's Name is unique (RegisterPage panics on a second),
// and its template is parsed with the package's layout at New, so a
// template that does not parse stops the coordinator at start, not at
// the first request.

import (
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/arbiter-chess/arbiter/base/registry"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Page is a page that plugs into the web pages.
type Page struct {
	// Name is the template's name: Templates holds templates/Name.html,
	// which defines "content" (and "live" for a page whose job changes),
	// with the layout's parts (state, progress, ...) and functions at hand.
	Name string
	// Templates holds the template; nil: the package's own (built-in
	// pages).
	Templates fs.FS
	// Pattern is the route, an http.ServeMux pattern of a GET.
	Pattern string
	// Followable: the page shows one job (PageRequest.Show's jobID) that a
	// signed-in user can follow from it.
	Followable bool
	// Render builds the page for a request, or fails with an error page
	// (a PageRequest.NotFound, or any error, shown by its code).
	Render func(p *PageRequest) error
}

// PageRequest is one request of a registered page: what the page reads of
// the request and the coordinator, and what it shows.
type PageRequest struct {
	R    *http.Request
	s    *Server
	v    *view
	page Page
}

var pages = registry.New[Page]("web: page")

// RegisterPage adds a page; a second page of one name panics (two
// packages claiming one page is a build mistake), and so does a page
// without a name, a GET pattern or a renderer.
func RegisterPage(p Page) {
	if p.Name == "" || !strings.HasPrefix(p.Pattern, "GET /") || p.Render == nil {
		panic(fmt.Sprintf("web: page %q registered without a name, a GET pattern (%q) or a renderer", p.Name, p.Pattern))
	}
	pages.Add(p.Name, p)
}

// Pages returns the registered pages by name.
func Pages() []Page { return pages.All() }

// followable reports whether the page of template name shows a job that
// can be followed.
func followable(name string) bool {
	p, _ := pages.Get(name)
	return p.Followable
}

// pageRoutes serves every registered page.
func (s *Server) pageRoutes() {
	for _, p := range Pages() {
		s.handle(p.Pattern, s.page(func(r *http.Request, v *view) error {
			v.tmpl = p.Name
			return p.Render(&PageRequest{R: r, s: s, v: v, page: p})
		}))
	}
}

// Job returns the snapshot of job id, or a page saying it is not what
// (e.g. "a dataset") when is refuses it.
func (p *PageRequest) Job(id, what string, is func(*arbiterv1.Job) bool) (*arbiterv1.Job, error) {
	return p.s.jobOf(id, what, is)
}

// State is a job's state as the pages name it ("queued", "running", ...),
// for the layout's "state" template.
func (p *PageRequest) State(j *arbiterv1.Job) string { return jobState(j) }

// Show sets what the page shows: its title, the data its template reads
// as .Page, and the job whose changes refresh its live part ("" for
// none); a running job's page streams them.
func (p *PageRequest) Show(title string, data any, job *arbiterv1.Job) {
	p.v.Title, p.v.Nav, p.v.Page = title, "list", data
	if job == nil {
		return
	}
	p.v.watch = []string{job.GetJobId()}
	if job.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING {
		p.v.Live = p.R.URL.Path + "?live=1"
	}
}
