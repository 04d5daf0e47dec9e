package web

// The download registry: a kind's files (the test kind's PGNs) register
// once from the kind's init with RegisterDownload: a GET pattern and a
// handler that writes its own answer. Every registered download is
// served as a page is read: through the web door (Server.handle; a GET
// reads no body and is anyone's there), then the reader's check
// (Server.guard: a credential when Config.RequireSignIn), then the
// handler, whose error before it answers is shown as a page. A download
// reads; it is given nothing that changes state.
//
// Invariant: a download's pattern is unique (RegisterDownload panics on a
// second) and is a GET.

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/registry"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Download is a file a kind serves: a GET that writes its own answer.
type Download struct {
	// Pattern is the route, an http.ServeMux pattern of a GET.
	Pattern string
	// Serve writes the answer, or fails with an error shown as a page
	// (before it has written anything).
	Serve func(d *DownloadRequest) error
}

// DownloadRequest is one request of a registered download.
type DownloadRequest struct {
	W http.ResponseWriter
	R *http.Request
	s *Server
}

var downloads = registry.New[Download]("web: download")

// RegisterDownload adds a download; a second one of one pattern panics,
// and so does one without a handler or a GET pattern.
func RegisterDownload(d Download) {
	if d.Serve == nil || !strings.HasPrefix(d.Pattern, "GET /") {
		panic(fmt.Sprintf("web: download %q registered without a GET pattern or a handler", d.Pattern))
	}
	downloads.Add(d.Pattern, d)
}

// downloadRoutes serves every registered download.
func (s *Server) downloadRoutes() {
	for _, d := range downloads.All() {
		s.handle(d.Pattern, s.guard(func(w http.ResponseWriter, r *http.Request, _ viewer) error {
			return d.Serve(&DownloadRequest{W: w, R: r, s: s})
		}))
	}
}

// Tests is the workload of match and SPRT tests (Config.Games).
func (d *DownloadRequest) Tests() testview.Tests { return d.s.cfg.Games }

// TestJob returns test id's snapshot, or a page saying it is not one.
func (d *DownloadRequest) TestJob(id string) (*arbiterv1.Job, error) { return d.s.testJob(id) }

// Problem is an error shown as a page of its own HTTP status and title,
// with the message format makes (which names the input and what is
// wrong).
func Problem(status int, title, format string, args ...any) error {
	return pageError(status, title, format, args...)
}

// When writes a time as the pages do ("-" for none).
func When(t time.Time) string { return when(t) }
