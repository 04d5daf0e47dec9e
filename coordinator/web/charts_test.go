package web

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A test page says "Charts appear once games are counted." only when no
// chart is drawn: after one batch the LLR chart is drawn (the origin and
// one point) while the Elo chart still needs a second point, and the
// sentence is not beside it; a test with no game yet (the control) says it.
// The "bench" incident of that batch says what its number is.
func TestChartsPendingSentenceOnlyWithoutCharts(t *testing.T) {
	const pending = "Charts appear once games are counted."
	cl := newCluster(t, clusterOpts{})
	ctx := context.Background()
	waiting, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, testSpec(t, 200, 0, true))
	if err != nil {
		t.Fatal(err)
	}
	b := cl.browser(t)
	if page := b.get("/tests/" + waiting.ID); page.status != 200 || !strings.Contains(page.body, pending) {
		t.Errorf("a test with no game: %d, want %q on its page", page.status, pending)
	}
	if err := cl.c.Core.Cancel(ctx, cl.carol(), waiting.ID, "charts test"); err != nil {
		t.Fatal(err)
	}
	oneBatch, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, testSpec(t, 200, 4, true))
	if err != nil {
		t.Fatal(err)
	}
	cl.startWorker(t, "charts")
	c := cl.dial(t, cl.client)
	cl.waitJob(t, c, oneBatch.ID, 3*time.Minute, "done", func(j *arbiterv1.Job) bool { return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE })
	page := b.get("/tests/" + oneBatch.ID)
	if page.status != 200 || !strings.Contains(page.body, "LLR against games") {
		t.Fatalf("a test after one batch: %d, no LLR chart", page.status)
	}
	if strings.Contains(page.body, pending) {
		t.Errorf("%q beside the drawn LLR chart", pending)
	}
	// The worker's bench speed, recorded with its first batch, says what
	// its number is.
	bench := regexp.MustCompile(`<td>bench</td><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td>`).FindStringSubmatch(page.body)
	if bench == nil || !regexp.MustCompile(`^bench speed \d+ nodes/s: `).MatchString(bench[1]) {
		t.Errorf("the bench incident's reason: %q, want the speed in words", bench)
	}
}
