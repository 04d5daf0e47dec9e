package web

// The route registry: a kind's forms, the POSTs that submit or change its
// jobs (the test kind's /submit/test, /submit/preview, modify, resume and
// reschedule; perft's /submit/perft), register once from the kind's init
// with RegisterRoute: a pattern and a handler, nothing else.
// What a route admits is not the kind's to say. Every registered route is
// served as this package's own forms are (cancel, priority): through the
// web door (Server.handle) with the rule coordinator/admission's one
// table declares for its pattern (role and body limit; a route the
// table does not name panics at start, so none is served unchecked),
// the CSRF token and origin checked and the caller resolved from the
// headers before a byte of the body is read, then the form read within
// its limit (Server.action), then the handler, whose error is shown as a
// page. A handler reaches the coordinator through the core (ActionRequest.Core),
// which checks the caller's role and ownership again.
//
// Invariant: a route's pattern is unique (RegisterRoute panics on a
// second) and is a POST.

import (
	"fmt"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/registry"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Route is a form a kind serves: a POST that changes state.
type Route struct {
	// Pattern is the route, an http.ServeMux pattern of a POST ("POST
	// /tests/{id}/modify"); coordinator/admission's table gives its rule.
	Pattern string
	// Serve handles the admitted request (its form read), answering
	// (ActionRequest.Redirect) or failing with an error shown as a page.
	Serve func(a *ActionRequest) error
}

// ActionRequest is one admitted request of a registered route.
type ActionRequest struct {
	W  http.ResponseWriter
	R  *http.Request
	s  *Server
	vw viewer
}

var routes = registry.New[Route]("web: route")

// RegisterRoute adds a form route; a second route of one pattern panics,
// and so does one without a handler or a POST pattern.
func RegisterRoute(r Route) {
	if r.Serve == nil || !strings.HasPrefix(r.Pattern, "POST /") {
		panic(fmt.Sprintf("web: route %q registered without a POST pattern or a handler", r.Pattern))
	}
	routes.Add(r.Pattern, r)
}

// formRoutes serves every registered route, as the package's own forms.
func (s *Server) formRoutes() {
	for _, rt := range routes.All() {
		s.handle(rt.Pattern, s.action(func(w http.ResponseWriter, r *http.Request, vw viewer) error {
			return rt.Serve(&ActionRequest{W: w, R: r, s: s, vw: vw})
		}))
	}
}

// Caller is the signed-in identity that sent the form (the door admitted
// it with the route's role).
func (a *ActionRequest) Caller() identity.Identity { return a.vw.identity() }

// Core is the coordinator's core, through which a form changes a job.
func (a *ActionRequest) Core() *core.Core { return a.s.cfg.Core }

// Tests is the workload of match and SPRT tests (Config.Games).
func (a *ActionRequest) Tests() testview.Tests { return a.s.cfg.Games }

// TestJob returns test id's snapshot, or a page saying it is not one.
func (a *ActionRequest) TestJob(id string) (*arbiterv1.Job, error) { return a.s.testJob(id) }

// Log is the pages' logger.
func (a *ActionRequest) Log() *zap.Logger { return a.s.log }

// Redirect answers with the page of job id (303; the list when it has
// none).
func (a *ActionRequest) Redirect(id string) {
	http.Redirect(a.W, a.R, a.s.backTo(id), http.StatusSeeOther)
}

// ParseInt reads a form's whole number field within [lo, hi] (0 when
// empty), or an error naming the field and its value.
func ParseInt(field, s string, lo, hi int64) (int64, error) { return parseInt(field, s, lo, hi) }

// ParseFloat reads a form's number field within [lo, hi] (0 when
// empty), or an error naming the field and its value.
func ParseFloat(field, s string, lo, hi float64) (float64, error) {
	return parseFloat(field, s, lo, hi)
}

// Bad is a bad-input error (400) with the message format makes, which
// names the input and what is wrong.
func Bad(format string, args ...any) error { return bad(format, args...) }
