package test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A test that verifies a tune is linked to it by its stored spec: the
// tune's verifications are its tests in submission order with their own
// progress, before and after a restart. A test naming no tune of the
// coordinator is refused and nothing is stored.
func TestVerificationsOfATune(t *testing.T) {
	e := newEnv(t, Config{TuneExists: func(id string) bool { return id == "t000000000001" }})
	verifying := func(games uint64, updates uint64) *arbiterv1.MatchSpec {
		s := matchSpec(games, 1, 8)
		s.VerifiesTune, s.VerifiesTuneUpdates = "t000000000001", updates
		return s
	}
	first := e.create(verifying(2, 7))
	w := e.Worker("w1", 1_000_000)
	e.MustSubmit(w, e.MustLease(w), wins(1), core.Accepted)
	e.create(matchSpec(2, 1, 8)) // verifies nothing
	second := e.create(verifying(4, 9))

	for _, c := range []struct {
		tune    string
		updates uint64
		want    string
	}{
		{"t000000000002", 0, `verifies_tune: "t000000000002" is not an SPSA tune`},
		{"", 3, "verifies_tune_updates: 3 without verifies_tune"},
		{strings.Repeat("t", 200), 0, "verifies_tune"},
	} {
		s := matchSpec(2, 1, 8)
		s.VerifiesTune, s.VerifiesTuneUpdates = c.tune, c.updates
		_, err := e.C.Create(context.Background(), carol, Kind, s)
		if codeOf(err) != apierr.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("verifies %q at %d: %v, want INVALID_ARGUMENT with %q", c.tune, c.updates, err, c.want)
		}
	}
	check := func(when string) {
		t.Helper()
		vs := e.WL.Verifications("t000000000001")
		if len(vs) != 2 || vs[0].GetJobId() != first || vs[1].GetJobId() != second {
			t.Fatalf("%s: verifications %v, want %s then %s", when, vs, first, second)
		}
		for i, want := range []struct {
			id      string
			updates uint64
			state   arbiterv1.JobState
			games   uint64
		}{{first, 7, arbiterv1.JobState_JOB_STATE_DONE, 2}, {second, 9, arbiterv1.JobState_JOB_STATE_RUNNING, 0}} {
			v := vs[i]
			mp := e.Job(want.id).GetMatchProgress()
			mp.Workers = nil
			if v.GetKind() != KindMatch || v.GetUpdates() != want.updates || v.GetState() != want.state || v.GetProgress().GetGames() != want.games ||
				!proto.Equal(v.GetProgress(), mp) {
				t.Errorf("%s: verification %d %v\nwant %s at %d updates, %v, %d games, the test's progress %v", when, i, v, want.id, want.updates,
					want.state, want.games, mp)
			}
		}
		if vs[0].GetProgress().GetWins() != 2 || vs[0].GetProgress().GetElo() <= 0 {
			t.Errorf("%s: the first verification won 2 of 2 games: %v", when, vs[0].GetProgress())
		}
		if n := len(e.WL.Verifications("t000000000002")); n != 0 {
			t.Errorf("%s: %d verifications of a tune no test verifies", when, n)
		}
	}
	check("before a restart")
	if jobs, _ := e.C.Jobs(100, nil); len(jobs) != 3 {
		t.Errorf("%d tests stored, want 3 (refused ones stored nothing)", len(jobs))
	}
	e.Restart()
	check("after a restart")
}
