package epd

import (
	"context"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// coordEnv is the workload under a real core over a real store (SQLite in
// a directory, or a PostgreSQL database), driven as the game workloads'
// tests drive theirs, on a fake clock.
type coordEnv struct {
	*gamepairtest.Driver
	dir string
	dsn string
	st  *store.Store
}

func newCoordEnv(t *testing.T, dsn string) *coordEnv {
	e := &coordEnv{Driver: gamepairtest.NewDriver(t), dir: t.TempDir(), dsn: dsn}
	e.start()
	t.Cleanup(func() { e.C.Close(); e.st.Close() })
	return e
}

func (e *coordEnv) start() {
	e.T.Helper()
	st, err := store.OpenURL(e.dsn, e.dir)
	if err != nil {
		e.T.Fatal(err)
	}
	wl, err := NewWorkload(workload.Deps{Store: st, DataDir: e.dir, Now: e.Clk.Now})
	if err != nil {
		e.T.Fatal(err)
	}
	e.st = st
	e.C = core.New(core.Config{Store: st, Now: e.Clk.Now, LeaseDuration: gamepairtest.LeaseDuration, LeaseKey: []byte("test key")}, wl)
	wl.SetHost(e.C.Host())
	if err := e.C.Load(context.Background()); err != nil {
		e.T.Fatal(err)
	}
}

// restart is a coordinator restart over the same store.
func (e *coordEnv) restart() {
	e.C.Close()
	e.st.Close()
	e.start()
}

// worker registers a worker that runs EPD batches and the embedded engine.
func (e *coordEnv) worker(name string) *core.Worker {
	e.T.Helper()
	w, err := e.C.Register(context.Background(), gamepairtest.Alice, name, core.Caps{Cores: 1, Tags: []string{CapabilityEPD, capability.Builtin}})
	if err != nil {
		e.T.Fatal(err)
	}
	return w
}

// lease takes a batch for w (ok false: none to take).
func (e *coordEnv) lease(w *core.Worker) (core.Grant, *arbiterv1.EpdBatch, bool) {
	e.T.Helper()
	g, ok := e.Lease(w)
	if !ok {
		return g, nil, false
	}
	b := &arbiterv1.EpdBatch{}
	if err := g.Payload.(*arbiterv1.WorkUnit).GetPlugin().UnmarshalTo(b); err != nil {
		e.T.Fatal(err)
	}
	return g, b, true
}

func (e *coordEnv) submit(w *core.Worker, g core.Grant, res proto.Message) (core.Verdict, error) {
	a, err := anypb.New(res)
	if err != nil {
		e.T.Fatal(err)
	}
	return e.Submit(w, g, a)
}

// detail is a job's full snapshot and its EPD detail.
func (e *coordEnv) detail(id string) (*arbiterv1.Job, *arbiterv1.EpdJob) {
	e.T.Helper()
	j := e.Job(id)
	d := &arbiterv1.EpdJob{}
	if err := j.GetDetail().UnmarshalTo(d); err != nil {
		e.T.Fatal(err)
	}
	return j, d
}

// answer is a worker's result for b that plays each position's first bm
// move (solved) — what a worker that found every move would send.
func answer(b *arbiterv1.EpdBatch) *arbiterv1.EpdResult {
	res := &arbiterv1.EpdResult{Batch: b.Batch, Engine: b.Engine}
	for i, p := range b.Positions {
		res.Positions = append(res.Positions, &arbiterv1.EpdPositionResult{Position: p, Move: b.PositionSpecs[i].BestMoves[0],
			Solved: true, SolveDepth: 3, Depth: 5, Nodes: 1000, ElapsedMs: 10})
	}
	return res
}

func eachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Start(t).NewDatabase(t)) })
}

// TestBatchesCountOnceThroughRestart: on SQLite and on PostgreSQL, a
// batch's result counts once and only when it answers its batch —
// garbage, another batch's answer, an illegal move and a claim of
// "solved" for a move that does not solve are refused or not believed; a
// repeat is DUPLICATE. A coordinator restart keeps the merged batch and
// leases only the others; the job ends done with every position's result
// once. The control: the good answer is accepted and counted.
func TestBatchesCountOnceThroughRestart(t *testing.T) { eachStore(t, testBatchesCountOnce) }

