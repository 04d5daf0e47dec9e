package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The forms that change a running test (priority, throughput, game cap,
// tags, notes), resume a stopped one and copy one. Each goes through the
// core (Modify, Resume, Create), which checks the caller's role and
// ownership again and records the action in the audit log (core.Config.Auditor).

// modifyTest changes a running test: every field of the form is its new
// value, and those that differ from the test's are the change; a bad one
// is named and nothing changes.
func (s *Server) modifyTest(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	var m core.Modification
	// current is the test's spec as it stands, read once when needed.
	var spec *arbiterv1.MatchSpec
	current := func() (*arbiterv1.MatchSpec, error) {
		if spec == nil {
			j, err := s.testJob(id)
			if err != nil {
				return nil, err
			}
			spec = j.GetMatch()
		}
		return spec, nil
	}
	ps, ss, gs := strings.TrimSpace(r.PostFormValue("priority")), strings.TrimSpace(r.PostFormValue("throughput")),
		strings.TrimSpace(r.PostFormValue("games"))
	if ps != "" {
		prio, err := parseInt("priority", ps, core.MinPriority, core.MaxPriority)
		if err != nil {
			return err
		}
		p := int32(prio)
		if spec, err := current(); err != nil {
			return err
		} else if p != spec.GetPriority() {
			m.Priority = &p
		}
	}
	if ss != "" {
		share, err := parseFloat("throughput", ss, 0, core.MaxShare)
		if err != nil {
			return err
		}
		if share == 0 {
			return bad("throughput %s: must be above 0", clipQ(ss))
		}
		if spec, err := current(); err != nil {
			return err
		} else if share != spec.GetThroughput() {
			m.Share = &share
		}
	}
	if gs != "" {
		g, err := strconv.ParseUint(gs, 10, 64)
		if err != nil {
			return bad("game cap %s: want a whole number of games (even; 0 for none on an SPRT)", clipQ(gs))
		}
		// Only a changed cap is sent: an unchanged one need not fit the
		// batches handed out since.
		if spec, err := current(); err != nil {
			return err
		} else if g != spec.GetGames() {
			m.Games = &g
		}
	}
	// The form carries every field as it stands: only changed ones are
	// sent (priority and throughput above too), so that the audit log
	// names what the change changed.
	if _, ok := r.PostForm["notes"]; ok {
		n := strings.ReplaceAll(r.PostFormValue("notes"), "\r\n", "\n")
		if spec, err := current(); err != nil {
			return err
		} else if n != spec.GetNotes() {
			m.Notes = &n
		}
	}
	if _, ok := r.PostForm["tags"]; ok {
		tags := strings.FieldsFunc(r.PostFormValue("tags"), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if _, err := testview.CheckTags(tags); err != nil {
			return err
		}
		if spec, err := current(); err != nil {
			return err
		} else if !slices.Equal(tags, spec.GetTags()) {
			m.SetTags, m.Tags = true, tags
		}
	}
	if err := s.cfg.Core.Modify(r.Context(), vw.identity(), id, m); err != nil {
		return err
	}
	s.log.Info("test changed on the web", zap.String("job_id", id), zap.String("identity", vw.Name), zap.Stringer("change", m))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

// resumeTest runs a stopped test again.
func (s *Server) resumeTest(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	if err := s.cfg.Core.Resume(r.Context(), vw.identity(), id); err != nil {
		return err
	}
	s.log.Info("test resumed on the web", zap.String("job_id", id), zap.String("identity", vw.Name))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

// rescheduleTest submits a copy of a test and shows the copy.
func (s *Server) rescheduleTest(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	ref, err := s.cfg.Games.Reschedule(r.Context(), s.cfg.Core, vw.identity(), id)
	if err != nil {
		return err
	}
	s.log.Info("test rescheduled on the web", zap.String("job_id", id), zap.String("copy", ref.ID), zap.String("identity", vw.Name))
	http.Redirect(w, r, s.backTo(ref.ID), http.StatusSeeOther)
	return nil
}
