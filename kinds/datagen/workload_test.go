package datagen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// eachStore runs fn on SQLite and on PostgreSQL (the kind's own schema on
// each backend; skipped with a message without PostgreSQL unless
// ARBITER_REQUIRE_POSTGRES=1).
func eachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Start(t).NewDatabase(t)) })
}

var (
	alice = identity.Identity{Name: "alice", Role: identity.Worker}
	carol = identity.Identity{Name: "carol", Role: identity.Client}
)

type env struct {
	t   *testing.T
	dir string
	dsn string // "": SQLite in dir; postgres://...: that database
	st  *store.Store
	wl  *Workload
	c   *core.Core
}

func newEnv(t *testing.T) *env { return newEnvOn(t, "") }

// newEnvOn is newEnv on the store dsn names ("": SQLite).
func newEnvOn(t *testing.T, dsn string) *env {
	e := &env{t: t, dir: t.TempDir(), dsn: dsn}
	e.start()
	t.Cleanup(func() { e.st.Close() })
	return e
}

// start (re)opens the store and builds the workload and core over it.
func (e *env) start() {
	e.t.Helper()
	st, err := store.OpenURL(e.dsn, e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.st = st
	wl, err := New(workload.Deps{Store: st, DataDir: e.dir})
	if err != nil {
		e.t.Fatal(err)
	}
	e.wl = wl
	e.c = core.New(core.Config{Store: st, LeaseDuration: time.Minute, LeaseKey: []byte("test key")}, wl)
	wl.SetHost(e.c.Host())
	if err := e.c.Load(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) restart() {
	e.c.Close()
	e.st.Close()
	e.start()
}

func (e *env) worker(name string) *core.Worker {
	w, err := e.c.Register(context.Background(), alice, name, core.Caps{Cores: 1, Tags: []string{capability.Datagen, capability.Builtin}})
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func (e *env) create(positions uint64) string {
	e.t.Helper()
	spec := &arbiterv1.DatagenSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"}, Positions: positions, Nodes: 300,
		RandomPliesMin: 8, RandomPliesMax: 9, Seed: 7, BatchGames: 2}
	ref, err := e.c.Create(context.Background(), carol, Kind, spec)
	if err != nil {
		e.t.Fatal(err)
	}
	return ref.ID
}

// lease takes a batch for w.
func (e *env) lease(w *core.Worker) (core.Grant, *arbiterv1.DatagenBatch) {
	e.t.Helper()
	g, ok, err := e.c.Lease(context.Background(), alice, w.ID, 0)
	if err != nil || !ok {
		e.t.Fatalf("no lease: %v", err)
	}
	b := &arbiterv1.DatagenBatch{}
	if err := g.Payload.(*arbiterv1.WorkUnit).GetPlugin().UnmarshalTo(b); err != nil {
		e.t.Fatal(err)
	}
	return g, b
}

// play plays batch b with the embedded engine, with seed (b's own unless
// another is given).
func play(t *testing.T, b *arbiterv1.DatagenBatch, seed uint64) []byte {
	t.Helper()
	games, err := dg.PlayGames(context.Background(), func() (match.Player, error) { return builtin.New("dev", nil) },
		BatchSettings(b), seed, int(b.GetGames()))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := dg.EncodeShard(&buf, games); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (e *env) submit(w *core.Worker, g core.Grant, shard []byte) (core.Verdict, error) {
	res, err := anypb.New(&arbiterv1.DatagenBatchResult{Shard: shard})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.c.Submit(context.Background(), alice, w.ID, g.Lease.ID, g.Lease.UnitID, res, time.Second)
}

func (e *env) progress(id string) (*arbiterv1.Job, *arbiterv1.DatagenProgress) {
	e.t.Helper()
	snap, err := e.c.Job(id, true)
	if err != nil {
		e.t.Fatal(err)
	}
	j := snap.(*arbiterv1.Job)
	d := &arbiterv1.DatagenJob{}
	if err := j.GetDetail().UnmarshalTo(d); err != nil {
		e.t.Fatal(err)
	}
	return j, d.GetProgress()
}

// A shard counts once and only when it is the batch's: garbage, games of
// another seed and a replayed result are refused or not counted again, and
// the job ends with exactly the positions asked for, through a restart.
func TestShardsCountOnceAndExactly(t *testing.T) { eachStore(t, testShardsCountOnceAndExactly) }

func testShardsCountOnceAndExactly(t *testing.T, dsn string) {
	e := newEnvOn(t, dsn)
	id := e.create(150)
	w := e.worker("w1")

	g, b := e.lease(w)
	if _, err := e.submit(w, g, []byte("not a shard")); apierr.ReasonOf(err) != apierr.ReasonMalformedResult {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := e.submit(w, g, play(t, b, b.GetSeed()+1)); apierr.ReasonOf(err) != apierr.ReasonImplausibleResult {
		t.Fatalf("another seed's games: %v", err)
	}
	shard := play(t, b, b.GetSeed())
	if v, err := e.submit(w, g, shard); err != nil || v != core.Accepted {
		t.Fatalf("the batch's games: %v %v", v, err)
	}
	if v, err := e.submit(w, g, shard); err != nil || v != core.Duplicate {
		t.Fatalf("again: %v %v", v, err)
	}
	_, p := e.progress(id)
	first := p.GetPositions()
	if p.GetShards() != 1 || first == 0 || p.GetGames() != 2 {
		t.Fatalf("after one shard: %+v", p)
	}

	// A restart keeps what was counted; the rest of the job goes on.
	e.restart()
	w = e.worker("w1")
	if _, p := e.progress(id); p.GetPositions() != first || p.GetShards() != 1 {
		t.Fatalf("after restart: %+v, want %d positions", p, first)
	}
	for i := 0; ; i++ {
		j, p := e.progress(id)
		if j.GetState() == arbiterv1.JobState_JOB_STATE_DONE {
			if p.GetPositions() != 150 {
				t.Fatalf("done with %d positions, want 150", p.GetPositions())
			}
			break
		}
		if i > 40 {
			t.Fatalf("not done after %d batches: %+v", i, p)
		}
		g, b := e.lease(w)
		if v, err := e.submit(w, g, play(t, b, b.GetSeed())); err != nil || v != core.Accepted {
			t.Fatalf("batch %d: %v %v", b.GetIndex(), v, err)
		}
	}
	rows, err := loadShards(context.Background(), e.st, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	seen := map[uint64]bool{}
	for _, r := range rows {
		if seen[r.Batch] {
			t.Fatalf("batch %d stored twice", r.Batch)
		}
		seen[r.Batch] = true
		sum += r.Take
	}
	if sum != 150 {
		t.Fatalf("stored takes add up to %d, want 150", sum)
	}
}

func TestBadSpecs(t *testing.T) {
	e := newEnv(t)
	ok := func() *arbiterv1.DatagenSpec {
		return &arbiterv1.DatagenSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"}, Positions: 10, Nodes: 300,
			RandomPliesMin: 8, RandomPliesMax: 9}
	}
	cases := []struct {
		name string
		edit func(*arbiterv1.DatagenSpec)
		want string
	}{
		{"no positions", func(s *arbiterv1.DatagenSpec) { s.Positions = 0 }, "positions"},
		{"no nodes", func(s *arbiterv1.DatagenSpec) { s.Nodes = 0 }, "nodes"},
		{"plies reversed", func(s *arbiterv1.DatagenSpec) { s.RandomPliesMin = 9; s.RandomPliesMax = 8 }, "random-plies"},
		{"huge batch", func(s *arbiterv1.DatagenSpec) { s.BatchGames = 100000 }, "batch-games"},
		{"bad opening", func(s *arbiterv1.DatagenSpec) { s.Openings = []string{"not a fen"} }, "openings"},
		{"no engine", func(s *arbiterv1.DatagenSpec) { s.Engine = nil }, "engine"},
		{"line break in name", func(s *arbiterv1.DatagenSpec) { s.Name = "a\nb" }, "name"},
	}
	for _, c := range cases {
		s := ok()
		c.edit(s)
		_, err := e.c.Create(context.Background(), carol, Kind, s)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	if n := len(e.wl.jobs); n != 0 {
		t.Fatalf("%d jobs stored from refused specs", n)
	}
}

// A dataset whose engine a worker refused (no score, nodes ignored) says
// so through Needs: the worker is barred with its reason, and the job
// asks to fail when none can start it (grpcapi.StallWatch does, for every
// kind: TestStallWatchFailsRefusedDataset). Failing it stores the reason,
// which a restart keeps.
func TestRefusedEngineBarsTheWorker(t *testing.T) {
	e := newEnv(t)
	id := e.create(100)
	w := e.worker("w1")
	g, _ := e.lease(w)
	if err := e.c.Release(context.Background(), alice, w.ID, g.Lease.ID, `engine "dev" reported no score at ply 9`, true); err != nil {
		t.Fatal(err)
	}
	n, ok := e.wl.Needs(id)
	if !ok || !n.FailUnstarted || n.Barred[w.ID] != `cannot run the engine: engine "dev" reported no score at ply 9` {
		t.Fatalf("needs %+v (%v); want %s barred with the engine's reason, failing when unstarted", n, ok, w.ID)
	}
	if info, _ := e.wl.Describe(id); info.Started {
		t.Fatal("a dataset with no shard and no batch leased counts as started")
	}
	if err := e.c.Fail(context.Background(), id, "no connected worker could start it: "+n.Barred[w.ID]); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Fail(context.Background(), id, "again"); err == nil {
		t.Error("a failed dataset failed again")
	}
	e.restart()
	j, _ := e.progress(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_FAILED || !bytes.Contains([]byte(j.GetError()), []byte("reported no score")) {
		t.Fatalf("after restart: %v (%q)", j.GetState(), j.GetError())
	}
}

// Retention deletes a finished dataset's shard files, keeps its counts,
// and the mark survives a restart.
func TestRetentionDeletesShards(t *testing.T) { eachStore(t, testRetentionDeletesShards) }

func testRetentionDeletesShards(t *testing.T, dsn string) {
	e := newEnvOn(t, dsn)
	id := e.create(20)
	w := e.worker("w1")
	for {
		j, _ := e.progress(id)
		if j.GetState() == arbiterv1.JobState_JOB_STATE_DONE {
			break
		}
		g, b := e.lease(w)
		if _, err := e.submit(w, g, play(t, b, b.GetSeed())); err != nil {
			t.Fatal(err)
		}
	}
	shards := func() int {
		m, _ := filepath.Glob(filepath.Join(e.dir, "datagen", "*.shard"))
		return len(m)
	}
	if shards() == 0 {
		t.Fatal("no shard files")
	}
	if ids, err := e.wl.Expire(context.Background(), time.Now().Add(-time.Hour), time.Now()); err != nil || len(ids) != 0 {
		t.Fatalf("expired before the cutoff: %v %v", ids, err)
	}
	ids, err := e.wl.Expire(context.Background(), time.Now().Add(time.Hour), time.Now())
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("expired %v, %v", ids, err)
	}
	if n := shards(); n != 0 {
		t.Fatalf("%d shard files left", n)
	}
	e.restart()
	if _, p := e.progress(id); p.GetPositions() != 20 {
		t.Fatalf("counts after retention and restart: %+v", p)
	}
	if e.wl.jobs[id].expired.IsZero() {
		t.Fatal("expiry not kept across the restart")
	}
}
