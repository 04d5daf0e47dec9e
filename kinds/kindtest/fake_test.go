package kindtest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/jobfind"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/scripts/dashgen"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestFakeKindInEveryRegistry: a kind registered only in this test binary
// (fakekind_test.go: workload, report, page, submit command, capability
// need, approval rule, dashboard row) is found by a real coordinator
// serving gRPC, pages and the JSON API on loopback, and by its clients, in
// every place a kind is listed: `submit fake` creates a job; status lists
// and prints it and --kind takes it; its --json carries the detail object
// its report makes, and --block the block it registered; POST /api/v1/jobs with kind fake creates one; its page
// is served and followable, and follows take it; status says it is blocked
// on the capability no worker offers; with approvals on, a user's fake job
// waits for an approver; the overview dashboard has its row; status JOB
// --wait follows a fake job, and names fake among the kinds it can follow
// (checkFakeWait). Controls: a
// kind nobody registered is refused by the API and by --kind, and the
// fake page refuses a job of another kind.
func TestFakeKindInEveryRegistry(t *testing.T) {
	farm := farmtest.Start(t, 1, func(c *localcluster.Config) { c.Server.Accounts.Approval = true })
	c := farm.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// submit: the command the kind registered, run against the farm.
	viaCLI := submitFakeByCLI(t, farm)

	// The API's one route for every kind.
	status, body := farm.Do(t, "POST", "/api/v1/jobs", []byte(`{"kind": "fake", "spec": "hello from the API"}`))
	if status != 201 || !strings.Contains(body, `"kind":"fake"`) || !strings.Contains(body, `"detail":{"text":"hello from the API"}`) {
		t.Fatalf("POST /api/v1/jobs kind fake: %d %s", status, body)
	}
	if status, body := farm.Do(t, "POST", "/api/v1/jobs", []byte(`{"kind": "fakeless", "spec": "x"}`)); status != 400 || !strings.Contains(body, "fakeless") {
		t.Errorf("POST /api/v1/jobs of a kind nobody registered: %d %s; want 400 naming it", status, body)
	}

	// status: the list (the kind's own table), --kind, the detail view and --json.
	list, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Kind: fakeKind})
	if err != nil {
		t.Fatalf("status --kind fake: %v", err)
	}
	if len(list.GetJobs()) != 2 {
		t.Errorf("status --kind fake: %d jobs, want 2", len(list.GetJobs()))
	}
	var out bytes.Buffer
	if err := jobreport.PrintJobs(&out, list.GetJobs()); err != nil || !strings.Contains(out.String(), "FAKE") ||
		!strings.Contains(out.String(), "hello from the CLI") {
		t.Errorf("status list: %v\n%s", err, out.String())
	}
	if _, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Kind: "fakeless"}); err == nil {
		t.Error("status --kind fakeless: no error for a kind nobody registered")
	}
	if !contains(jobfind.Kinds(), fakeKind) {
		t.Errorf("jobfind.Kinds() = %v, no fake", jobfind.Kinds())
	}
	j, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: viaCLI.JobID})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	jobreport.PrintJob(&out, j.GetJob())
	if !strings.Contains(out.String(), "Fake job: "+viaCLI.JobID) {
		t.Errorf("status JOB:\n%s", out.String())
	}
	out.Reset()
	jobreport.WriteJob(&out, j.GetJob())
	if !strings.Contains(out.String(), `"detail":{"text":"hello from the CLI"}`) {
		t.Errorf("status JOB --json: %s", out.String())
	}
	// status JOB --block: the block the kind registered, through the API.
	if status, body := farm.Do(t, "GET", "/api/v1/jobs/"+viaCLI.JobID+"/block", nil); status != 200 || body != "Fake | hello from the CLI\n" {
		t.Errorf("GET /api/v1/jobs/%s/block: %d %q", viaCLI.JobID, status, body)
	}

	// The need: no worker offers the kind's capability, and status says so.
	blocked := ""
	for deadline := time.Now().Add(time.Minute); blocked == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		j, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: viaCLI.JobID})
		if err != nil {
			t.Fatal(err)
		}
		blocked = j.GetJob().GetProgress().GetBlocked()
	}
	if !strings.Contains(blocked, fakeCapability) {
		t.Errorf("blocked %q: want the capability %s no worker offers", blocked, fakeCapability)
	}

	// The page, its Follow button, and following it.
	status, body = farm.Do(t, "GET", "/fake/"+viaCLI.JobID, nil)
	if status != 200 || !strings.Contains(body, `<p id="fake-text">hello from the CLI</p>`) || !strings.Contains(body, `action="/jobs/`+viaCLI.JobID+`/follow`) {
		t.Errorf("GET /fake/%s: %d\n%.3000s", viaCLI.JobID, status, body)
	}
	if status, _ := farm.Do(t, "GET", "/jobs/"+viaCLI.JobID, nil); status != 200 {
		t.Errorf("GET /jobs/%s (redirect to the kind's page): %d", viaCLI.JobID, status)
	}
	if err := farm.Coordinator().Hooks.Follow(ctx, identity.Bootstrap, viaCLI.JobID); err != nil {
		t.Errorf("following a fake job: %v", err)
	}
	perft, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := farm.Do(t, "GET", "/fake/"+perft.GetJob().GetJobId(), nil); status != 404 {
		t.Errorf("GET /fake/ of a perft job: %d, want 404", status)
	}

	checkFakeApprovalAndDashboard(ctx, t, farm)
	checkFakeWait(ctx, t, c, viaCLI.JobID)
}

