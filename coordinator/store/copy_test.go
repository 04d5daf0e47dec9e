package store

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// snapshotStore reads everything a coordinator loads from a store.
func snapshotStore(t *testing.T, s *Store) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	must := func(what string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		out[what] = v
	}
	jobs, err := s.Jobs(ctx)
	must("jobs", jobs, err)
	for _, j := range jobs {
		es, err := s.Events(ctx, j.ID)
		must(j.ID+" events", es, err)
		var games []string
		err = s.PGNs(ctx, j.ID, func(p string) error { games = append(games, p); return nil })
		must(j.ID+" pgns", games, err)
	}
	ws, err := s.Workers(ctx)
	must("workers", ws, err)
	cs, err := s.Credentials(ctx)
	must("credentials", cs, err)
	as, err := s.Artifacts(ctx)
	must("artifacts", as, err)
	q, err := s.QuarantineList(ctx)
	must("quarantine", q, err)
	return out
}

// release1Core is the release-1 data dir, upgraded, without the test
// kind's tables (tests, batches) and the perft kind's (positions, units,
// runs), which this package's tests do not register: a PostgreSQL store
// they open has no such tables, and a copy into it is refused
// (TestCopyRefusesTablesItCannotHold). kinds/test's and kinds/perft's
// tests copy their tables.
func release1Core(t *testing.T) *Store {
	t.Helper()
	s, err := Open(release1(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("DROP TABLE tests; DROP TABLE batches; DROP TABLE positions; DROP TABLE units; DROP TABLE runs"); err != nil {
		t.Fatal(err)
	}
	return s
}

// A store holding a kind's tables that the destination has not got (a
// build without the kind) is not copied: the tables are named, and the
// destination stays empty.
func TestCopyRefusesTablesItCannotHold(t *testing.T) {
	src, err := Open(release1(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	refusedCopy(t, src, "has no table batches, positions, runs, tests, units")
}

// refusedCopy fails unless a copy of src into a fresh PostgreSQL store
// fails with an error holding want and leaves the store empty.
func refusedCopy(t *testing.T, src *Store, want string) {
	t.Helper()
	ctx := context.Background()
	dst, err := postgresOpener(t)()
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	_, err = Copy(ctx, src, dst)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("copy: %v, want an error with %q", err, want)
	}
	t.Log(err)
	if jobs, err := dst.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("the failed copy left %d jobs (%v)", len(jobs), err)
	}
}

// A release-1 data dir, upgraded and with rows of every later table,
// copied to PostgreSQL reads back the same in every respect; the copy
// numbers on after the copied rows; a second copy into it is refused.
func TestCopyToPostgres(t *testing.T) {
	ctx := context.Background()
	src := release1Core(t)
	defer src.Close()
	now := time.Unix(1_800_000_000, 0)
	// A job of a kind with its own tables (as a tune is), its games and an
	// event, written through the helpers kinds use.
	if err := src.CreateKindJob(ctx, &Job{ID: "t1", Kind: "spsa", State: StateRunning, CreatedAt: now, RootMoves: []string{}},
		func(context.Context, *sql.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := src.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := insertPGNs(ctx, tx, "t1", 3, []string{"[Event \"t\"]\n\n1. e4 *\n"}); err != nil {
			return err
		}
		return InsertEventsTx(ctx, tx, []Event{{JobID: "t1", Kind: "note", At: now}})
	}); err != nil {
		t.Fatal(err)
	}
	if err := src.AddCredential(ctx, Credential{Name: "alice", Role: "client", Hash: []byte{1, 2, 3}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := src.PutArtifact(ctx, &Artifact{SHA256: "ab", Name: "eng", Bench: 1 << 63, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := src.PutMeta(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := src.Quarantine(ctx, Quarantined{Kind: "job", ID: "x", Error: "bad", At: now}); err != nil {
		t.Fatal(err)
	}

	open := postgresOpener(t)
	dst, err := open()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := Copy(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, tc := range tables {
		rows[tc.Table] = tc.Rows
	}
	if rows["jobs"] != 7 || rows["pgns"] == 0 {
		t.Fatalf("copied %v", rows)
	}
	want, got := snapshotStore(t, src), snapshotStore(t, dst)
	for k, v := range want {
		if !reflect.DeepEqual(v, got[k]) {
			t.Errorf("%s differs after the copy:\nsqlite   %+v\npostgres %+v", k, v, got[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d things read from the copy, %d from the source", len(got), len(want))
	}
	// Numbering goes on after the copied rows: events (identity) and jobs
	// (seq).
	if err := dst.AddEvents(ctx, []Event{{JobID: "t1", Kind: "after", At: now}}); err != nil {
		t.Fatalf("an event after the copy: %v", err)
	}
	if ev, _ := dst.Events(ctx, "t1"); len(ev) != 2 || ev[1].Kind != "after" {
		t.Fatalf("events after the copy: %+v", ev)
	}
	j := &Job{ID: "s-after", Kind: "match", State: StateRunning, CreatedAt: now, RootMoves: []string{}}
	if err := dst.CreateKindJob(ctx, j, func(context.Context, *sql.Tx) error { return nil }); err != nil || j.Seq != 8 {
		t.Fatalf("a job after the copy: seq %d, %v", j.Seq, err)
	}
	// Not into a database that holds data.
	if _, err := Copy(ctx, src, dst); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("a second copy: %v, want ErrNotEmpty", err)
	}
	dst.Close()
}

// A copy that fails part way leaves the destination empty.
func TestCopyFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	src := release1Core(t)
	defer src.Close()
	// PostgreSQL text cannot hold a NUL byte; SQLite can.
	if err := src.PutWorker(ctx, Worker{ID: "wz", Name: "bad\x00name", RegisteredAt: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	// The error names the table.
	refusedCopy(t, src, "workers")
}
