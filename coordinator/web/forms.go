package web

import (
	"math"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The forms of every job's page: cancel a job, change a running job's
// priority; and the helpers the kinds' submit forms share (the books,
// the number fields). The submit forms are the kinds' (formsections.go):
// each field is checked there with an error that names it, and the spec
// is checked again by its workload (the same checks as a gRPC
// submission); nothing is stored unless both pass.

// books lists the opening books of BooksDir.
func (s *Server) books() []string {
	if s.cfg.BooksDir == "" {
		return nil
	}
	ents, err := os.ReadDir(s.cfg.BooksDir)
	if err != nil {
		s.log.Warn("books directory unreadable", zap.String("dir", s.cfg.BooksDir), zap.Error(err))
		return nil
	}
	var out []string
	for _, e := range ents {
		n := strings.ToLower(e.Name())
		if !e.IsDir() && (strings.HasSuffix(n, ".epd") || strings.HasSuffix(n, ".pgn") || strings.HasSuffix(n, ".zip")) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func bad(format string, args ...any) error { return apierr.Invalid(format, args...) }

func parseInt(field, s string, lo, hi int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, bad("%s %s: want a whole number from %d to %d", field, clipQ(s), lo, hi)
	}
	return n, nil
}

func parseFloat(field, s string, lo, hi float64) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return 0, bad("%s %s: want a number from %g to %g", field, clipQ(s), lo, hi)
	}
	return x, nil
}

// backTo is the page of job id.
func (s *Server) backTo(id string) string {
	if snap, err := s.jobSnapshot(id, false); err == nil {
		if j, ok := snap.(*arbiterv1.Job); ok {
			return jobURL(j)
		}
	}
	return "/"
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	if err := s.cfg.Core.Cancel(r.Context(), vw.identity(), id, "cancelled by "+vw.Name+" on the web pages"); err != nil {
		return err
	}
	s.log.Info("job cancelled on the web", zap.String("job_id", id), zap.String("identity", vw.Name))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

func (s *Server) setPriority(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	ps, ss := strings.TrimSpace(r.PostFormValue("priority")), strings.TrimSpace(r.PostFormValue("throughput"))
	if ps == "" || ss == "" {
		return bad("priority and throughput are both required")
	}
	prio, err := parseInt("priority", ps, core.MinPriority, core.MaxPriority)
	if err != nil {
		return err
	}
	share, err := parseFloat("throughput", ss, 0, core.MaxShare)
	if err != nil {
		return err
	}
	if share == 0 {
		return bad("throughput %s: must be above 0", clipQ(ss))
	}
	if err := s.cfg.Core.SetPriority(r.Context(), vw.identity(), id, int32(prio), share); err != nil {
		return err
	}
	s.log.Info("job priority changed on the web", zap.String("job_id", id), zap.String("identity", vw.Name),
		zap.Int64("priority", prio), zap.Float64("throughput", share))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

// jobRedirect sends /jobs/{id} to the job's page.
func (s *Server) jobRedirect(w http.ResponseWriter, r *http.Request, _ viewer) error {
	id := r.PathValue("id")
	snap, err := s.jobSnapshot(id, false)
	if err != nil {
		if strings.HasPrefix(id, "verify.") {
			http.Redirect(w, r, "/verify/"+url.PathEscape(strings.TrimPrefix(id, "verify.")), http.StatusSeeOther)
			return nil
		}
		return err
	}
	http.Redirect(w, r, jobURL(snap.(*arbiterv1.Job)), http.StatusSeeOther)
	return nil
}
