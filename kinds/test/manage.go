package test

import (
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The forms of a test's page that change a running test (priority,
// throughput, game cap, tags, notes), resume a stopped one and copy one,
// registered with web.RegisterRoute: the web door admits each under the
// rule coordinator/admission declares for it (a signed-in client or
// admin, a CSRF token, a small form) before its body is read. Each goes
// through the core (Modify, Resume, Create), which checks the caller's
// role and ownership again and records the action in the audit log
// (core.Config.Auditor).

func init() {
	web.RegisterRoute(web.Route{Pattern: "POST /tests/{id}/modify", Serve: modifyTest})
	web.RegisterRoute(web.Route{Pattern: "POST /tests/{id}/resume", Serve: resumeTest})
	web.RegisterRoute(web.Route{Pattern: "POST /tests/{id}/reschedule", Serve: rescheduleTest})
}

// modifyTest changes a running test: every field of the form is its new
// value, and those that differ from the test's are the change; a bad one
// is named and nothing changes.
func modifyTest(a *web.ActionRequest) error {
	r := a.R
	id := r.PathValue("id")
	var m core.Modification
	// current is the test's spec as it stands, read once when needed.
	var spec *arbiterv1.MatchSpec
	current := func() (*arbiterv1.MatchSpec, error) {
		if spec == nil {
			j, err := a.TestJob(id)
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
		prio, err := web.ParseInt("priority", ps, core.MinPriority, core.MaxPriority)
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
		share, err := web.ParseFloat("throughput", ss, 0, core.MaxShare)
		if err != nil {
			return err
		}
		if share == 0 {
			return web.Bad("throughput %s: must be above 0", apierr.Q(ss))
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
			return web.Bad("game cap %s: want a whole number of games (even; 0 for none on an SPRT)", apierr.Q(gs))
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
	if err := a.Core().Modify(r.Context(), a.Caller(), id, m); err != nil {
		return err
	}
	a.Log().Info("test changed on the web", zap.String("job_id", id), zap.String("identity", a.Caller().Name), zap.Stringer("change", m))
	a.Redirect(id)
	return nil
}

// resumeTest runs a stopped test again.
func resumeTest(a *web.ActionRequest) error {
	id := a.R.PathValue("id")
	if err := a.Core().Resume(a.R.Context(), a.Caller(), id); err != nil {
		return err
	}
	a.Log().Info("test resumed on the web", zap.String("job_id", id), zap.String("identity", a.Caller().Name))
	a.Redirect(id)
	return nil
}

// rescheduleTest submits a copy of a test and shows the copy.
func rescheduleTest(a *web.ActionRequest) error {
	id := a.R.PathValue("id")
	ref, err := a.Tests().Reschedule(a.R.Context(), a.Core(), a.Caller(), id)
	if err != nil {
		return err
	}
	a.Log().Info("test rescheduled on the web", zap.String("job_id", id), zap.String("copy", ref.ID), zap.String("identity", a.Caller().Name))
	a.Redirect(ref.ID)
	return nil
}
