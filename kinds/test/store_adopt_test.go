package test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/storetest"
)

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
