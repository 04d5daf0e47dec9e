package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Following jobs. A signed-in user follows a test, tune, perft job or
// dataset from its page (a POST with the CSRF token, as every form) and
// is told when it finishes, fails or is blocked: every page carries a
// small script (static/notify.js) that polls the user's own events
// (GET /me/events?after=ID, authorized by the session cookie alone, so
// it shows nobody else's) and shows each as a browser notification when
// the user granted the permission, and in a list on the page either way.
// The events are found by the webhooks' scan (package hooks), which also
// sends them to the user's webhooks of scope followed.

// FollowSource keeps follows and their events (hooks.Manager).
type FollowSource interface {
	Follow(ctx context.Context, id identity.Identity, jobID string) error
	Unfollow(ctx context.Context, id identity.Identity, jobID string) error
	Follows(ctx context.Context, id identity.Identity) ([]store.Follow, error)
	Events(ctx context.Context, id identity.Identity, after int64, limit int) ([]store.FollowEvent, error)
}

// followState is a job page's Follow or Unfollow button.
type followState struct {
	JobID     string
	Following bool
}

func (s *Server) followRoutes() {
	s.handle("POST /jobs/{id}/follow", s.action(s.followJob))
	s.handle("POST /jobs/{id}/unfollow", s.action(s.unfollowJob))
	s.handle("GET /follows", s.page(s.followsPage))
	s.handle("GET /me/events", s.myEvents)
}

// setFollow gives a job's page its Follow button, for a signed-in user.
func (s *Server) setFollow(r *http.Request, v *view) {
	if s.cfg.Follows == nil || !v.Viewer.CanSubmit() || len(v.watch) != 1 || !followable(v.tmpl) {
		return
	}
	st := &followState{JobID: v.watch[0]}
	if list, err := s.cfg.Follows.Follows(r.Context(), v.Viewer.identity()); err == nil {
		for _, f := range list {
			st.Following = st.Following || f.JobID == st.JobID
		}
	}
	v.Follow = st
}

func (s *Server) followsReady() error {
	if s.cfg.Follows == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "this coordinator keeps no follows")
	}
	return nil
}

func (s *Server) followJob(w http.ResponseWriter, r *http.Request, vw viewer) error {
	if err := s.followsReady(); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := s.cfg.Follows.Follow(r.Context(), vw.identity(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/jobs/"+id, http.StatusSeeOther)
	return nil
}

func (s *Server) unfollowJob(w http.ResponseWriter, r *http.Request, vw viewer) error {
	if err := s.followsReady(); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := s.cfg.Follows.Unfollow(r.Context(), vw.identity(), id); err != nil {
		return err
	}
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
	return nil
}

type followsData struct {
	Follows []store.Follow
}

// followsPage lists the jobs the signed-in user follows.
func (s *Server) followsPage(r *http.Request, v *view) error {
	v.Title, v.Nav, v.tmpl = "Followed jobs", "follows", "follows"
	if !v.Viewer.CanSubmit() {
		return apierr.New(apierr.Unauthenticated, apierr.ReasonBadCredential, "follows are shown to their user: sign in")
	}
	if err := s.followsReady(); err != nil {
		return err
	}
	list, err := s.cfg.Follows.Follows(r.Context(), v.Viewer.identity())
	if err != nil {
		return err
	}
	v.Page = &followsData{Follows: list}
	return nil
}

// EventJSON is an event of a followed job as /me/events shows it.
type EventJSON struct {
	ID        int64  `json:"id"`
	Job       string `json:"job"`
	Event     string `json:"event"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

// myEvents answers the signed-in user's events of followed jobs after
// the id in ?after=, as JSON: {"events": [...]}.
func (s *Server) myEvents(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) {
		writeJSON(w, status, map[string]string{"error": msg})
	}
	vw := s.viewerOf(r)
	if !vw.CanSubmit() {
		w.Header().Set("WWW-Authenticate", `Bearer realm="arbiter"`)
		fail(http.StatusUnauthorized, "no session: sign in to read the events of the jobs you follow")
		return
	}
	if s.cfg.Follows == nil {
		fail(http.StatusNotFound, "this coordinator keeps no follows")
		return
	}
	var after int64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			fail(http.StatusBadRequest, "after "+clipQ(a)+": want an event id, 0 or more")
			return
		}
		after = n
	}
	list, err := s.cfg.Follows.Events(r.Context(), vw.identity(), after, 0)
	if err != nil {
		we := asWebError(err)
		fail(we.Status, we.Msg)
		return
	}
	out := struct {
		Events []EventJSON `json:"events"`
	}{Events: []EventJSON{}}
	for _, e := range list {
		out.Events = append(out.Events, EventJSON{ID: e.ID, Job: e.JobID, Event: e.Event, Title: e.Title, URL: e.Path,
			CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano)})
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
