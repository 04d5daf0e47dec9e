package kindtest

// The fake kind: every side of a kind, registered from this test binary's
// init as a folder under kinds/ would from its own, and nowhere else. Its
// jobs carry a text (the spec, a StringValue) and never get a unit: no
// worker offers its capability, so they show blocked.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

const (
	fakeKind = "fake"
	// fakeFamily is shown alike only with itself.
	fakeFamily jobkind.Family = "fake"
	// fakeCapability is what a worker must offer to run a fake job: none
	// does.
	fakeCapability = "fake-1"
	fakeRow        = "Fake jobs (kindtest)"
)

//go:embed templates/fake.html
var fakeTemplates embed.FS

//go:embed fake.schema.json
var fakeSchema []byte

func init() {
	workload.Register(workload.Kind{Name: fakeKind, Spec: func() proto.Message { return &wrapperspb.StringValue{} },
		New: func(d workload.Deps) (core.Workload, error) {
			return &fakeWorkload{st: d.Store, now: d.Now, jobs: map[string]*fakeJob{}}, nil
		},
		Runs: workload.SubmittedPrograms, Order: 90,
		Example: func(engine, _ string) []string { return []string{fakeKind, "--text", engine} },
		Dashboard: &workload.DashboardRow{Title: fakeRow, Panels: []workload.DashboardPanel{{Title: "Fake jobs", Description: "Jobs of the fake kind.",
			Unit: "none", Stat: true, Queries: []workload.DashboardQuery{{Expr: `sum(arbiter_jobs{kind="fake"})`}}, Width: 6, Height: 6}}}})
	jobkind.Register(jobkind.Kind{Name: fakeKind, Family: fakeFamily, Path: "/fake/", Noun: "fake job"})
	jobreport.RegisterReport(fakeFamily, jobreport.Report{Order: 90, Header: "FAKE\tSTATE\tTEXT", Row: fakeListRow, Detail: printFake, Wait: waitFake,
		DetailJSON: func(j *arbiterv1.Job) any { return map[string]string{"text": fakeText(j)} }, DetailSchema: fakeSchema})
	web.RegisterPage(web.Page{Name: fakeKind, Templates: fakeTemplates, Pattern: "GET /fake/{id}", Followable: true, Render: renderFake})
	clicmd.RegisterSubmit(fakeKind, newSubmitFakeCommand)
	resultblock.Register(fakeFamily, func(j *arbiterv1.Job, _ resultblock.Style) []string { return []string{"Fake | " + fakeText(j)} })
}

// fakeText is a fake job's text, from its detail.
func fakeText(j *arbiterv1.Job) string {
	v := &wrapperspb.StringValue{}
	if j.GetDetail().UnmarshalTo(v) != nil {
		return ""
	}
	return v.GetValue()
}

func fakeListRow(j *arbiterv1.Job) string {
	return fmt.Sprintf("%s\t%s\t%s", j.GetJobId(), jobreport.ListState(j), fakeText(j))
}

func printFake(out io.Writer, j *arbiterv1.Job) {
	fmt.Fprintf(out, "Fake job: %s\nState:    %s\nText:     %s\n", j.GetJobId(), jobreport.StateName(j.GetState()), fakeText(j))
}

// waitFake is the fake family's Wait (status JOB --wait): it follows the
// job to its end (a fake job ends only when cancelled) and prints how it
// ended; a job that did not end done is exit status 1.
func waitFake(ctx context.Context, c *clusterclient.Client, j *arbiterv1.Job, o jobreport.WaitOptions) (*arbiterv1.Job, error) {
	final, err := c.WatchJob(ctx, j.GetJobId(), jobreport.WatchPolicy(c, o.Progress), func(*arbiterv1.Job) {})
	if err != nil {
		return nil, cliexit.Call(c, "watch "+j.GetJobId(), err)
	}
	fmt.Fprintf(o.Out, "Fake job %s ended %s: %s\n", final.GetJobId(), jobreport.StateName(final.GetState()), fakeText(final))
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		return final, cliexit.Failure("job %s %s", final.GetJobId(), jobreport.StateName(final.GetState()))
	}
	return final, nil
}

func renderFake(p *web.PageRequest) error {
	id := p.R.PathValue("id")
	j, err := p.Job(id, "a fake job", func(j *arbiterv1.Job) bool { return jobkind.Is(j, fakeFamily) })
	if err != nil {
		return err
	}
	p.Show("Fake job "+id, struct{ Text, State string }{fakeText(j), p.State(j)}, j)
	return nil
}

