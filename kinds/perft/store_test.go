package perft

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/testing/storetest"
)

// storedJob writes a perft job of n positions in units of two, the
// first unit settled by a run of counts; the second unit is sliced and
// cross-checked, with a run by another program.
func storedJob(t *testing.T, s *store.Store, id string, n int, counts []engine.Count) {
	t.Helper()
	ctx := context.Background()
	pos := make([]Position, n)
	for i := range pos {
		pos[i] = Position{FEN: fmt.Sprintf("fen %d", i), Mult: []RootMult{{0, uint64(i + 1)}, {1, 1}}}
	}
	var units []Unit
	for i := 0; 2*i < n; i++ {
		units = append(units, Unit{ID: fmt.Sprintf("%s.%d", id, i), JobID: id, Idx: i, First: 2 * i, End: min(2*i+2, n),
			Verify: i == 0, Slice: i % 3, CrossCheck: i == 1})
	}
	j := &store.Job{ID: id, Kind: Kind, FEN: "f", Depth: 5, SplitPly: 2, State: store.StateRunning, CreatedAt: time.Unix(100, 0),
		RootMoves: []string{"e2e4", "d2d4"}, UnitsTotal: len(units), Positions: n, CrossCheck: "stockfish"}
	if err := createJob(ctx, s, j, pos, units); err != nil {
		t.Fatal(err)
	}
	run := &Run{UnitID: id + ".0", WorkerID: "w1", Owner: "alice", Counts: counts, At: time.Unix(200, 0), ElapsedMS: 5}
	if err := <-commitStart(s, id, id+".0", run, &UnitChange{Settled: true, Counts: counts}, nil,
		[]store.Event{{JobID: id, UnitID: id + ".0", WorkerID: "w1", Kind: "mismatch", Detail: "x", At: time.Unix(200, 0)}}); err != nil {
		t.Fatal(err)
	}
	cross := &Run{UnitID: id + ".1", WorkerID: "w2", Owner: "bob", Program: "stockfish", Counts: counts[:1], At: time.Unix(200, 0), ElapsedMS: 7}
	if err := <-commitStart(s, id, id+".1", cross, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// storedRows reads back what storedJob wrote.
func storedRows(t *testing.T, s *store.Store, id string) ([]Position, []Unit, []Run) {
	t.Helper()
	ctx := context.Background()
	ps, err := loadPositions(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	us, err := loadUnits(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := loadRuns(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	return ps, us, rs
}

var bigCounts = []engine.Count{engine.CountOf(7), engine.CountOf(1 << 63), {Hi: 3, Lo: 5}}

// A perft job's positions (more than one multi-row INSERT holds), units
// and runs read back as written, with counts past 2^64 and the runs in
// the order accepted; a second run of a unit by one worker is refused and
// changes nothing; a job whose units cannot be written leaves no job row
// and no positions.
func TestStoredJob(t *testing.T) { storetest.EachBackend(t, testStoredJob) }

func testStoredJob(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	n := 2*rowsPerInsert + 3
	storedJob(t, s, "p1", n, bigCounts)
	again := &Run{UnitID: "p1.0", WorkerID: "w1", Counts: []engine.Count{engine.CountOf(1)}, At: time.Unix(300, 0)}
	done := &store.JobChange{State: store.StateDone, FinishedAt: time.Unix(300, 0), Total: "1"}
	if err := <-commitStart(s, "p1", "p1.0", again, &UnitChange{}, done, []store.Event{{JobID: "p1", Kind: "lost"}}); err == nil {
		t.Fatal("a second run of p1.0 by w1 stored")
	}
	// Two units with one id: the job is not created at all.
	twice := []Unit{{ID: "p2.0", JobID: "p2", End: 1}, {ID: "p2.0", JobID: "p2", Idx: 1, First: 1, End: 2}}
	j2 := &store.Job{ID: "p2", Kind: Kind, State: store.StateRunning, RootMoves: []string{"e2e4"}}
	if err := createJob(ctx, s, j2, []Position{{FEN: "a"}, {FEN: "b"}}, twice); err == nil {
		t.Fatal("a job with two units of one id created")
	}
	s.Close()

	s, err = open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jobs, err := s.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "p1" || jobs[0].State != store.StateRunning {
		t.Fatalf("jobs after the refused writes: %+v %v", jobs, err)
	}
	ps, us, rs := storedRows(t, s, "p1")
	if len(ps) != n || ps[n-1].FEN != fmt.Sprintf("fen %d", n-1) || ps[n-1].Mult[0] != (RootMult{0, uint64(n)}) || ps[3].Mult[1] != (RootMult{1, 1}) {
		t.Fatalf("%d positions, the last %+v", len(ps), ps[len(ps)-1])
	}
	if len(us) != (n+1)/2 || !us[0].Settled || !us[0].Verify || !slices.Equal(us[0].Counts, bigCounts) ||
		us[1].Settled || !us[1].CrossCheck || us[1].Slice != 1 || us[len(us)-1].End != n {
		t.Fatalf("units %+v ... %+v", us[:2], us[len(us)-1])
	}
	if len(rs) != 2 || rs[0].Owner != "alice" || rs[0].Counts[2] != (engine.Count{Hi: 3, Lo: 5}) || rs[0].Program != "" ||
		rs[1].Program != "stockfish" || rs[1].UnitID != "p1.1" || !rs[1].At.Equal(time.Unix(200, 0)) || rs[1].ElapsedMS != 7 {
		t.Fatalf("runs %+v", rs)
	}
	if ev, _ := s.Events(ctx, "p1"); len(ev) != 1 || ev[0].Kind != "mismatch" {
		t.Fatalf("events %+v", ev)
	}
	if ps, _ := loadPositions(ctx, s, "p2"); len(ps) != 0 {
		t.Fatalf("the refused job left %d positions", len(ps))
	}
}

// oldShape is what an earlier release's core steps left: the tables
// without the kind's version, and, for a file whose later core steps had
// not run, without the columns those steps added (SQLite drops them
// here; their values go with them).
func oldShape(t *testing.T, dir string, dropLater bool) {
	t.Helper()
	if dropLater {
		db, err := sql.Open("sqlite", filepath.Join(dir, store.FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range laterColumns {
			if _, err := db.Exec(fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", c.table, c.column)); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
	storetest.ForgetKindVersion(t, dir, Kind)
}

// A file whose perft tables were made by the core's steps (releases
// before the kind kept them) keeps its perft jobs: the kind's first step
// finds the tables and keeps every row, and where the core's later steps
// had not yet added runs.owner, units.slice, units.cross_check and
// runs.program, it adds them (their defaults read back), and a new run
// with a program stores.
func TestAdoptsTheTablesOfEarlierReleases(t *testing.T) {
	for _, dropLater := range []bool{false, true} {
		t.Run(fmt.Sprintf("without the later columns %v", dropLater), func(t *testing.T) {
			dir := t.TempDir()
			s, err := store.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			storedJob(t, s, "p-old", 5, bigCounts)
			s.Close()
			oldShape(t, dir, dropLater)

			s = storetest.OpenAdopted(t, dir, Kind, 1)
			ps, us, rs := storedRows(t, s, "p-old")
			if len(ps) != 5 || len(us) != 3 || len(rs) != 2 || !slices.Equal(us[0].Counts, bigCounts) || !slices.Equal(rs[0].Counts, bigCounts) {
				t.Fatalf("the earlier release's job: %d positions, units %+v, runs %+v", len(ps), us, rs)
			}
			wantOwner, wantProgram, wantSlice := "alice", "stockfish", 1
			if dropLater {
				wantOwner, wantProgram, wantSlice = "", "", 0
			}
			if rs[0].Owner != wantOwner || rs[1].Program != wantProgram || us[1].Slice != wantSlice || us[1].CrossCheck != !dropLater {
				t.Fatalf("the later columns: runs %+v, units %+v", rs, us)
			}
			later := &Run{UnitID: "p-old.2", WorkerID: "w3", Owner: "carol", Program: "stockfish", Counts: bigCounts[:1], At: time.Unix(400, 0)}
			if err := <-commitStart(s, "p-old", "p-old.2", later, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, _, rs := storedRows(t, s, "p-old"); len(rs) != 3 || rs[2].Program != "stockfish" || rs[2].Owner != "carol" {
				t.Fatalf("a run after the adoption: %+v", rs)
			}
		})
	}
}

// A fresh store's perft tables have the same columns, in the same order,
// on SQLite and PostgreSQL (less PostgreSQL's rowid, SQLite's own), and
// the same as an earlier release's tables once adopted.
func TestSameColumnsOnEveryBackend(t *testing.T) {
	want := map[string][]string{
		"positions": {"job_id", "idx", "fen", "mult"},
		"units":     {"id", "job_id", "idx", "first_pos", "end_pos", "verify", "settled", "counts", "slice", "cross_check"},
		"runs":      {"unit_id", "worker_id", "job_id", "counts", "at", "elapsed_ms", "owner", "program"},
	}
	check := func(t *testing.T, s *store.Store) {
		t.Helper()
		for table, cols := range want {
			var got []string
			err := s.Read(context.Background(), func(ctx context.Context, db *sql.DB) error {
				rows, err := db.QueryContext(ctx, "SELECT * FROM "+table+" WHERE 1=0")
				if err != nil {
					return err
				}
				defer rows.Close()
				got, err = rows.Columns()
				return err
			})
			got = slices.DeleteFunc(got, func(c string) bool { return c == "rowid" })
			if err != nil || !slices.Equal(got, cols) {
				t.Errorf("%s: columns %v (%v), want %v", table, got, err, cols)
			}
		}
	}
	storetest.EachBackend(t, func(t *testing.T, open storetest.Opener) {
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, s)
	})
	t.Run("adopted", func(t *testing.T) {
		dir := t.TempDir()
		s, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		oldShape(t, dir, true)
		if s, err = store.Open(dir); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, s)
	})
}

// A SQLite store copied to PostgreSQL (arbiter store copy) carries the
// kind's tables: the job's positions, units and runs read back the same,
// and a run accepted after the copy sorts after the copied ones.
func TestCopiedToPostgres(t *testing.T) {
	src, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	storedJob(t, src, "p1", 7, bigCounts)
	dst, rows := storetest.CopyToPostgres(t, src)
	if rows["positions"] != 7 || rows["units"] != 4 || rows["runs"] != 2 || rows["jobs"] != 1 {
		t.Fatalf("copied %v", rows)
	}
	wp, wu, wr := storedRows(t, src, "p1")
	gp, gu, gr := storedRows(t, dst, "p1")
	if !reflect.DeepEqual(gp, wp) || !reflect.DeepEqual(gu, wu) || !reflect.DeepEqual(gr, wr) {
		t.Fatalf("after the copy:\n%+v %+v %+v\nwant\n%+v %+v %+v", gp, gu, gr, wp, wu, wr)
	}
	later := &Run{UnitID: "p1.0", WorkerID: "w9", Counts: bigCounts, At: time.Unix(200, 0)}
	if err := <-commitStart(dst, "p1", "p1.0", later, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, rs := storedRows(t, dst, "p1"); len(rs) != 3 || rs[2].WorkerID != "w9" {
		t.Fatalf("a run after the copy (same time as the copied ones): %+v", rs)
	}
}

// The first release's data directory (storetest.Release1, made by that
// release's binary) keeps its perft jobs: the kind adopts the tables the
// core's step 1 made there and adds the later columns. The finished
// perft 5's settled units, weighted by their positions' multiplicities,
// add up to its stored total; the verified perft 4 of Kiwipete has two
// runs of every unit, stored before identities (owner "") by the
// embedded generator (program "").
func TestAdoptsTheFirstReleasesFile(t *testing.T) {
	s := storetest.OpenAdopted(t, storetest.Release1(t), Kind, 1)
	ps, us, _ := storedRows(t, s, "pdf32b7395626")
	var total uint64
	for _, u := range us {
		if !u.Settled || len(u.Counts) != u.End-u.First || u.Slice != 0 || u.CrossCheck {
			t.Fatalf("release-1 unit %+v", u)
		}
		for k, c := range u.Counts {
			for _, m := range ps[u.First+k].Mult {
				total += m.N * c.Lo
			}
		}
	}
	if len(us) == 0 || total != 4865609 {
		t.Fatalf("the release-1 perft 5: %d units adding up to %d, want 4865609", len(us), total)
	}
	_, us, rs := storedRows(t, s, "p01ef1ed5c139")
	per := map[string]int{}
	for _, r := range rs {
		if r.Owner != "" || r.Program != "" || len(r.Counts) == 0 {
			t.Fatalf("release-1 run %+v", r)
		}
		per[r.UnitID]++
	}
	for _, u := range us {
		if per[u.ID] != 2 {
			t.Fatalf("release-1 verified unit %s has %d runs, want 2", u.ID, per[u.ID])
		}
	}
	if len(us) != 48 {
		t.Fatalf("the release-1 verified job has %d units, want 48", len(us))
	}
}
