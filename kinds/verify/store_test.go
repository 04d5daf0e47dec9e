package verify

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/storetest"
)

// A session's reports: stored once per index (a call sent again changes
// nothing), owned by the identity that first reported it, bounded, read
// back in order and newest session first; they survive a reopen.
func TestStoredReports(t *testing.T) { storetest.EachBackend(t, testStoredReports) }

func testStoredReports(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	vs := storedSession{ID: "s-one", Owner: "carol", Engine: "bug", Depth: 3, CreatedAt: time.Unix(100, 0), ReportedAt: time.Unix(200, 0),
		Positions: 5, OK: 3, Bugs: 2, Finds: 4, Seconds: 1.5, Summary: []byte("sum1")}
	reports := [][]byte{[]byte("r0"), []byte("r1"), []byte("r2")}
	if n, err := putReports(ctx, s, vs, 0, reports[:2], 3); err != nil || n != 2 {
		t.Fatalf("first call: %d %v", n, err)
	}
	// Sent again with a different body at index 1, plus index 2.
	if n, err := putReports(ctx, s, vs, 1, [][]byte{[]byte("changed"), reports[2]}, 3); err != nil || n != 3 {
		t.Fatalf("second call: %d %v", n, err)
	}
	if _, err := putReports(ctx, s, vs, 3, [][]byte{[]byte("r3")}, 3); !errors.Is(err, errFull) {
		t.Fatalf("past the limit: %v", err)
	}
	other := vs
	other.Owner = "mallory"
	if _, err := putReports(ctx, s, other, 0, nil, 3); !errors.Is(err, errOwner) {
		t.Fatalf("another owner: %v", err)
	}
	second := storedSession{ID: "s-two", Owner: "dave", Engine: "other", ReportedAt: time.Unix(300, 0), Summary: []byte{}}
	if _, err := putReports(ctx, s, second, 0, nil, 3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, total, err := storedSessions(ctx, s, 0, 10)
	if err != nil || total != 2 || len(list) != 2 || list[0].ID != "s-two" || list[1].ID != "s-one" {
		t.Fatalf("sessions: %d %+v %v", total, list, err)
	}
	got := list[1]
	if got.Owner != "carol" || got.Bugs != 2 || got.Finds != 4 || got.Reported != 3 || string(got.Summary) != "sum1" ||
		!got.CreatedAt.Equal(time.Unix(100, 0)) {
		t.Fatalf("session one: %+v", got)
	}
	rs, err := storedReports(ctx, s, "s-one", 1, 5)
	if err != nil || fmt.Sprintf("%s", rs) != "[r1 r2]" {
		t.Fatalf("reports from 1: %s %v", rs, err)
	}
	if _, err := storedSessionByID(ctx, s, "s-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if v, err := s.KindVersion(ctx, Kind); err != nil || v != len(schema.Migrations) {
		t.Fatalf("schema:%s version %d (%v), want %d", Kind, v, err, len(schema.Migrations))
	}
}

// A file whose verify tables were made by the core's step 5 (releases
// before the kind kept them) keeps its sessions: the kind's first step
// finds the tables there and adds nothing. The file is made here as those
// releases left it: the tables with a session in them, and no
// schema:verify version.
func TestAdoptsTheTablesOfEarlierReleases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	vs := storedSession{ID: "s-old", Owner: "erin", Engine: "e", ReportedAt: time.Unix(400, 0), Summary: []byte("old")}
	if _, err := putReports(ctx, s, vs, 0, [][]byte{[]byte("r0")}, 3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	storetest.ForgetKindVersion(t, dir, Kind)

	s, err = store.Open(dir)
	if err != nil {
		t.Fatalf("reopening a file whose tables came before the kind's version: %v", err)
	}
	defer s.Close()
	if v, err := s.KindVersion(ctx, Kind); err != nil || v != 1 {
		t.Fatalf("schema:%s after the reopen: %d %v, want 1", Kind, v, err)
	}
	got, err := storedSessionByID(ctx, s, "s-old")
	if err != nil || got.Owner != "erin" || got.Reported != 1 || string(got.Summary) != "old" {
		t.Fatalf("the earlier release's session: %+v %v", got, err)
	}
}

// A SQLite store copied to PostgreSQL (arbiter store copy) carries the
// kind's tables: the session and its reports read back the same.
func TestCopiedToPostgres(t *testing.T) {
	ctx := context.Background()
	src, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	vs := storedSession{ID: "v1", Owner: "alice", Engine: "e", Depth: 4, CreatedAt: time.Unix(10, 0), ReportedAt: time.Unix(20, 0),
		Bugs: 1, Seconds: 0.25, Summary: []byte("s")}
	if _, err := putReports(ctx, src, vs, 0, [][]byte{[]byte("r0"), []byte("r1")}, 10); err != nil {
		t.Fatal(err)
	}
	dst, rows := storetest.CopyToPostgres(t, src)
	if rows["verify_sessions"] != 1 || rows["verify_reports"] != 2 {
		t.Fatalf("copied %v", rows)
	}
	want, _ := storedSessionByID(ctx, src, "v1")
	got, err := storedSessionByID(ctx, dst, "v1")
	if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("after the copy:\nsqlite   %+v\npostgres %+v (%v)", want, got, err)
	}
	if rs, err := storedReports(ctx, dst, "v1", 0, 10); err != nil || fmt.Sprintf("%s", rs) != "[r0 r1]" {
		t.Fatalf("reports after the copy: %s %v", rs, err)
	}
}