// checkFakeWait: the fake family registers a Wait, so status JOB --wait
// follows a fake job (jobreport.WaiterOf, as status calls it) to its end
// through the farm, and the kinds that can be waited for, which a job of
// another kind is refused with, name it beside perft. The control: a job
// of a kind nobody registered has no waiter, and its refusal names the
// job and its kind.
func checkFakeWait(ctx context.Context, t *testing.T, c *clusterclient.Client, id string) {
	t.Helper()
	if got := jobreport.WaitKinds(); !contains(got, fakeKind) || !contains(got, "perft") {
		t.Errorf("WaitKinds() = %v; want fake and perft", got)
	}
	_, err := jobreport.WaiterOf(&arbiterv1.Job{JobId: "x1", Kind: "fakeless"})
	if want := "job x1 (kind fakeless) cannot be waited for; the kinds that can: "; err == nil || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), fakeKind) || cliexit.Code(err, -1) != 2 {
		t.Errorf("WaiterOf a job of kind fakeless: %v (exit %d); want %q naming fake, exit status 2", err, cliexit.Code(err, -1), want)
	}
	j, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	wait, err := jobreport.WaiterOf(j.GetJob())
	if err != nil {
		t.Fatalf("WaiterOf a fake job: %v", err)
	}
	if _, err := c.Jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: id}); err != nil {
		t.Fatal(err)
	}
	var out, progress bytes.Buffer
	final, err := wait(ctx, c, j.GetJob(), jobreport.WaitOptions{Out: &out, Progress: &progress})
	if want := "Fake job " + id + " ended cancelled: hello from the CLI\n"; out.String() != want || cliexit.Code(err, -1) != 1 ||
		final.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED {
		t.Errorf("waiting for a cancelled fake job: %q, %v (exit %d); want %q, exit status 1", out.String(), err, cliexit.Code(err, -1), want)
	}
}

// submitFakeByCLI runs `submit fake` (the command the kind registered)
// against the farm and returns the job it printed.
func submitFakeByCLI(t *testing.T, farm *farmtest.Farm) jobreport.JobJSON {
	t.Helper()
	var submit *bytes.Buffer
	for _, cmd := range clicmd.SubmitCommands() {
		if cmd.Name() != fakeKind {
			continue
		}
		submit = &bytes.Buffer{}
		cmd.SetOut(submit)
		cmd.SetArgs([]string{"--coordinator", farm.Addr(), "--token", farm.Token(), "--text", "hello from the CLI"})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("submit fake: %v", err)
		}
	}
	if submit == nil {
		t.Fatalf("no `submit fake` among the registered submit commands %v", clicmd.SubmitKinds())
	}
	var viaCLI jobreport.JobJSON
	if err := json.Unmarshal(submit.Bytes(), &viaCLI); err != nil || viaCLI.Kind != fakeKind || viaCLI.JobID == "" {
		t.Fatalf("submit fake printed %q: %v", submit, err)
	}

	return viaCLI
}

// checkFakeApprovalAndDashboard: the kind says it runs submitted
// programs, so a user's job waits for an approver; the overview
// dashboard has the kind's row.
func checkFakeApprovalAndDashboard(ctx context.Context, t *testing.T, farm *farmtest.Farm) {
	t.Helper()
	if !workload.RunsSubmittedCode(fakeKind) {
		t.Error("RunsSubmittedCode(fake) is false")
	}
	co := farm.Coordinator()
	if err := co.Accounts.Add(ctx, identity.Bootstrap, "ursula", "correct horse battery", accounts.User); err != nil {
		t.Fatal(err)
	}
	held, err := co.Core.Create(ctx, identity.Identity{Name: "ursula", Role: identity.Client}, fakeKind, wrapperspb.String("from a user"))
	if err != nil {
		t.Fatal(err)
	}
	if !co.Core.Pending(held.ID) {
		t.Errorf("a user's fake job %s does not wait for an approver", held.ID)
	}

	found := false
	for _, p := range dashgen.Overview().Panels {
		found = found || p.Title == fakeRow
	}
	if !found {
		t.Errorf("the overview dashboard has no row %q", fakeRow)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
