package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/datagenspec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// TestDatagenPage: the page a dataset's kind registers (kindPages) is
// served at /datagen/ID from a real coordinator whose worker generated
// the dataset, with its counts and the three histograms; another job's id
// there is refused as not a dataset.
func TestDatagenPage(t *testing.T) {
	cl := newCluster(t, clusterOpts{})
	cl.startWorker(t, "w1")
	c := cl.dial(t, cl.client)
	spec := datagenspec.Spec(datagen.DefaultSettings())
	spec.Engine = &arbiterv1.EngineSpec{Name: "dev", Command: matchspec.Embedded, Protocol: "builtin"}
	spec.Nodes, spec.Positions, spec.Seed = 300, 120, 7
	packed, err := anypb.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: jobkind.Datagen, Spec: packed})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()
	cl.waitJob(t, c, id, 2*time.Minute, "done", func(j *arbiterv1.Job) bool { return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE })

	b := cl.browser(t)
	b.signIn(cl.client)
	page := b.get("/datagen/" + id)
	if page.status != 200 {
		t.Fatalf("/datagen/%s: %d\n%s", id, page.status, page.body)
	}
	for _, want := range []string{"Dataset " + id, `id="score-hist"`, `id="length-hist"`, `id="pieces-hist"`, "120"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("/datagen/%s lacks %q", id, want)
		}
	}
	if other := b.get("/datagen/pnosuchjob00"); other.status == 200 {
		t.Errorf("/datagen/ of no dataset: %d", other.status)
	}
}
