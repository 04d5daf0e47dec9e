package test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/storetest"
)

// The release-1 fixture's SPRT test and match (storetest.Release1).
const release1SPRT, release1Match = "sc12d9f7a3666", "s2f680a6e3c88"

// storedBatch is batch idx of job played by worker, its games two.
func storedBatch(job string, idx int, worker string, at time.Time) *Batch {
	return &Batch{UnitID: fmt.Sprintf("%s.%d", job, idx), JobID: job, Idx: idx, WorkerID: worker, Pairs: 1,
		Penta: [5]int64{0, 0, 1, 0, 0}, Wins: 1, Losses: 1, Incidents: "time_loss:1", LeasedAt: at.Add(-time.Second), At: at, ElapsedMS: 7}
}

var twoGames = []string{"[Event \"a\"]\n\n1. e4 *\n", "[Event \"b\"]\n\n1. d4 *\n"}

// A test's batches come back in the order accepted (not by index), with
// their counts; a second batch of the same unit is refused and changes
// nothing; the SPRT state is the last one committed; the retention
// setting deletes a finished test's games and keeps its batches. On
// SQLite and PostgreSQL, across a reopen.
func TestStoredBatches(t *testing.T) { storetest.EachBackend(t, testStoredBatches) }

func testStoredBatches(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_700_000_000, 0)
	j := &store.Job{ID: "s1", Kind: KindSPRT, State: store.StateRunning, CreatedAt: at, RootMoves: []string{}, UnitsTotal: 3}
	if err := CreateTest(ctx, s, j, &StoredTest{Spec: []byte{0, 1, 255}, BatchPairs: 1, SPRT: "start"}); err != nil {
		t.Fatal(err)
	}
	for k, idx := range []int{2, 0, 1} {
		var change *store.JobChange
		if k == 2 {
			change = &store.JobChange{State: store.StateDone, FinishedAt: at.Add(time.Minute)}
		}
		ev := []store.Event{{JobID: "s1", UnitID: fmt.Sprintf("s1.%d", idx), Kind: "batch", At: at}}
		if err := CommitBatch(ctx, s, storedBatch("s1", idx, "w", at.Add(time.Duration(k)*time.Second)), twoGames, fmt.Sprint("state ", k), change, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := CommitBatch(ctx, s, storedBatch("s1", 0, "w2", at), twoGames, "again", nil, nil); err == nil {
		t.Fatal("batch s1.0 counted twice")
	}
	s.Close()
	if s, err = open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs, err := StoredBatches(ctx, s, "s1")
	if err != nil || len(bs) != 3 {
		t.Fatalf("batches %+v %v", bs, err)
	}
	for k, idx := range []int{2, 0, 1} {
		if want := storedBatch("s1", idx, "w", at.Add(time.Duration(k)*time.Second)); !reflect.DeepEqual(bs[k], *want) {
			t.Errorf("batch %d read back as\n%+v, want\n%+v", k, bs[k], *want)
		}
	}
	row, err := LoadTest(ctx, s, "s1")
	if err != nil || row.SPRT != "state 2" || row.BatchPairs != 1 || !slices.Equal(row.Spec, []byte{0, 1, 255}) || !row.PGNsExpired.IsZero() {
		t.Fatalf("test row %+v %v", row, err)
	}
	if n, _ := s.CountPGNs(ctx, "s1"); n != 6 {
		t.Errorf("%d games stored, want 6", n)
	}
	if ev, _ := s.Events(ctx, "s1"); len(ev) != 3 {
		t.Errorf("%d events, want 3", len(ev))
	}
	if _, err := LoadTest(ctx, s, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown test: %v", err)
	}
	ids, err := s.ExpireGames(ctx, at.Add(time.Hour), at.Add(2*time.Hour), GameTable)
	if err != nil || !slices.Equal(ids, []string{"s1"}) {
		t.Fatalf("expired %v %v", ids, err)
	}
	if n, _ := s.CountPGNs(ctx, "s1"); n != 0 {
		t.Errorf("%d games left after expiry", n)
	}
	if row, _ := LoadTest(ctx, s, "s1"); !row.PGNsExpired.Equal(at.Add(2 * time.Hour)) {
		t.Errorf("expiry recorded as %v", row.PGNsExpired)
	}
	if bs, _ := StoredBatches(ctx, s, "s1"); len(bs) != 3 {
		t.Errorf("%d batches after expiry", len(bs))
	}
}

// A running test's change is stored in one piece (spec, priority,
// throughput, batch count); a failed edit changes nothing; a test that
// is not running, or not there, is refused; a priority change rewrites
// the spec and the job row. On both backends.
func TestStoredChanges(t *testing.T) { storetest.EachBackend(t, testStoredChanges) }

func testStoredChanges(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j := &store.Job{ID: "s1", Kind: KindSPRT, State: store.StateRunning, CreatedAt: time.Unix(100, 0), RootMoves: []string{}, Submitter: "carol"}
	if err := CreateTest(ctx, s, j, &StoredTest{Spec: []byte("spec-1"), BatchPairs: 2}); err != nil {
		t.Fatal(err)
	}
	edit := func(b []byte) ([]byte, error) { return append(b, "+edit"...), nil }
	if err := ModifyTest(ctx, s, "s1", TestChange{Priority: 5, Throughput: 3, UnitsTotal: 50, Edit: edit}); err != nil {
		t.Fatal(err)
	}
	check := func(when, spec string, priority int32, throughput float64) {
		t.Helper()
		row, err := LoadTest(ctx, s, "s1")
		if err != nil || string(row.Spec) != spec {
			t.Fatalf("%s: spec %q %v, want %q", when, row.Spec, err, spec)
		}
		jobs, err := s.Jobs(ctx)
		if err != nil || len(jobs) != 1 || jobs[0].Priority != priority || jobs[0].Throughput != throughput || jobs[0].UnitsTotal != 50 {
			t.Fatalf("%s: job row %+v %v", when, jobs, err)
		}
	}
	check("modified", "spec-1+edit", 5, 3)
	boom := errors.New("boom")
	if err := ModifyTest(ctx, s, "s1", TestChange{Priority: 9, Throughput: 9, Edit: func([]byte) ([]byte, error) { return nil, boom }}); !errors.Is(err, boom) {
		t.Fatalf("failed edit: %v", err)
	}
	check("after a failed edit", "spec-1+edit", 5, 3)
	if err := SetTestPriority(ctx, s, "s1", 7, 2, edit); err != nil {
		t.Fatal(err)
	}
	check("priority changed", "spec-1+edit+edit", 7, 2)
	if err := SetTestPriority(ctx, s, "nope", 1, 1, edit); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("priority of an unknown test: %v", err)
	}
	if err := s.SetJobState(ctx, "s1", &store.JobChange{State: store.StateCancelled, FinishedAt: time.Unix(200, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := ModifyTest(ctx, s, "s1", TestChange{Priority: 1, Throughput: 1, UnitsTotal: 50, Edit: edit}); !errors.Is(err, store.ErrNotRunning) {
		t.Fatalf("modify a cancelled test: %v", err)
	}
	if err := ModifyTest(ctx, s, "nope", TestChange{Edit: edit}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("modify an unknown test: %v", err)
	}
	check("after refused changes", "spec-1+edit+edit", 7, 2)
}

// A liar's purge (store.PurgeIdentity, which runs the kind's purgeRows
// in its transaction) deletes exactly the liar's batches of the test and
// their games and stores the recomputed SPRT state; another test keeps
// the liar's batches; a second purge changes nothing. On both backends.
func TestPurgeStored(t *testing.T) { storetest.EachBackend(t, testPurgeStored) }

func testPurgeStored(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_700_000_000, 0)
	for _, id := range []string{"s1", "s2"} {
		j := &store.Job{ID: id, Kind: KindMatch, State: store.StateRunning, CreatedAt: at, RootMoves: []string{}}
		if err := CreateTest(ctx, s, j, &StoredTest{Spec: []byte("spec"), BatchPairs: 1, SPRT: "before"}); err != nil {
			t.Fatal(err)
		}
		for idx, w := range []string{"w-honest", "w-liar", "w-honest"} {
			if err := CommitBatch(ctx, s, storedBatch(id, idx, w, at), twoGames, "state", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := &store.Purge{JobID: "s1", Identity: "mallory", Reason: "its games differ", At: at, WorkerIDs: []string{"w-liar"}, SPRT: "after", SetSPRT: true}
	if err := s.PurgeIdentity(ctx, p); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(when string) {
		t.Helper()
		bs, err := StoredBatches(ctx, s, "s1")
		if err != nil || len(bs) != 2 || bs[0].Idx != 0 || bs[1].Idx != 2 {
			t.Fatalf("%s: batches %+v %v", when, bs, err)
		}
		if n, _ := s.CountPGNs(ctx, "s1"); n != 4 {
			t.Fatalf("%s: %d games, want the kept batches' 4", when, n)
		}
		for i := range 2 {
			if _, err := s.PGN(ctx, "s1", 1, i); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s: game %d of the liar's batch: %v", when, i, err)
			}
		}
		if row, _ := LoadTest(ctx, s, "s1"); row.SPRT != "after" {
			t.Fatalf("%s: SPRT state %q", when, row.SPRT)
		}
		if bs, _ := StoredBatches(ctx, s, "s2"); len(bs) != 3 {
			t.Fatalf("%s: the other test has %d batches, want its 3", when, len(bs))
		}
		if row, _ := LoadTest(ctx, s, "s2"); row.SPRT != "state" {
			t.Fatalf("%s: the other test's SPRT state %q", when, row.SPRT)
		}
	}
	check("after the purge")
	if err := s.PurgeIdentity(ctx, &store.Purge{JobID: "s1", Identity: "mallory", Reason: "again", At: at}); err != nil {
		t.Fatal(err)
	}
	check("after a second purge")
}

// A store whose tests' tables were made by the core's steps 1 and 3
// (releases before the kind kept them) keeps its tests: the kind's first
// step finds the tables there and adds pgns_expired_at where a table of
// a release before step 3 lacks it. The store is made here as those
// releases left it: the tables with a test in them, no schema:test
// version, and (as a file of the first release has) no pgns_expired_at.
// On both backends.
func TestAdoptsTheTablesOfEarlierReleases(t *testing.T) {
	storetest.EachBackend(t, func(t *testing.T, open storetest.Opener) {
		ctx := context.Background()
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(1_700_000_000, 0)
		j := &store.Job{ID: "s-old", Kind: KindSPRT, State: store.StateRunning, CreatedAt: at, RootMoves: []string{}}
		if err := CreateTest(ctx, s, j, &StoredTest{Spec: []byte{7}, BatchPairs: 3, SPRT: "old"}); err != nil {
			t.Fatal(err)
		}
		if err := CommitBatch(ctx, s, storedBatch("s-old", 0, "w", at), twoGames, "old", &store.JobChange{State: store.StateDone, FinishedAt: at}, nil); err != nil {
			t.Fatal(err)
		}
		storetest.ForgetKindVersionIn(t, s, Kind, "ALTER TABLE tests DROP COLUMN pgns_expired_at")
		s.Close()

		if s, err = open(); err != nil {
			t.Fatalf("reopening a store whose tables came before the kind's version: %v", err)
		}
		defer s.Close()
		if v, err := s.KindVersion(ctx, Kind); err != nil || v != 1 {
			t.Fatalf("schema:%s after the reopen: %d %v, want 1", Kind, v, err)
		}
		row, err := LoadTest(ctx, s, "s-old")
		bs, _ := StoredBatches(ctx, s, "s-old")
		if err != nil || row.BatchPairs != 3 || row.SPRT != "old" || len(bs) != 1 || bs[0].Wins != 1 {
			t.Fatalf("the earlier release's test: %+v %+v %v", row, bs, err)
		}
		if ids, err := s.ExpireGames(ctx, at.Add(time.Second), at.Add(time.Hour), GameTable); err != nil || !slices.Equal(ids, []string{"s-old"}) {
			t.Fatalf("expiry over the adopted table: %v %v", ids, err)
		}
	})
}

// The first release's data directory (the fixture its binary wrote)
// opens with the kind's tables adopted: its SPRT test and match read
// back with their batches and plain-text games, and the retention
// setting expires them (the column the kind's step added).
func TestAdoptsTheFirstReleasesFile(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(storetest.Release1(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.KindVersion(ctx, Kind); err != nil || v != 1 {
		t.Fatalf("schema:%s: %d %v, want 1", Kind, v, err)
	}
	for _, id := range []string{release1SPRT, release1Match} {
		row, err := LoadTest(ctx, s, id)
		if err != nil || len(row.Spec) == 0 || row.BatchPairs < 1 || !row.PGNsExpired.IsZero() {
			t.Fatalf("release-1 test %s: %+v %v", id, row, err)
		}
		bs, err := StoredBatches(ctx, s, id)
		var pairs int
		for _, b := range bs {
			pairs += b.Pairs
		}
		games, _ := s.CountPGNs(ctx, id)
		if err != nil || len(bs) == 0 || int64(2*pairs) != games {
			t.Fatalf("release-1 test %s: %d batches of %d pairs, %d games, %v", id, len(bs), pairs, games, err)
		}
	}
	if row, _ := LoadTest(ctx, s, release1SPRT); row.SPRT == "" {
		t.Fatal("the release-1 SPRT test has no SPRT state")
	}
	ids, err := s.ExpireGames(ctx, time.Unix(1_900_000_000, 0), time.Unix(1_900_000_001, 0), GameTable)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{release1Match, release1SPRT}) {
		t.Fatalf("expired %v %v", ids, err)
	}
}

// A SQLite store copied to PostgreSQL (arbiter store copy) carries the
// kind's tables: the first release's tests and a new one read back the
// same, and a batch committed after the copy sorts after the copied ones.
func TestCopiedToPostgres(t *testing.T) {
	ctx := context.Background()
	src, err := store.Open(storetest.Release1(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	at := time.Unix(1_800_000_000, 0)
	j := &store.Job{ID: "s-new", Kind: KindMatch, State: store.StateRunning, CreatedAt: at, RootMoves: []string{}, UnitsTotal: 4}
	if err := CreateTest(ctx, src, j, &StoredTest{Spec: []byte{0, 1, 2, 255}, BatchPairs: 1}); err != nil {
		t.Fatal(err)
	}
	for _, idx := range []int{3, 1} {
		if err := CommitBatch(ctx, src, storedBatch("s-new", idx, "w", at), twoGames, "", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	dst, rows := storetest.CopyToPostgres(t, src)
	if rows["tests"] != 3 || rows["batches"] < 3 || rows["pgns"] == 0 {
		t.Fatalf("copied %v", rows)
	}
	for _, id := range []string{release1SPRT, release1Match, "s-new"} {
		want, _ := LoadTest(ctx, src, id)
		got, err := LoadTest(ctx, dst, id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("test %s after the copy: %+v %v, want %+v", id, got, err, want)
		}
		wantBs, _ := StoredBatches(ctx, src, id)
		gotBs, err := StoredBatches(ctx, dst, id)
		if err != nil || len(wantBs) == 0 || !reflect.DeepEqual(gotBs, wantBs) {
			t.Fatalf("batches of %s after the copy: %+v %v, want %+v", id, gotBs, err, wantBs)
		}
	}
	if err := CommitBatch(ctx, dst, storedBatch("s-new", 0, "w", at), twoGames, "", nil, nil); err != nil {
		t.Fatalf("a batch after the copy: %v", err)
	}
	bs, _ := StoredBatches(ctx, dst, "s-new")
	if len(bs) != 3 || bs[0].Idx != 3 || bs[1].Idx != 1 || bs[2].Idx != 0 {
		t.Fatalf("batches after the copy, in the order accepted: %+v", bs)
	}
}