func testBatchesCountOnce(t *testing.T, dsn string) {
	e := newCoordEnv(t, dsn)
	s := suite(t, "wac.epd", 4)
	spec := SpecOf(s, []*arbiterv1.EngineSpec{matchspec.EngineToProto(match.EngineConfig{Name: "builtin", Proto: "builtin"})}, Limit{Nodes: 1000}, 2)
	jobID := e.Create(Kind, spec)
	w := e.worker("w1")
	g, b, ok := e.lease(w)
	if !ok || len(b.PositionSpecs) != 2 || b.EngineSpec.GetName() != "builtin" || b.Limit.GetNodes() != 1000 {
		t.Fatalf("first lease: %v %v", ok, b)
	}
	if _, err := e.submit(w, g, &arbiterv1.DatagenBatchResult{}); apierr.ReasonOf(err) != apierr.ReasonMalformedResult {
		t.Errorf("another kind's result: %v", err)
	}
	other := answer(b)
	other.Batch = b.Batch + 1
	if _, err := e.submit(w, g, other); apierr.ReasonOf(err) != apierr.ReasonImplausibleResult {
		t.Errorf("another batch's answer under this lease: %v", err)
	}
	illegal := answer(b)
	illegal.Positions[0].Move = "a1a8"
	if _, err := e.submit(w, g, illegal); apierr.ReasonOf(err) != apierr.ReasonImplausibleResult {
		t.Errorf("an illegal move: %v", err)
	}
	good := answer(b)
	lie := proto.Clone(good).(*arbiterv1.EpdResult)
	pos := &s.Positions[b.Positions[1]]
	board := pos.Position()
	for _, mv := range board.LegalMoves() {
		if !pos.Solves(mv) {
			lie.Positions[1].Move = board.UCIMove(mv)
			break
		}
	}
	if v, err := e.submit(w, g, lie); err != nil || v != core.Accepted {
		t.Fatalf("control: a legal answer: %v %v", v, err)
	}
	if v, err := e.submit(w, g, good); err != nil || v != core.Duplicate {
		t.Errorf("a second answer for the batch: %v %v, want duplicate", v, err)
	}
	_, d := e.detail(jobID)
	if d.BatchesDone != 1 || d.Searched[0] != 2 || d.Solved[0] != 1 {
		t.Fatalf("after one batch: done %d searched %v solved %v; want 1, [2], [1] (the unsolving move not believed solved)", d.BatchesDone, d.Searched, d.Solved)
	}

	e.restart()
	w = e.worker("w1")
	if _, d := e.detail(jobID); d.BatchesDone != 1 || d.Searched[0] != 2 {
		t.Fatalf("after restart: done %d searched %v", d.BatchesDone, d.Searched)
	}
	g, b, ok = e.lease(w)
	if !ok || b.Batch != 1 {
		t.Fatalf("after restart leased %v batch %d, want batch 1", ok, b.GetBatch())
	}
	if v, err := e.submit(w, g, answer(b)); err != nil || v != core.Accepted {
		t.Fatalf("second batch: %v %v", v, err)
	}
	j, d := e.detail(jobID)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || d.BatchesDone != 2 || d.Searched[0] != 4 || d.Solved[0] != 3 {
		t.Fatalf("end: %v done %d searched %v solved %v", j.GetState(), d.BatchesDone, d.Searched, d.Solved)
	}
	if _, _, ok := e.lease(e.worker("w2")); ok {
		t.Error("a done job leased another batch")
	}
}

// TestExpiredLeaseLeasedAgain: a batch whose worker stops answering is
// leased again to another worker once its lease ends, and counts once.
func TestExpiredLeaseLeasedAgain(t *testing.T) {
	e := newCoordEnv(t, "")
	s := suite(t, "wac.epd", 2)
	spec := SpecOf(s, []*arbiterv1.EngineSpec{matchspec.EngineToProto(match.EngineConfig{Name: "builtin", Proto: "builtin"})}, Limit{Nodes: 1000}, 2)
	jobID := e.Create(Kind, spec)
	w1, w2 := e.worker("w1"), e.worker("w2")
	if _, _, ok := e.lease(w1); !ok {
		t.Fatal("no lease for w1")
	}
	if _, _, ok := e.lease(w2); ok {
		t.Fatal("control: the job's one batch leased twice while its lease is live")
	}
	// w1 is never heard of again: its lease runs out.
	e.ExpireAll()
	g, b, ok := e.lease(w2)
	if !ok {
		t.Fatal("the batch of the lost lease was not leased again")
	}
	if v, err := e.submit(w2, g, answer(b)); err != nil || v != core.Accepted {
		t.Fatalf("%v %v", v, err)
	}
	if j, d := e.detail(jobID); j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || d.Searched[0] != 2 {
		t.Fatalf("end: %v searched %v", j.GetState(), d.Searched)
	}
}

// TestWorkerChecksBatch: the worker parses a leased batch again and
// refuses one that does not hold together (no engine, more positions
// than a batch may have, indexes and positions that do not pair up, a
// position that is not legal, no limit). The control: the batch the
// coordinator leased passes.
func TestWorkerChecksBatch(t *testing.T) {
	e := newCoordEnv(t, "")
	s := suite(t, "wac.epd", 3)
	spec := SpecOf(s, []*arbiterv1.EngineSpec{matchspec.EngineToProto(match.EngineConfig{Name: "builtin", Proto: "builtin"})}, Limit{Nodes: 1000}, 3)
	e.Create(Kind, spec)
	_, b, ok := e.lease(e.worker("w1"))
	if !ok {
		t.Fatal("no lease")
	}
	if ps, _, err := checkBatch(b); err != nil || len(ps) != 3 {
		t.Fatalf("control: the leased batch: %d positions, %v", len(ps), err)
	}
	bad := map[string]func(b *arbiterv1.EpdBatch){
		"no engine":   func(b *arbiterv1.EpdBatch) { b.EngineSpec = nil },
		"no limit":    func(b *arbiterv1.EpdBatch) { b.Limit = nil },
		"unpaired":    func(b *arbiterv1.EpdBatch) { b.PositionSpecs = b.PositionSpecs[:2] },
		"illegal FEN": func(b *arbiterv1.EpdBatch) { b.PositionSpecs[0].Fen = "8/8/8/8/8/8/8/8 w - -" },
		"too many": func(b *arbiterv1.EpdBatch) {
			b.Positions = make([]uint32, MaxBatchPositions+1)
		},
	}
	for name, spoil := range bad {
		c := proto.Clone(b).(*arbiterv1.EpdBatch)
		spoil(c)
		if _, _, err := checkBatch(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