func newSubmitFakeCommand() *cobra.Command {
	var (
		client clicmd.ClientFlags
		text   string
	)
	cmd := &cobra.Command{Use: fakeKind, Short: "Submit a fake job (kindtest)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if text == "" {
				return clicmd.Required("text", "what the fake job carries")
			}
			ctx, c, done, err := client.Session()
			if err != nil {
				return err
			}
			defer done()
			spec, err := anypb.New(wrapperspb.String(text))
			if err != nil {
				return err
			}
			resp, err := c.Jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: fakeKind, Spec: spec})
			if err != nil {
				return cliexit.Call(c, "submit", err)
			}
			return jobreport.WriteJob(cmd.OutOrStdout(), resp.GetJob())
		}}
	client.Add(cmd.Flags())
	cmd.Flags().StringVar(&text, "text", "", "the text the fake job carries")
	return cmd
}

// fakeWorkload keeps its jobs in memory, numbered by the store's jobs
// table as every kind's are; it never has a unit to lease.
type fakeWorkload struct {
	st   *store.Store
	now  func() time.Time
	mu   sync.Mutex
	jobs map[string]*fakeJob
}

type fakeJob struct {
	rec  *store.Job
	text string
}

func (w *fakeWorkload) Kind() string                                                     { return fakeKind }
func (w *fakeWorkload) Load(context.Context) ([]core.JobRef, error)                      { return nil, nil }
func (w *fakeWorkload) Candidates(_ *core.Worker, out []core.Candidate) []core.Candidate { return out }
func (w *fakeWorkload) Take(string, *core.Worker, time.Time) (string, any, bool) {
	return "", nil, false
}
func (w *fakeWorkload) Ended(core.Lease, core.End)                   {}
func (w *fakeWorkload) Locate(string) (string, bool)                 { return "", false }
func (w *fakeWorkload) Adopt(core.Lease, *core.Worker) core.Adoption { return core.AdoptCancelled }
func (w *fakeWorkload) Result(context.Context, core.ResultCall) (core.Outcome, error) {
	return core.Outcome{Verdict: core.Discarded}, nil
}

func (w *fakeWorkload) Create(ctx context.Context, spec any, submitter string) (core.JobRef, error) {
	s, ok := spec.(*wrapperspb.StringValue)
	if !ok || s.GetValue() == "" {
		return core.JobRef{}, apierr.Invalid("spec: a fake job needs a text")
	}
	b := make([]byte, 6)
	rand.Read(b)
	rec := &store.Job{ID: "f" + hex.EncodeToString(b), Kind: fakeKind, State: store.StateRunning, CreatedAt: w.now(), RootMoves: []string{},
		Submitter: submitter}
	if err := w.st.CreateKindJob(ctx, rec, func(context.Context, *sql.Tx) error { return nil }); err != nil {
		return core.JobRef{}, apierr.Store(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs[rec.ID] = &fakeJob{rec: rec, text: s.GetValue()}
	return core.JobRef{ID: rec.ID, Seq: rec.Seq, Submitter: submitter}, nil
}

// job is a copy of fake job jobID, read under the workload's lock (nil:
// none), for the calls that only read it.
func (w *fakeWorkload) job(jobID string) *fakeJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return nil
	}
	rec := *j.rec
	return &fakeJob{rec: &rec, text: j.text}
}

func (w *fakeWorkload) Cancel(_ context.Context, jobID, reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "no fake job %s", jobID)
	}
	j.rec.State, j.rec.Error, j.rec.FinishedAt = store.StateCancelled, reason, w.now()
	return nil
}

func (w *fakeWorkload) Snapshot(jobID string, _ bool) (any, bool) {
	j := w.job(jobID)
	if j == nil {
		return nil, false
	}
	detail, _ := anypb.New(wrapperspb.String(j.text))
	out := &arbiterv1.Job{JobId: j.rec.ID, Kind: fakeKind, Submitter: j.rec.Submitter, Error: j.rec.Error, CreatedAt: timestamppb.New(j.rec.CreatedAt),
		State: arbiterv1.JobState_JOB_STATE_RUNNING, Detail: detail, Progress: &arbiterv1.JobProgress{}}
	if j.rec.State == store.StateCancelled {
		out.State, out.FinishedAt = arbiterv1.JobState_JOB_STATE_CANCELLED, timestamppb.New(j.rec.FinishedAt)
	}
	return out, true
}

func (w *fakeWorkload) Describe(jobID string) (core.JobInfo, bool) {
	j := w.job(jobID)
	if j == nil {
		return core.JobInfo{}, false
	}
	return core.JobInfo{ID: j.rec.ID, Kind: fakeKind, State: j.rec.State, Submitter: j.rec.Submitter, Seq: j.rec.Seq, Created: j.rec.CreatedAt}, true
}

func (w *fakeWorkload) Stats() core.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := core.Stats{Jobs: map[core.JobKey]int{}, Units: map[string]int{}}
	for _, j := range w.jobs {
		st.Jobs[core.JobKey{Kind: fakeKind, State: j.rec.State}]++
	}
	return st
}

// Needs: a capability no worker offers.
func (w *fakeWorkload) Needs(jobID string) (core.Need, bool) {
	j := w.job(jobID)
	if j == nil || j.rec.State != store.StateRunning {
		return core.Need{}, false
	}
	return core.Need{Caps: []string{fakeCapability}}, true
}
