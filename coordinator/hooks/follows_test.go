package hooks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestFollowedJobs: ann follows one of carol's two tests (before any
// worker plays them); when both have finished, ann has one finished
// event, of the test she follows, and her hook of scope followed got that
// one delivery and nothing of the other; ben, who follows nothing, has no
// event and his followed hook gets nothing. Following a job that does not
// exist, following twice, a worker's follow and unfollowing what one does
// not follow are refused with errors naming the job.
func TestFollowedJobs(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	var hc coordinator.HooksConfig
	hc.Allow = []string{"127.0.0.1"}
	hc.Interval, hc.RetryBase = 50*time.Millisecond, 100*time.Millisecond
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "hooks-admin", Hooks: hc}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c := cl.Server.Coordinator()
	ctx := context.Background()
	ann := identity.Identity{Name: "ann", Role: identity.Client}
	ben := identity.Identity{Name: "ben", Role: identity.Client}

	annHook, benHook, annOwn := newReceiver(t, 0), newReceiver(t, 0), newReceiver(t, 0)
	hAnn, err := c.Hooks.Add(ctx, ann, annHook.URL, []string{"finished"}, "json", hooks.ScopeFollowed)
	if err != nil || hAnn.Scope != "followed" {
		t.Fatalf("ann's followed hook: %v %+v", err, hAnn)
	}
	if _, err := c.Hooks.Add(ctx, ben, benHook.URL, []string{"finished", "failed", "blocked"}, "json", hooks.ScopeFollowed); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Hooks.Add(ctx, ann, annOwn.URL, []string{"finished"}, "json", hooks.ScopeOwn); err != nil {
		t.Fatal(err)
	}

	conn, err := c.InProcess()
	if err != nil {
		t.Fatal(err)
	}
	jobs := arbiterv1.NewJobServiceClient(conn)
	submit := func() string {
		spec := &arbiterv1.MatchSpec{EngineA: &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Protocol: "builtin"},
			EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded", Protocol: "builtin"},
			TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 200}}, Games: 2, BatchPairs: 1,
			Openings: []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}}, BookName: "e4"}
		resp, err := jobs.SubmitMatch(withToken(ctx, "hooks-admin"), &arbiterv1.SubmitMatchRequest{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetJob().GetJobId()
	}
	followed, other := submit(), submit()

	if err := c.Hooks.Follow(ctx, ann, followed); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		who  identity.Identity
		job  string
		code apierr.Code
		want string
	}{
		{ann, followed, apierr.AlreadyExists, `"ann" follows job "` + followed + `" already`},
		{ann, "s999999", apierr.NotFound, `job "s999999": no such job to follow`},
		{ann, "", apierr.InvalidArgument, "not a job id"},
		{identity.Identity{Name: "w", Role: identity.Worker}, followed, apierr.PermissionDenied, "may not follow jobs"},
	} {
		err := c.Hooks.Follow(ctx, bad.who, bad.job)
		ae, _ := apierr.As(err)
		if ae == nil || ae.Code != bad.code || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("follow %q as %s: %v; want %v with %q", bad.job, bad.who.Name, err, bad.code, bad.want)
		}
	}
	if err := c.Hooks.Unfollow(ctx, ben, followed); err == nil || !strings.Contains(err.Error(), `"ben" does not follow job "`+followed+`"`) {
		t.Errorf("ben's unfollow of what he does not follow: %v", err)
	}
	if list, err := c.Hooks.Follows(ctx, ann); err != nil || len(list) != 1 || list[0].JobID != followed {
		t.Fatalf("ann's follows: %v %+v", err, list)
	}

	if err := cl.AddWorkers(1); err != nil {
		t.Fatal(err)
	}
	var events []hooksEvent
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		evs, err := c.Hooks.Events(ctx, ann, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		events = events[:0]
		for _, e := range evs {
			events = append(events, hooksEvent{e.JobID, e.Event, e.Title, e.Path, e.ID})
		}
		j, err := jobs.GetJob(withToken(ctx, "hooks-admin"), &arbiterv1.GetJobRequest{JobId: other})
		if err != nil {
			t.Fatal(err)
		}
		if hasFinished(events, followed) && j.GetJob().GetState() == arbiterv1.JobState_JOB_STATE_DONE && len(annHook.deliveries()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ann's events: %+v; the other test %v", events, j.GetJob().GetState())
		}
	}
	time.Sleep(500 * time.Millisecond) // later scans add nothing
	evs, _ := c.Hooks.Events(ctx, ann, 0, 0)
	finished := 0
	for _, e := range evs {
		if e.JobID != followed {
			t.Errorf("ann has an event of %s, which she does not follow: %+v", e.JobID, e)
		}
		if e.Event == "finished" {
			finished++
			if e.Title != "test "+followed+" finished: a vs b" || e.Path != "/tests/"+followed {
				t.Errorf("event: %+v", e)
			}
			if later, _ := c.Hooks.Events(ctx, ann, e.ID, 0); len(later) != 0 {
				t.Errorf("events after the last: %+v", later)
			}
		}
	}
	if finished != 1 {
		t.Errorf("ann has %d finished events, want 1: %+v", finished, evs)
	}
	if evs, _ := c.Hooks.Events(ctx, ben, 0, 0); len(evs) != 0 {
		t.Errorf("ben, who follows nothing, has events: %+v", evs)
	}
	got := annHook.deliveries()
	if len(got) != 1 {
		t.Fatalf("ann's followed hook got %d deliveries, want 1", len(got))
	}
	var p hooks.Payload
	if err := json.Unmarshal(got[0].body, &p); err != nil || p.Event != "finished" || got[0].header.Get("X-Arbiter-Delivery") != hAnn.ID+"/"+followed+"/finished" {
		t.Errorf("ann's delivery: %v %s", err, got[0].body)
	}
	if n := len(benHook.deliveries()); n != 0 {
		t.Errorf("ben's followed hook got %d deliveries", n)
	}
	if n := len(annOwn.deliveries()); n != 0 {
		t.Errorf("ann's own-jobs hook got %d deliveries of carol's tests", n)
	}
	if err := c.Hooks.Unfollow(ctx, ann, followed); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.Hooks.Follows(ctx, ann); len(list) != 0 {
		t.Errorf("ann's follows after unfollowing: %+v", list)
	}
}

type hooksEvent struct {
	job, event, title, path string
	id                      int64
}

func hasFinished(evs []hooksEvent, job string) bool {
	for _, e := range evs {
		if e.job == job && e.event == "finished" {
			return true
		}
	}
	return false
}
