package web

import (
	"html/template"
	"net/http"
	"net/url"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// jobOf returns job id's snapshot when is accepts it, or a page saying it
// is not what (with its article) and where its page is.
func (s *Server) jobOf(id, what string, is func(*arbiterv1.Job) bool) (*arbiterv1.Job, error) {
	snap, err := s.jobSnapshot(id, true)
	if err != nil {
		return nil, err
	}
	j, ok := snap.(*arbiterv1.Job)
	if !ok || !is(j) {
		return nil, pageError(http.StatusNotFound, "Not "+what, "Job %s is not %s (its page: /jobs/%s).", clipQ(id), what, url.PathEscape(id))
	}
	return j, nil
}

// testJob returns test id's snapshot, or a page saying it is not one.
func (s *Server) testJob(id string) (*arbiterv1.Job, error) {
	return s.jobOf(id, "a match or SPRT test", func(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyTest) })
}

type workerRow struct {
	*arbiterv1.WorkerIncidents
	Owner    string
	BenchSig uint64
	Version  string
	Known    bool
}

// testManage is what the test's forms need.
type testManage struct {
	manageForm
	Running, Stopped, Manage, CanSubmit, SPRT bool
	// Pending: waits for an approver; its manager may withdraw it.
	Pending     bool
	Games       uint64
	Tags, Notes string
}

// workerTable is the per-worker table of a test's or a tune's page.
type workerTable struct {
	ID   string // the table's element id
	Of   string // "test" or "tune"
	Rows template.HTML
}

// manageForm is what the priority and cancel forms need.
type manageForm struct {
	ID               string
	CSRF             string
	MinPrio, MaxPrio int
	Priority         int32
	Share            float64
	// CancelOnly leaves the priority form out, for jobs whose priority
	// cannot change (SPSA tunes).
	CancelOnly bool
}

// shownTest is test id as viewer v may see it: a reader who is not signed
// in gets its counts as they stood when none of its batches was held for
// a replay (gamepair's PublicSnapshot), so that the page does not single
// out a checked batch among those counted.
func (s *Server) shownTest(id string, v *view) (*arbiterv1.Job, error) {
	j, err := s.testJob(id)
	if err != nil || v.Viewer.Signed {
		return j, err
	}
	pub, ok := s.cfg.Games.PublicSnapshot(id)
	if !ok {
		return j, nil
	}
	if s.cfg.Core.Pending(id) {
		pub = proto.Clone(pub).(*arbiterv1.Job)
		jobproto.MarkPending(pub)
	}
	return pub, nil
}
