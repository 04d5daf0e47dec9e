package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFollowsStore: follows and their events on both backends; a second
// follow of one job by one user and a second event of one kind for one
// user and job are not added; events are read per user, in order, after
// an id; unfollowing removes the follow and its events.
func TestFollowsStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		at := time.Unix(1700000000, 0)
		for i, want := range []bool{true, false} {
			added, err := s.AddFollow(ctx, Follow{User: "ann", JobID: "s1", CreatedAt: at})
			if err != nil || added != want {
				t.Fatalf("follow #%d: %v, added %v", i, err, added)
			}
		}
		if _, err := s.AddFollow(ctx, Follow{User: "ann", JobID: "s2", CreatedAt: at.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddFollow(ctx, Follow{User: "ben", JobID: "s1", CreatedAt: at.Add(2 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		if f, err := s.Follows(ctx, "ann"); err != nil || len(f) != 2 || f[0] != (Follow{User: "ann", JobID: "s1", CreatedAt: at}) || f[1].JobID != "s2" {
			t.Fatalf("ann's follows: %v %+v", err, f)
		}
		if f, err := s.Follows(ctx, ""); err != nil || len(f) != 3 {
			t.Fatalf("every follow: %v %+v", err, f)
		}
		e := FollowEvent{User: "ann", JobID: "s1", Event: "finished", Title: "Test s1 finished", Path: "/tests/s1", CreatedAt: at}
		for i, want := range []bool{true, false} {
			added, err := s.AddFollowEvent(ctx, e)
			if err != nil || added != want {
				t.Fatalf("event #%d: %v, added %v", i, err, added)
			}
		}
		for _, o := range []FollowEvent{{User: "ann", JobID: "s2", Event: "failed"}, {User: "ben", JobID: "s1", Event: "finished"}} {
			if _, err := s.AddFollowEvent(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		ann, err := s.FollowEvents(ctx, "ann", 0, 10)
		if err != nil || len(ann) != 2 || ann[0].JobID != "s1" || ann[0].Title != e.Title || ann[0].Path != e.Path || !ann[0].CreatedAt.Equal(at) ||
			ann[1].JobID != "s2" || ann[1].ID <= ann[0].ID {
			t.Fatalf("ann's events: %v %+v", err, ann)
		}
		if after, err := s.FollowEvents(ctx, "ann", ann[0].ID, 10); err != nil || len(after) != 1 || after[0].JobID != "s2" {
			t.Fatalf("ann's events after %d: %v %+v", ann[0].ID, err, after)
		}
		if err := s.DeleteFollow(ctx, "ann", "s1"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteFollow(ctx, "ann", "s1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second unfollow: %v", err)
		}
		if left, _ := s.FollowEvents(ctx, "ann", 0, 10); len(left) != 1 || left[0].JobID != "s2" {
			t.Fatalf("ann's events after unfollowing s1: %+v", left)
		}
		if ben, _ := s.FollowEvents(ctx, "ben", 0, 10); len(ben) != 1 {
			t.Fatalf("ben's events: %+v", ben)
		}
	})
}
