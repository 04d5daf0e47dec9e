package jobfind

import (
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/core"
)

// Each filter keeps what it names and nothing else; bad values are
// refused naming the field.
func TestFilterKeep(t *testing.T) {
	day := time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)
	sprt := core.JobInfo{ID: "s1", Kind: "sprt", State: "running", Started: true, Submitter: "carol", Created: day,
		Engines: []string{"dev-NNUE", "base"}, TimeControl: "10+0.1", Verdict: "none", Tags: []string{"nnue", "stc"}, Notes: "First try of the NEW net"}
	done := sprt
	done.ID, done.State, done.Verdict, done.Tags = "s2", "done", "passed", nil
	pending := sprt
	pending.ID, pending.Started = "s3", false
	perft := core.JobInfo{ID: "p1", Kind: "perft", State: "done", Submitter: "dave", Created: day.AddDate(0, 0, 3)}
	all := []core.JobInfo{sprt, done, pending, perft}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "s1 s2 s3 p1"},
		{Filter{Kind: "test"}, "s1 s2 s3"},
		{Filter{Kind: "perft"}, "p1"},
		{Filter{Kind: "sprt"}, "s1 s2 s3"},
		{Filter{Kind: "match"}, ""},
		{Filter{State: "running"}, "s1 s3"},
		{Filter{State: "pending"}, "s3"},
		{Filter{State: "done"}, "s2 p1"},
		{Filter{Submitter: "dave"}, "p1"},
		{Filter{Engine: "DEV-nnue"}, "s1 s2 s3"},
		{Filter{Engine: "dev"}, ""},
		{Filter{Verdict: "passed"}, "s2"},
		{Filter{Verdict: "none"}, "s1 s3"},
		{Filter{Tag: "NNUE"}, "s1 s3"},
		{Filter{TimeControl: "10+0.1"}, "s1 s2 s3"},
		{Filter{Text: "new net"}, "s1 s2 s3"},
		{Filter{Text: "DAVE"}, "p1"},
		{Filter{Text: "s2"}, "s2"},
		{Filter{After: day.AddDate(0, 0, 1)}, "p1"},
		{Filter{Before: day.AddDate(0, 0, 1)}, "s1 s2 s3"},
		{Filter{Submitter: "carol", Tag: "stc", State: "running"}, "s1 s3"},
	} {
		if err := c.f.Check(); err != nil {
			t.Fatalf("%+v: %v", c.f, err)
		}
		var got []string
		for _, j := range all {
			if c.f.Keep(j) {
				got = append(got, j.ID)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%+v keeps %q, want %q", c.f, g, c.want)
		}
	}
	for _, c := range []struct {
		f     Filter
		field string
	}{
		{Filter{Kind: "nope"}, "kind"},
		{Filter{State: "paused"}, "state"},
		{Filter{Verdict: "maybe"}, "verdict"},
		{Filter{After: day, Before: day}, "dates"},
		{Filter{Text: strings.Repeat("x", MaxField+1)}, "text"},
		{Filter{Engine: strings.Repeat("x", MaxField+1)}, "engine"},
	} {
		if err := c.f.Check(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want an error naming %s", c.f, err, c.field)
		}
	}
	if _, err := ParseCursor("x"); err == nil {
		t.Error("bad cursor accepted")
	}
	if n, err := ParseCursor(Cursor(42)); err != nil || n != 42 {
		t.Errorf("cursor round trip: %d %v", n, err)
	}
}
