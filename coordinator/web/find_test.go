package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// evenSpec is an SPRT of the builtin engine against itself under another
// name: it decides only after very many games, so it runs while the test
// changes, stops, resumes and copies it.
func evenSpec(t testing.TB) *arbiterv1.MatchSpec {
	s := testSpec(t, 600, 0, true)
	s.EngineB = &arbiterv1.EngineSpec{Name: "base", Command: s.EngineA.GetCommand(), Protocol: "builtin"}
	s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 2, Alpha: 0.001, Beta: 0.001, Model: "normalized"}
	s.Tags, s.Notes = []string{"NNUE", "smoke"}, "first try of the\nnew net"
	return s
}

func mustContain(t *testing.T, what string, r response, status int, want ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d: %.3000s", what, r.status, status, r.body)
	}
	for _, w := range want {
		if !strings.Contains(r.body, w) {
			t.Fatalf("%s: page lacks %q: %.4000s", what, w, r.body)
		}
	}
}

func mustLack(t *testing.T, what string, r response, lack ...string) {
	t.Helper()
	for _, l := range lack {
		if strings.Contains(r.body, l) {
			t.Fatalf("%s: page shows %q", what, l)
		}
	}
}

// A test is found by tag, user, engine, verdict, time control, date and
// text (pages and ListJobs); changed while it runs by its submitter
// (throughput, priority, tags, notes; bad values named and nothing
// changed; another client refused); stopped, after which every place its
// result shows says the SPRT was stopped by hand; resumed with its games
// kept; and rescheduled as a copy both pages link.
func TestFindChangeStopReschedule(t *testing.T) {
	cl := newCluster(t, clusterOpts{})
	ctx := context.Background()
	cl.startWorker(t, "w1")
	other := testSpec(t, 300, 4, false)
	other.Tags = []string{"other"}
	dave := identity.Identity{Name: "dave", Role: identity.Client}
	matchRef, err := cl.c.Core.Create(ctx, dave, testview.Kind, other)
	if err != nil {
		t.Fatal(err)
	}
	client := cl.dial(t, cl.client)
	cl.waitJob(t, client, matchRef.ID, 60*time.Second, "done", func(j *arbiterv1.Job) bool { return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE })
	sprtRef, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, evenSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	id := sprtRef.ID
	cl.waitJob(t, client, id, 60*time.Second, "playing", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetGames() > 0 })

	b := cl.browser(t)
	b.signIn(cl.client)
	row := `<tr data-job="` + id + `">`
	mrow := `<tr data-job="` + matchRef.ID + `">`
	today := time.Now().UTC().Format(time.DateOnly)
	for _, q := range []string{"/?tag=nnue", "/?tag=smoke&kind=test", "/users/carol", "/?submitter=carol&state=running",
		"/?engine=BASE", "/?verdict=none", "/?q=new+net", "/?q=SMOKE", "/?tc=nodes%3D600"} {
		r := b.get(q)
		mustContain(t, q, r, http.StatusOK, row)
		mustLack(t, q, r, mrow)
	}
	for _, q := range []string{"/?tag=other", "/users/dave", "/?engine=weak&state=done"} {
		r := b.get(q)
		mustContain(t, q, r, http.StatusOK, mrow)
		mustLack(t, q, r, row)
	}
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	mustLack(t, "to yesterday", b.get("/?to="+yesterday), row, mrow)
	mustContain(t, "today", b.get("/?from="+today+"&to="+today), http.StatusOK, row, mrow)
	mustContain(t, "list", b.get("/"), http.StatusOK, row, mrow, `<a class="tag" href="/?tag=nnue">nnue</a>`, `<a href="/users/carol">carol</a>`)
	for q, field := range map[string]string{"/?verdict=maybe": "verdict", "/?state=paused": "state", "/?from=yesterday": "from",
		"/?cursor=abc": "cursor", "/?kind=nope": "kind", "/?engine=" + strings.Repeat("x", 200): "engine"} {
		mustContain(t, q, b.get(q), http.StatusBadRequest, field)
	}
	lj := func(req *arbiterv1.ListJobsRequest) []string {
		t.Helper()
		resp, err := client.Jobs.ListJobs(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range resp.GetJobs() {
			ids = append(ids, j.GetJobId())
		}
		return ids
	}
	if got := lj(&arbiterv1.ListJobsRequest{Tag: "nnue"}); len(got) != 1 || got[0] != id {
		t.Fatalf("ListJobs tag nnue: %v", got)
	}
	if got := lj(&arbiterv1.ListJobsRequest{Submitter: "dave", Verdict: ""}); len(got) != 1 || got[0] != matchRef.ID {
		t.Fatalf("ListJobs user dave: %v", got)
	}
	// Keyset pages: one job a page, the cursor leads to the next.
	first, err := client.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: 1, Kind: "test"})
	if err != nil || len(first.GetJobs()) != 1 || first.GetNextCursor() == "" {
		t.Fatalf("first page: %v %v", first, err)
	}
	second, err := client.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: 1, Kind: "test", Cursor: first.GetNextCursor()})
	if err != nil || len(second.GetJobs()) != 1 || second.GetJobs()[0].GetJobId() == first.GetJobs()[0].GetJobId() || second.GetNextCursor() != "" {
		t.Fatalf("second page: %v %v", second, err)
	}
	if _, err := client.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Verdict: "maybe"}); err == nil || !strings.Contains(err.Error(), "verdict") {
		t.Fatalf("bad verdict: %v", err)
	}

	// Change it while it runs.
	page := b.get("/tests/" + id)
	mustContain(t, "test page", page, http.StatusOK, `id="modify"`, "Stop this test", "Reschedule", "first try of the", `href="/?tag=smoke"`)
	csrf := b.csrf()
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {csrf}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, c := range []struct {
		form  url.Values
		field string
	}{
		{form("priority", "0", "throughput", "-1"), "throughput"},
		{form("priority", "5000", "throughput", "1"), "priority"},
		{form("games", "7"), "games"},
		{form("tags", "ok bad!tag"), "tag"},
		{form("notes", strings.Repeat("n", 2001)), "notes"},
	} {
		r := b.post("/tests/"+id+"/modify", c.form)
		mustContain(t, "bad "+c.field, r, http.StatusBadRequest, c.field)
	}
	if j := cl.job(t, client, id); j.GetMatch().GetThroughput() != 1 || len(j.GetMatch().GetTags()) != 2 {
		t.Fatalf("a refused change changed the test: %v", j.GetMatch())
	}
	r := b.post("/tests/"+id+"/modify", form("priority", "5", "throughput", "3", "tags", "nnue, long", "notes", "second try"))
	if r.status != http.StatusSeeOther {
		t.Fatalf("modify: %d %s", r.status, r.body)
	}
	j := cl.job(t, client, id)
	if m := j.GetMatch(); m.GetThroughput() != 3 || m.GetPriority() != 5 || strings.Join(m.GetTags(), ",") != "nnue,long" || m.GetNotes() != "second try" {
		t.Fatalf("after modify: %v", m)
	}
	mustContain(t, "after modify", b.get("/tests/"+id), http.StatusOK, `<span data-field="throughput">3</span>`, `href="/?tag=long"`, "second try")
	// Another client may not change carol's test.
	daveTok, err := cl.c.Credentials.Create(ctx, identity.Bootstrap, "dave", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	db := cl.browser(t)
	db.signIn(daveTok)
	r = db.post("/tests/"+id+"/modify", url.Values{"csrf": {db.csrf()}, "throughput": {"9"}})
	mustContain(t, "dave modifies", r, http.StatusForbidden, "submitted by carol")
	// An approver may: the page offers the form and the core takes it.
	if err := cl.c.Accounts.Add(ctx, identity.Bootstrap, "victor", secret, accounts.Approver); err != nil {
		t.Fatal(err)
	}
	vb := cl.browser(t)
	vb.signInAccount("victor", secret)
	mustContain(t, "approver's test page", vb.get("/tests/"+id), http.StatusOK, `id="modify"`, "Stop this test")
	r = vb.post("/tests/"+id+"/modify", url.Values{"csrf": {vb.csrf()}, "priority": {"6"}, "throughput": {"3"}, "games": {"0"}, "tags": {"nnue long"}, "notes": {"second try"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("approver modifies: %d %s", r.status, r.body)
	}
	if p := cl.job(t, client, id).GetMatch().GetPriority(); p != 6 {
		t.Fatalf("approver's change: priority %d", p)
	}
	thr := 7.0
	if _, err := client.Jobs.ModifyJob(ctx, &arbiterv1.ModifyJobRequest{JobId: id, Throughput: &thr}); err != nil {
		t.Fatal(err)
	}

	// Stop it: marked as stopped by hand everywhere its result shows.
	r = b.post("/jobs/"+id+"/cancel", form())
	if r.status != http.StatusSeeOther {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	j = cl.job(t, client, id)
	if !j.GetMatchProgress().GetStoppedByHand() {
		t.Fatalf("stopped SPRT not marked: %v", j.GetMatchProgress())
	}
	games := j.GetMatchProgress().GetGames()
	mustContain(t, "stopped page", b.get("/tests/"+id), http.StatusOK, `id="stopped-by-hand"`, "SPRT stopped by hand", "Resume this test")
	mustContain(t, "stopped in list", b.get("/?tag=nnue"), http.StatusOK, "SPRT stopped by hand")
	var sb strings.Builder
	jobreport.PrintTest(&sb, j)
	if !strings.Contains(sb.String(), "stopped by hand") {
		t.Fatalf("status lacks the mark:\n%s", sb.String())
	}
	js := jobreport.NewJobJSON(j)
	if js.Test == nil || !js.Test.StoppedByHand {
		t.Fatalf("JSON lacks the mark: %+v", js.Test)
	}
	mustContain(t, "stopped verdict", b.get("/?verdict=none&state=cancelled"), http.StatusOK, row)

	// Resume: running again with its games.
	r = b.post("/tests/"+id+"/resume", form())
	if r.status != http.StatusSeeOther {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	j = cl.waitJob(t, client, id, 60*time.Second, "playing again", func(j *arbiterv1.Job) bool {
		return j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING && j.GetMatchProgress().GetGames() > games
	})
	if j.GetMatchProgress().GetStoppedByHand() || j.GetMatch().GetThroughput() != 7 {
		t.Fatalf("resumed: %v", j)
	}
	mustContain(t, "resume twice", b.post("/tests/"+id+"/resume", form()), http.StatusConflict, "cancelled")
	// The list saw it cancelled (and keeps what it finds finished jobs by):
	// resumed, it is found running again.
	mustContain(t, "resumed in list", b.get("/?state=running&tag=nnue"), http.StatusOK, row)
	mustLack(t, "resumed in list", b.get("/?state=cancelled"), row)

	// Reschedule: a copy that links to the original, both ways.
	r = b.post("/tests/"+id+"/reschedule", form())
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/tests/") {
		t.Fatalf("reschedule: %d %s %s", r.status, r.location, r.body)
	}
	copyID := strings.TrimPrefix(r.location, "/tests/")
	mustContain(t, "copy page", b.get(r.location), http.StatusOK, `id="copy-of"><a href="/tests/`+id+`">`, "nnue")
	mustContain(t, "original page", b.get("/tests/"+id), http.StatusOK, `id="copied-as"><a href="/tests/`+copyID+`">`)
	if c := cl.job(t, client, copyID); c.GetMatch().GetRescheduledFrom() != id || c.GetSubmitter() != "carol" {
		t.Fatalf("copy: %v", c.GetMatch())
	}

	// Each change, stop, resume and reschedule is in the store's audit log.
	for _, want := range []struct{ actor, action, detail string }{
		{"carol", "job.modify", "priority 5, throughput 3"},
		{"victor", "job.modify", "priority 6"},
		{"carol", "job.modify", "throughput 7"},
		{"carol", "job.cancel", ""},
		{"carol", "job.resume", ""},
		{"carol", "job.reschedule", "copied as " + copyID},
	} {
		mustAudit(t, cl, want.actor, want.action, id, want.detail)
	}
	// The approver's form carried throughput, tags and notes as they
	// stood: the audit log lists only the priority, which changed.
	log, err := cl.st.AuditLog(ctx, store.AuditFilter{Actor: "victor", Action: "job.modify", Target: id, Limit: 10})
	if err != nil || len(log) != 1 || log[0].Detail != "priority 6" {
		t.Errorf("the approver's change in the audit log: %v %+v; want exactly \"priority 6\"", err, log)
	}
}

// mustAudit fails t unless the store's audit log has an entry of action
// on target by actor whose detail contains detail.
func mustAudit(t *testing.T, cl *cluster, actor, action, target, detail string) {
	t.Helper()
	log, err := cl.st.AuditLog(context.Background(), store.AuditFilter{Actor: actor, Action: action, Target: target, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		if strings.Contains(e.Detail, detail) {
			return
		}
	}
	t.Errorf("audit log lacks %s %s %s (%q): %+v", actor, action, target, detail, log)
}
