package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHooksStore: hooks and their deliveries on both backends; a second
// delivery of one event to one hook is not added, and removing a hook
// removes its deliveries.
func TestHooksStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		at := time.Unix(1700000000, 0)
		h := &Hook{ID: "h1", URL: "https://example.org/hook", Events: "finished,failed", Format: "json", Secret: "s3", Owner: "carol", Scope: "own", CreatedAt: at}
		if err := s.PutHook(ctx, h); err != nil {
			t.Fatal(err)
		}
		hooks, err := s.Hooks(ctx)
		if err != nil || len(hooks) != 1 || *hooks[0] != *h {
			t.Fatalf("hooks: %v %+v", err, hooks)
		}
		d := &Delivery{ID: "h1/s1/finished", HookID: "h1", JobID: "s1", Event: "finished", Payload: "{}", State: "pending", NextAt: at, CreatedAt: at}
		for i, want := range []bool{true, false} {
			added, err := s.AddDelivery(ctx, d)
			if err != nil || added != want {
				t.Fatalf("add #%d: %v, added %v", i, err, added)
			}
		}
		due, err := s.DueDeliveries(ctx, at, 10, 10)
		if err != nil || len(due) != 1 || due[0].ID != d.ID {
			t.Fatalf("due: %v %+v", err, due)
		}
		d.State, d.Attempts, d.LastStatus, d.DeliveredAt = "delivered", 1, 204, at.Add(time.Second)
		if err := s.UpdateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		if due, _ := s.DueDeliveries(ctx, at.Add(time.Hour), 10, 10); len(due) != 0 {
			t.Errorf("a delivered delivery is due: %+v", due[0])
		}
		list, err := s.Deliveries(ctx, "h1", 10)
		if err != nil || len(list) != 1 || list[0].State != "delivered" || list[0].LastStatus != 204 || !list[0].DeliveredAt.Equal(d.DeliveredAt) {
			t.Fatalf("deliveries: %v %+v", err, list)
		}
		if err := s.DeleteHook(ctx, "h1"); err != nil {
			t.Fatal(err)
		}
		if list, _ := s.Deliveries(ctx, "", 10); len(list) != 0 {
			t.Errorf("deliveries outlive their hook: %d", len(list))
		}
		if err := s.DeleteHook(ctx, "h1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("removing a removed hook: %v", err)
		}
	})
}

// TestDueDeliveriesPerHook: a hook with a backlog gets at most perHook of
// the due deliveries, and the first due of a quieter hook comes before the
// backlog's second, however much older the backlog is.
func TestDueDeliveriesPerHook(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		at := time.Unix(1700000000, 0)
		for _, id := range []string{"busy", "quiet"} {
			if err := s.PutHook(ctx, &Hook{ID: id, URL: "https://example.org/" + id, Events: "finished", Format: "json", Secret: "s", Owner: id, Scope: "own", CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		add := func(hook, job string, next time.Time) {
			t.Helper()
			if _, err := s.AddDelivery(ctx, &Delivery{ID: hook + "/" + job + "/finished", HookID: hook, JobID: job, Event: "finished",
				Payload: "{}", State: "pending", NextAt: next, CreatedAt: next}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 30; i++ {
			add("busy", fmt.Sprintf("b%02d", i), at.Add(time.Duration(i)*time.Second))
		}
		add("quiet", "q1", at.Add(time.Minute))
		due, err := s.DueDeliveries(ctx, at.Add(time.Hour), 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range due {
			got = append(got, d.ID)
		}
		want := []string{"busy/b00/finished", "quiet/q1/finished", "busy/b01/finished"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("due %v, want %v", got, want)
		}
	})
}
