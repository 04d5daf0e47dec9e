package web

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A test's page shows the anytime-valid interval of its counts, a match
// ended by --stop precision= says so, and a take of a group lists the
// group's takes with their split alpha. The control: a match without a
// precision stop or a group has neither row.
func TestPageShowsAnytimeIntervalPrecisionAndGroup(t *testing.T) {
	cl := newCluster(t, clusterOpts{})
	ctx := context.Background()
	cl.startWorker(t, "w1")
	client := cl.dial(t, cl.client)
	b := cl.browser(t)
	b.signIn(cl.client)

	precise := testSpec(t, 300, 0, false)
	precise.StopPrecisionElo = 900
	ref, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, precise)
	if err != nil {
		t.Fatal(err)
	}
	j := cl.waitJob(t, client, ref.ID, 90*time.Second, "done", func(j *arbiterv1.Job) bool { return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE })
	a := j.GetMatchProgress().GetAnytime()
	if !j.GetMatchProgress().GetStoppedByPrecision() || a == nil || a.GetEloHigh()-a.GetEloLow() >= 900 {
		t.Fatalf("precision stop: %v", j.GetMatchProgress())
	}
	mustContain(t, "precision page", b.get("/tests/"+ref.ID), http.StatusOK, `id="anytime"`,
		fmt.Sprintf(`<span data-field="anytime_elo_low">%.2f</span>`, a.GetEloLow()),
		`id="stop-precision"`, "narrower than 900 Elo", "reached, the test stopped there")

	fixed := testSpec(t, 300, 4, false)
	ref, err = cl.c.Core.Create(ctx, cl.carol(), testview.Kind, fixed)
	if err != nil {
		t.Fatal(err)
	}
	cl.waitJob(t, client, ref.ID, 90*time.Second, "done", func(j *arbiterv1.Job) bool { return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE })
	r := b.get("/tests/" + ref.ID)
	mustContain(t, "match page", r, http.StatusOK, `id="anytime"`)
	mustLack(t, "match page", r, `id="stop-precision"`, `id="group"`)

	take := func() *arbiterv1.MatchSpec {
		s := testSpec(t, 300, 2, true)
		s.Group, s.GroupTakes = "rfp", 2
		return s
	}
	first, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, take())
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "first take", b.get("/tests/"+first.ID), http.StatusOK, `id="group"`, "<strong>rfp</strong>: 2 takes declared", "alpha 0.025")
	second, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, take())
	if err != nil {
		t.Fatal(err)
	}
	r = b.get("/tests/" + first.ID)
	mustContain(t, "group page", r, http.StatusOK, `<a href="/tests/`+first.ID+`">`, `<a href="/tests/`+second.ID+`">`)
	if _, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, take()); err == nil {
		t.Fatal("a third take of a group of two was accepted")
	}
}
