package spsa

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/storetest"
)

// A tune's updates come back in the order applied with θ bit for bit; an
// update of a batch already applied, or at a seq already taken, is refused
// and changes nothing.
func TestStoredUpdates(t *testing.T) { storetest.EachBackend(t, testStoredUpdates) }

func testStoredUpdates(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	j := &store.Job{ID: "t1", Kind: "spsa", State: store.StateRunning, CreatedAt: time.Unix(100, 0), RootMoves: []string{}, UnitsTotal: 3}
	if err := CreateTune(ctx, s, j, &StoredTune{JobID: "t1", Spec: []byte{1, 2, 3}, BatchPairs: 4}); err != nil {
		t.Fatal(err)
	}
	thetas := [][]float64{{0.1, 1.0 / 3, math.Nextafter(75, 76)}, {-1e-300, 2.5, 1e15}}
	for i, batch := range []int{2, 0} {
		u := &Update{JobID: "t1", Seq: i, Batch: batch, UnitID: "t1." + string(rune('0'+batch)), WorkerID: "w", Pairs: 4,
			Penta: [5]int64{0, 1, 2, 1, 0}, Wins: 2, Draws: 4, Losses: 2, Incidents: "time_loss:1", Theta: thetas[i],
			LeasedAt: time.Unix(110, 0), At: time.Unix(120+int64(i), 0), ElapsedMS: 9}
		var job *store.JobChange
		if i == 1 {
			job = &store.JobChange{State: store.StateDone, FinishedAt: time.Unix(200, 0)}
		}
		if err := CommitUpdate(ctx, s, u, []string{"[a]", "[b]", "[c]", "[d]", "[e]", "[f]", "[g]", "[h]"}, job,
			[]store.Event{{JobID: "t1", WorkerID: "w", Kind: "excluded", At: time.Unix(120, 0)}}); err != nil {
			t.Fatal(err)
		}
	}
	again := &Update{JobID: "t1", Seq: 2, Batch: 2, UnitID: "t1.2", Theta: []float64{1}}
	if err := CommitUpdate(ctx, s, again, []string{"[x]"}, nil, nil); err == nil {
		t.Fatal("batch 2 applied twice")
	}
	taken := &Update{JobID: "t1", Seq: 1, Batch: 1, UnitID: "t1.1", Theta: []float64{1}}
	if err := CommitUpdate(ctx, s, taken, nil, nil, nil); err == nil {
		t.Fatal("seq 1 taken twice")
	}
	s.Close()

	s, err = open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	row, err := LoadTune(ctx, s, "t1")
	if err != nil || row.BatchPairs != 4 || !slices.Equal(row.Spec, []byte{1, 2, 3}) {
		t.Fatalf("tune row %+v %v", row, err)
	}
	us, err := Updates(ctx, s, "t1")
	if err != nil || len(us) != 2 {
		t.Fatalf("updates %+v %v", us, err)
	}
	for i, u := range us {
		if u.Seq != i || !slices.Equal(u.Theta, thetas[i]) || u.Penta != [5]int64{0, 1, 2, 1, 0} || u.Incidents != "time_loss:1" || !u.At.Equal(time.Unix(120+int64(i), 0)) {
			t.Errorf("update %d: %+v", i, u)
		}
	}
	if us[0].Batch != 2 || us[1].Batch != 0 {
		t.Errorf("batches in applied order: %d, %d", us[0].Batch, us[1].Batch)
	}
	if n, _ := s.CountPGNs(ctx, "t1"); n != 16 {
		t.Errorf("%d games stored, want 16", n)
	}
	jobs, _ := s.Jobs(ctx)
	if len(jobs) != 1 || jobs[0].State != store.StateDone {
		t.Errorf("job %+v", jobs)
	}
	if ev, _ := s.Events(ctx, "t1"); len(ev) != 2 {
		t.Errorf("%d events, want 2", len(ev))
	}
	if _, err := LoadTune(ctx, s, "nope"); err == nil {
		t.Error("an unknown tune read")
	}
	// Retention deletes a finished tune's games and keeps its updates.
	ids, err := s.ExpireGames(ctx, time.Unix(300, 0), time.Unix(400, 0), GameTable)
	if err != nil || !slices.Equal(ids, []string{"t1"}) {
		t.Fatalf("expired %v %v", ids, err)
	}
	if n, _ := s.CountPGNs(ctx, "t1"); n != 0 {
		t.Errorf("%d games left after expiry", n)
	}
	if row, _ := LoadTune(ctx, s, "t1"); !row.PGNsExpired.Equal(time.Unix(400, 0)) {
		t.Errorf("expiry recorded as %v", row.PGNsExpired)
	}
	if us, _ := Updates(ctx, s, "t1"); len(us) != 2 {
		t.Errorf("%d updates after expiry", len(us))
	}
}

// A file whose tunes' tables were made by the core's step 4 (releases
// before the kind kept them) keeps its tunes: the kind's first step finds
// the tables there and adds nothing. The file is made here as those
// releases left it: the tables with a tune in them, and no schema:spsa
// version.
func TestAdoptsTheTablesOfEarlierReleases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	j := &store.Job{ID: "t-old", Kind: Kind, State: store.StateRunning, CreatedAt: time.Unix(100, 0), RootMoves: []string{}}
	if err := CreateTune(ctx, s, j, &StoredTune{Spec: []byte{7}, BatchPairs: 3}); err != nil {
		t.Fatal(err)
	}
	if err := CommitUpdate(ctx, s, &Update{JobID: "t-old", Batch: 0, UnitID: "t-old.0", Theta: []float64{0.5}}, nil, nil, nil); err != nil {
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
	row, err := LoadTune(ctx, s, "t-old")
	us, _ := Updates(ctx, s, "t-old")
	if err != nil || row.BatchPairs != 3 || len(us) != 1 || us[0].Theta[0] != 0.5 {
		t.Fatalf("the earlier release's tune: %+v %+v %v", row, us, err)
	}
}

// A SQLite store copied to PostgreSQL (arbiter store copy) carries the
// kind's tables: the tune and its updates read back the same.
func TestCopiedToPostgres(t *testing.T) {
	ctx := context.Background()
	src, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	now := time.Unix(1_800_000_000, 0)
	j := &store.Job{ID: "t1", Kind: Kind, State: store.StateRunning, CreatedAt: now, RootMoves: []string{}}
	if err := CreateTune(ctx, src, j, &StoredTune{Spec: []byte{0, 1, 2, 255}, BatchPairs: 2}); err != nil {
		t.Fatal(err)
	}
	if err := CommitUpdate(ctx, src, &Update{JobID: "t1", Seq: 0, Batch: 3, UnitID: "t1.3", Theta: []float64{1.0 / 3}, At: now},
		[]string{"[Event \"t\"]\n\n1. e4 *\n"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	dst, rows := storetest.CopyToPostgres(t, src)
	if rows["tunes"] != 1 || rows["tune_updates"] != 1 || rows["pgns"] != 1 {
		t.Fatalf("copied %v", rows)
	}
	want, _ := LoadTune(ctx, src, "t1")
	got, err := LoadTune(ctx, dst, "t1")
	if err != nil || !slices.Equal(got.Spec, want.Spec) || got.BatchPairs != want.BatchPairs {
		t.Fatalf("the tune after the copy: %+v %v, want %+v", got, err, want)
	}
	us, err := Updates(ctx, dst, "t1")
	if err != nil || len(us) != 1 || us[0].Theta[0] != 1.0/3 || us[0].Batch != 3 || !us[0].At.Equal(now) {
		t.Fatalf("updates after the copy: %+v %v", us, err)
	}
}
