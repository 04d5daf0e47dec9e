package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A session's reports: stored once per index (a call sent again changes
// nothing), owned by the identity that first reported it, bounded, read
// back in order and newest session first; they survive a reopen.
func TestVerifyReports(t *testing.T) { eachBackend(t, testVerifyReports) }

func testVerifyReports(t *testing.T, open opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	vs := VerifySession{ID: "s-one", Owner: "carol", Engine: "bug", Depth: 3, CreatedAt: time.Unix(100, 0), ReportedAt: time.Unix(200, 0),
		Positions: 5, OK: 3, Bugs: 2, Finds: 4, Seconds: 1.5, Summary: []byte("sum1")}
	reports := [][]byte{[]byte("r0"), []byte("r1"), []byte("r2")}
	if n, err := s.PutVerifyReports(ctx, vs, 0, reports[:2], 3); err != nil || n != 2 {
		t.Fatalf("first call: %d %v", n, err)
	}
	// Sent again with a different body at index 1, plus index 2.
	if n, err := s.PutVerifyReports(ctx, vs, 1, [][]byte{[]byte("changed"), reports[2]}, 3); err != nil || n != 3 {
		t.Fatalf("second call: %d %v", n, err)
	}
	if _, err := s.PutVerifyReports(ctx, vs, 3, [][]byte{[]byte("r3")}, 3); !errors.Is(err, ErrFull) {
		t.Fatalf("past the limit: %v", err)
	}
	other := vs
	other.Owner = "mallory"
	if _, err := s.PutVerifyReports(ctx, other, 0, nil, 3); !errors.Is(err, ErrOwner) {
		t.Fatalf("another owner: %v", err)
	}
	second := VerifySession{ID: "s-two", Owner: "dave", Engine: "other", ReportedAt: time.Unix(300, 0), Summary: []byte{}}
	if _, err := s.PutVerifyReports(ctx, second, 0, nil, 3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, total, err := s.VerifySessions(ctx, 0, 10)
	if err != nil || total != 2 || len(list) != 2 || list[0].ID != "s-two" || list[1].ID != "s-one" {
		t.Fatalf("sessions: %d %+v %v", total, list, err)
	}
	got := list[1]
	if got.Owner != "carol" || got.Bugs != 2 || got.Finds != 4 || got.Reported != 3 || string(got.Summary) != "sum1" ||
		!got.CreatedAt.Equal(time.Unix(100, 0)) {
		t.Fatalf("session one: %+v", got)
	}
	rs, err := s.VerifyReports(ctx, "s-one", 1, 5)
	if err != nil || fmt.Sprintf("%s", rs) != "[r1 r2]" {
		t.Fatalf("reports from 1: %s %v", rs, err)
	}
	if _, err := s.VerifySessionByID(ctx, "s-none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}
