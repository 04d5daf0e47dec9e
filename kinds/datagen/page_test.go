package datagen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/kinds/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestDatagenPage: the page the kind registers (web.RegisterPage) is
// served at /datagen/ID from a real coordinator whose worker generated
// the dataset, with its counts and the three histograms; another job's id
// there is refused as not a dataset.
func TestDatagenPage(t *testing.T) {
	farm := farmtest.Start(t, 1)
	c := farm.Client(t)
	spec := datagen.Spec(dg.DefaultSettings())
	spec.Engine = &arbiterv1.EngineSpec{Name: "dev", Command: matchspec.Embedded, Protocol: "builtin"}
	spec.Nodes, spec.Positions, spec.Seed = 300, 120, 7
	packed, err := anypb.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := c.Jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: datagen.Kind, Spec: packed})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()
	if _, err := c.WatchJob(ctx, id, clusterclient.Interactive, func(*arbiterv1.Job) {}); err != nil {
		t.Fatal(err)
	}
	status, body := farm.Do(t, "GET", "/datagen/"+id, nil)
	if status != 200 {
		t.Fatalf("/datagen/%s: %d\n%s", id, status, body)
	}
	for _, want := range []string{"Dataset " + id, `id="score-hist"`, `id="length-hist"`, `id="pieces-hist"`, "120", `action="/jobs/` + id + `/follow`} {
		if !strings.Contains(body, want) {
			t.Errorf("/datagen/%s lacks %q", id, want)
		}
	}
	if status, _ := farm.Do(t, "GET", "/datagen/pnosuchjob00", nil); status == 200 {
		t.Errorf("/datagen/ of no dataset: %d", status)
	}
}
