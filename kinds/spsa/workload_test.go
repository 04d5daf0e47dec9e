package spsa

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	sp "github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/worker/gamepairs"
)

// Every bad tune is refused with BAD_INPUT naming the field, in a short
// message, and nothing is stored.
func TestCreateRefusesBadSpecs(t *testing.T) {
	e := newEnv(t, Config{})
	refusals := map[string]func(*arbiterv1.SpsaSpec){
		"engine missing":                     func(s *arbiterv1.SpsaSpec) { s.Engine = nil },
		"engine: name":                       func(s *arbiterv1.SpsaSpec) { s.Engine.Name = gamepairtest.Huge },
		"engine: name longer than 199 bytes": func(s *arbiterv1.SpsaSpec) { s.Engine.Name = strings.Repeat("n", 200) },
		"Bogus":                              func(s *arbiterv1.SpsaSpec) { s.Engine.Options = map[string]string{"Bogus": "1"} },
		`param "NoSuchParam": the engine has no option of that name`:    func(s *arbiterv1.SpsaSpec) { s.Params[0].Name = "NoSuchParam" },
		`param "Ponder": the engine's option is a check, not a spin`:    func(s *arbiterv1.SpsaSpec) { s.Params[0].Name = "Ponder" },
		`param "RFPMargin": min 300 > max 200`:                          func(s *arbiterv1.SpsaSpec) { s.Params[0].Min, s.Params[0].Max = 300, 200 },
		`param "RFPMargin": start 10 is outside [min, max] = [20, 300]`: func(s *arbiterv1.SpsaSpec) { s.Params[0].Start = 10 },
		`param "FutMargin": c_end 0 must be positive`:                   func(s *arbiterv1.SpsaSpec) { s.Params[1].CEnd = 0 },
		`param "FutMargin": c_end -3 must be positive`:                  func(s *arbiterv1.SpsaSpec) { s.Params[1].CEnd = -3 },
		`param "FutMargin": r_end NaN`:                                  func(s *arbiterv1.SpsaSpec) { s.Params[1].REnd = math.NaN() },
		`param "RFPMargin": max 500 is above the engine's max 300`:      func(s *arbiterv1.SpsaSpec) { s.Params[0].Max = 500 },
		`param "rfpmargin": named twice`:                                func(s *arbiterv1.SpsaSpec) { s.Params[1].Name = "rfpmargin" },
		"params: none given":                                            func(s *arbiterv1.SpsaSpec) { s.Params = nil },
		"params: 1001, at most 1000":                                    func(s *arbiterv1.SpsaSpec) { s.Params = make([]*arbiterv1.SpsaParam, 1001) },
		"pairs 0: want 1 to 50000000":                                   func(s *arbiterv1.SpsaSpec) { s.Pairs = 0 },
		"pairs 100000000":                                               func(s *arbiterv1.SpsaSpec) { s.Pairs = 100_000_000 },
		"batch pairs 257: at most 256":                                  func(s *arbiterv1.SpsaSpec) { s.BatchPairs = 257 },
		"alpha NaN":                                                     func(s *arbiterv1.SpsaSpec) { s.Alpha = proto.Float64(math.NaN()) },
		"gamma -1":                                                      func(s *arbiterv1.SpsaSpec) { s.Gamma = proto.Float64(-1) },
		"A ratio +Inf":                                                  func(s *arbiterv1.SpsaSpec) { s.ARatio = proto.Float64(math.Inf(1)) },
		"time control":                                                  func(s *arbiterv1.SpsaSpec) { s.TimeControl = nil },
		"cannot be played": func(s *arbiterv1.SpsaSpec) {
			s.TimeControl.GetClock().Base, s.TimeControl.GetClock().Increment = durationpb.New(10*time.Millisecond), nil
		},
		"openings: none given":            func(s *arbiterv1.SpsaSpec) { s.Openings = nil },
		"openings (test book): opening 2": func(s *arbiterv1.SpsaSpec) { s.Openings[2].Fen = "not a fen" },
		"openings: unknown order":         func(s *arbiterv1.SpsaSpec) { s.BookOrder = "shuffled" },
		"event":                           func(s *arbiterv1.SpsaSpec) { s.Event = gamepairtest.Huge },
		"throughput":                      func(s *arbiterv1.SpsaSpec) { s.Throughput = -1 },
		"hang timeout":                    func(s *arbiterv1.SpsaSpec) { s.HangTimeout = durationpb.New(2 * time.Hour) },
	}
	gamepairtest.RefuseEach(e.Driver, Kind, e.St, func() *arbiterv1.SpsaSpec { return tuneSpec(100, 4) }, refusals)
	// A UCI binary's options are the workers' to check; its parameters
	// are still checked on their own.
	s := tuneSpec(100, 4)
	s.Engine = &arbiterv1.EngineSpec{Name: "sf", Command: "/usr/games/stockfish"}
	s.Params = []*arbiterv1.SpsaParam{{Name: "Skill Level", Start: 10, Min: 0, Max: 20, CEnd: 1, REnd: 0.002}}
	e.create(s)
}

// Defaults are filled in on a copy of the spec: Fishtest's schedule, a
// batch size from the time control, throughput 1.
func TestCreateDefaults(t *testing.T) {
	e := newEnv(t, Config{})
	in := tuneSpec(1000, 0)
	orig := proto.Clone(in)
	j := e.Job(e.create(in))
	if !proto.Equal(in, orig) {
		t.Fatal("Create changed the caller's spec")
	}
	s := j.GetSpsa()
	// A game at 10+0.1 is about 26 s at the reference speed: 1 pair makes
	// the 30 s batch.
	if s.GetAlpha() != 0.602 || s.GetGamma() != 0.101 || s.GetARatio() != 0.1 || s.GetBatchPairs() != 1 || s.GetThroughput() != 1 ||
		s.GetOpeningsCount() != 8 || s.GetOpenings() != nil || j.GetKind() != Kind || j.GetSubmitter() != "carol" ||
		j.GetProgress().GetUnitsTotal() != 1000 {
		t.Fatalf("defaults: %v (kind %s)", s, j.GetKind())
	}
	p := j.GetSpsaProgress()
	if len(p.GetParams()) != 2 || p.GetParams()[0].GetCurrent() != 75 || p.GetA() != 100 || !slices.Equal(p.GetTrajectoryUpdates(), []uint64{0}) ||
		p.GetTrajectoryEvery() != 10 || p.GetBatchesTotal() != 1000 {
		t.Fatalf("progress at the start: %v", p)
	}
	small := tuneSpec(3, 10)
	if j := e.Job(e.create(small)); j.GetSpsa().GetBatchPairs() != 3 || j.GetProgress().GetUnitsTotal() != 1 {
		t.Fatalf("a 3-pair tune in 10-pair batches: %v", j)
	}
}

// A batch is the tune's perturbation of θ as it stands: engine A with
// θ + c_k·Δ over the engine's options, engine B with θ − c_k·Δ, the
// openings of its pairs in book order, the clock scaled to the worker.
func TestBatchIsAPerturbation(t *testing.T) {
	e := newEnv(t, Config{})
	spec := tuneSpec(64, 4)
	id := e.create(spec)
	stored := e.Job(id).GetSpsa()
	tu, err := sp.New(configOfSpec(stored))
	if err != nil {
		t.Fatal(err)
	}
	slow := e.Worker("slow", gamepair.DefaultReferenceNPS/2)
	for idx := range 3 {
		g := e.MustLease(slow)
		b := gamepairtest.BatchOf(g)
		if g.Lease.UnitID != gamepair.UnitID(id, idx) || b.GetTestId() != id || b.GetFirstPair() != uint32(4*idx) || len(b.GetOpenings()) != 4 {
			t.Fatalf("batch %d: %s, first pair %d, %d openings", idx, g.Lease.UnitID, b.GetFirstPair(), len(b.GetOpenings()))
		}
		p, _ := tu.Perturbation(idx)
		plus, minus, _ := tu.Sides(p)
		for side, e2 := range map[string]*arbiterv1.EngineSpec{"dev+": b.GetEngineA(), "dev-": b.GetEngineB()} {
			vals := plus
			if side == "dev-" {
				vals = minus
			}
			want := map[string]string{"Hash": "8", "RFPMargin": strconv.Itoa(int(vals[0])), "FutMargin": strconv.Itoa(int(vals[1]))}
			if e2.GetName() != side || e2.GetCommand() != "embedded" || !mapsEqual(e2.GetOptions(), want) {
				t.Errorf("batch %d: engine %s with %v, want %s with %v", idx, e2.GetName(), e2.GetOptions(), side, want)
			}
		}
		if got := b.GetPgnParams(); len(got) != 2 || got[0] != "RFPMargin" || got[1] != "FutMargin" {
			t.Errorf("batch %d: PGNs record %v, want the parameters RFPMargin and FutMargin", idx, got)
		}
		if b.GetTimeScale() != 2 || b.GetTimeControl().GetClock().GetBase().AsDuration() != 20*time.Second {
			t.Errorf("batch %d: time scale %v, base %v", idx, b.GetTimeScale(), b.GetTimeControl().GetClock().GetBase().AsDuration())
		}
	}
	// Openings: pair k plays opening k of the book in its random order.
	ordered, err := gamepair.CheckOpenings(gamepair.Book{Openings: spec.GetOpenings(), Order: "random", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	g := e.MustLease(slow)
	for i, o := range gamepairtest.BatchOf(g).GetOpenings() {
		if !proto.Equal(o, ordered[(12+i)%8]) {
			t.Errorf("pair %d plays %v, want %v", 12+i, o, ordered[(12+i)%8])
		}
	}
	// A worker without the capability gets nothing.
	w, err := e.C.Register(context.Background(), alice, "perft-only", core.Caps{Cores: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := e.Lease(w); ok {
		t.Errorf("a worker that plays no games got %s", g.Lease.UnitID)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A batch re-issued after a lost lease plays the same perturbation, and is
// applied once: the late result of the first holder is a duplicate.
func TestReissuedBatchIsAppliedOnce(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(tuneSpec(40, 4))
	a, b := e.Worker("a", 0), e.Worker("b", 0)
	first := e.MustLease(a)
	e.ExpireAll() // a vanishes mid-batch
	again := e.MustLease(b)
	if again.Lease.UnitID != first.Lease.UnitID || !proto.Equal(gamepairtest.BatchOf(again), gamepairtest.BatchOf(first)) {
		t.Fatalf("re-issued batch differs:\n%v\n%v", gamepairtest.BatchOf(first), gamepairtest.BatchOf(again))
	}
	e.MustSubmit(b, again, score(4, 5, 1), core.Accepted)
	e.MustSubmit(a, first, score(4, 0, 8), core.Duplicate) // late, under its signed lease
	e.MustSubmit(b, again, score(4, 0, 8), core.Duplicate)
	us := e.updates(id)
	if len(us) != 1 || us[0].Batch != 0 || us[0].Wins != 5 || us[0].Losses != 1 || us[0].WorkerID != b.ID {
		t.Fatalf("updates stored: %+v", us)
	}
	want, err := sp.Replay(configOfSpec(e.Job(id).GetSpsa()), []sp.Update{{Batch: 0, Wins: 5, Losses: 1}})
	if err != nil {
		t.Fatal(err)
	}
	j := e.Job(id)
	p := j.GetSpsaProgress()
	if p.GetUpdates() != 1 || p.GetGames() != 8 || p.GetWins() != 5 || p.GetLosses() != 1 || p.GetPgns() != 8 ||
		p.GetParams()[0].GetCurrent() != want.Theta()[0] || p.GetParams()[1].GetCurrent() != want.Theta()[1] {
		t.Fatalf("after one update: %v, want θ %v", p, want.Theta())
	}
	if ra := workerRow(p, a.ID); ra.GetDisconnects() != 1 || ra.GetGames() != 0 {
		t.Errorf("a's row: %v", ra)
	}
	if got := testutilCount(e, "white", "checkmate") + testutilCount(e, "black", "checkmate"); got != 6 {
		t.Errorf("arbiter_games_total counted %v decisive games, want 6", got)
	}
	// A result that does not fit the batch is refused and applies nothing.
	g := e.MustLease(a)
	if _, err := e.Submit(a, g, score(3, 1, 1)); apierr.ReasonOf(err) != apierr.ReasonMalformedResult {
		t.Errorf("3 pairs for a batch of 4: %v", err)
	}
	if len(e.updates(id)) != 1 {
		t.Error("a refused result was applied")
	}
}

func workerRow(p *arbiterv1.SpsaProgress, id string) *arbiterv1.WorkerIncidents {
	for _, w := range p.GetWorkers() {
		if w.GetWorkerId() == id {
			return w
		}
	}
	return nil
}

// Updates land in the order results arrive, which is recorded: replaying
// the stored order reproduces θ exactly. An update does not depend on θ,
// so the order shows where θ meets a bound: RFPMargin starts at its min,
// the batch landing first pushes it down (clamped), the others up.
func TestArrivalOrderIsRecorded(t *testing.T) {
	e := newEnv(t, Config{})
	spec := tuneSpec(40, 4)
	spec.Params[0].Start = 20
	id := e.create(spec)
	cfg := configOfSpec(e.Job(id).GetSpsa())
	tu, _ := sp.New(cfg)
	result := func(batch, sign int) *arbiterv1.GamePairBatchResult {
		p, _ := tu.Perturbation(batch)
		if sign*p.Flip[0] > 0 {
			return score(4, 6, 0)
		}
		return score(4, 0, 6)
	}
	results := []*arbiterv1.GamePairBatchResult{result(0, 1), result(1, 1), result(2, -1)}
	ws := []*core.Worker{e.Worker("a", 0), e.Worker("b", 0), e.Worker("c", 0)}
	var grants []core.Grant
	for _, w := range ws {
		grants = append(grants, e.MustLease(w))
	}
	var order []sp.Update
	for _, i := range []int{2, 0, 1} {
		e.MustSubmit(ws[i], grants[i], results[i], core.Accepted)
		order = append(order, sp.Update{Batch: i, Wins: int(results[i].GetWins()), Losses: int(results[i].GetLosses())})
	}
	us := e.updates(id)
	var stored []sp.Update
	for i, u := range us {
		if u.Seq != i {
			t.Fatalf("update %d has seq %d", i, u.Seq)
		}
		stored = append(stored, sp.Update{Batch: u.Batch, Wins: int(u.Wins), Losses: int(u.Losses)})
	}
	if !slices.Equal(stored, order) {
		t.Fatalf("stored order %v, arrival order %v", stored, order)
	}
	re, err := sp.Replay(cfg, stored)
	if err != nil {
		t.Fatal(err)
	}
	cur := currentTheta(e.Job(id))
	if !slices.Equal(re.Theta(), cur) || !slices.Equal(us[2].Theta, cur) {
		t.Fatalf("replay %v, stored %v, tune %v", re.Theta(), us[2].Theta, cur)
	}
	inOrder, _ := sp.Replay(cfg, []sp.Update{order[1], order[2], order[0]})
	if inOrder.Theta()[0] >= cur[0] {
		t.Errorf("RFPMargin: %v in arrival order, %v in batch order; the clamped push down should cost the batch order", cur[0], inOrder.Theta()[0])
	}
}

func currentTheta(j *arbiterv1.Job) []float64 {
	var out []float64
	for _, p := range j.GetSpsaProgress().GetParams() {
		out = append(out, p.GetCurrent())
	}
	return out
}

// A restart resumes the tune exactly: θ, trajectory, counts, workers;
// batches not applied are open again, lowest first; a lease held across
// the restart is adopted and its result applied once.
func TestLoadResumesExactly(t *testing.T) {
	e := newEnv(t, Config{TrajectoryPoints: 4})
	id := e.create(tuneSpec(80, 4)) // 20 batches: a trajectory point every 5 updates
	a, b := e.Worker("a", 0), e.Worker("b", gamepair.DefaultReferenceNPS)
	for i := range 7 {
		w := []*core.Worker{a, b}[i%2]
		e.MustSubmit(w, e.MustLease(w), score(4, i%5, (i+2)%4), core.Accepted)
	}
	held := e.MustLease(b) // batch 7, held across the restart
	lost := e.MustLease(a) // batch 8, its worker never comes back
	e.Clk.Advance(time.Second)
	before := e.Job(id)
	p := before.GetSpsaProgress()
	if p.GetUpdates() != 7 || !slices.Equal(p.GetTrajectoryUpdates(), []uint64{0, 5, 7}) || len(p.GetParams()[0].GetTrajectory()) != 3 {
		t.Fatalf("before the restart: %v", p)
	}

	e.Restart()
	after := e.Job(id)
	before.GetSpsaProgress().BatchesLeased = 0 // leases live in memory
	before.GetProgress().ActiveWorkers = 0
	if !proto.Equal(before, after) {
		t.Fatalf("the tune changed across a restart:\nbefore %v\nafter  %v", before, after)
	}
	// b's lease comes back on its heartbeat; a's batch is open again.
	st, err := e.C.Heartbeat(context.Background(), alice, b.ID, []core.Held{{LeaseID: held.Lease.ID, UnitID: held.Lease.UnitID}})
	if err != nil || st[0].State != core.HeldActive {
		t.Fatalf("heartbeat after the restart: %v %v", st, err)
	}
	if g := e.MustLease(a); g.Lease.UnitID != lost.Lease.UnitID {
		t.Errorf("first lease after the restart: %s, want the lowest open batch %s", g.Lease.UnitID, lost.Lease.UnitID)
	}
	e.MustSubmit(b, held, score(4, 2, 2), core.Accepted)
	e.MustSubmit(b, held, score(4, 2, 2), core.Duplicate)
	cfg := configOfSpec(after.GetSpsa())
	var order []sp.Update
	for _, u := range e.updates(id) {
		order = append(order, sp.Update{Batch: u.Batch, Wins: int(u.Wins), Losses: int(u.Losses)})
	}
	re, err := sp.Replay(cfg, order)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 8 || !slices.Equal(re.Theta(), currentTheta(e.Job(id))) {
		t.Fatalf("%d updates; replay %v, tune %v", len(order), re.Theta(), currentTheta(e.Job(id)))
	}
	if tr := e.Job(id).GetSpsaProgress().GetTrajectoryUpdates(); !slices.Equal(tr, []uint64{0, 5, 8}) {
		t.Errorf("trajectory after the restart: %v", tr)
	}
}

// A tune ends after its last batch; its snapshot survives a restart and
// nothing more is leased. A cancelled tune keeps its updates.
func TestTuneEnds(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(tuneSpec(10, 4)) // batches of 4, 4 and 2 pairs
	a := e.Worker("a", 0)
	for i, pairs := range []int{4, 4, 2} {
		g := e.MustLease(a)
		if n := len(gamepairtest.BatchOf(g).GetOpenings()); n != pairs {
			t.Fatalf("batch %d has %d pairs, want %d", i, n, pairs)
		}
		e.MustSubmit(a, g, score(pairs, 1, 0), core.Accepted)
	}
	j := e.Job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetSpsaProgress().GetUpdates() != 3 || j.GetSpsaProgress().GetPairsDone() != 10 ||
		j.GetFinishedAt() == nil {
		t.Fatalf("after the last batch: %v", j)
	}
	if g, ok := e.Lease(a); ok {
		t.Fatalf("a finished tune leased %s", g.Lease.UnitID)
	}
	e.Restart()
	if after := e.Job(id); !proto.Equal(j, after) {
		t.Fatalf("finished tune changed across a restart:\n%v\n%v", j, after)
	}
	// The retention setting deletes its games; the updates stay.
	ids, err := e.St.ExpireGames(context.Background(), e.Clk.Now().Add(time.Second), e.Clk.Now(), GameTable)
	if err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("expired %v %v", ids, err)
	}
	e.WL.PGNsExpired(ids)
	if p := e.Job(id).GetSpsaProgress(); p.GetPgns() != 0 || p.GetUpdates() != 3 {
		t.Fatalf("after expiry: %d games stored, %d updates", p.GetPgns(), p.GetUpdates())
	}
	e.Restart()
	if p := e.Job(id).GetSpsaProgress(); p.GetPgns() != 0 || p.GetUpdates() != 3 {
		t.Fatalf("after expiry and a restart: %d games stored, %d updates", p.GetPgns(), p.GetUpdates())
	}
	other := e.create(tuneSpec(10, 4))
	e.MustSubmit(a, e.MustLease(a), score(4, 0, 1), core.Accepted)
	g := e.MustLease(a)
	if err := e.C.Cancel(context.Background(), carol, other, "enough"); err != nil {
		t.Fatal(err)
	}
	if v, _ := e.Submit(a, g, score(4, 1, 1)); v != core.Discarded {
		t.Errorf("a result after cancel: %v", v)
	}
	if c := e.Job(other); c.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || c.GetSpsaProgress().GetUpdates() != 1 {
		t.Errorf("cancelled tune: %v", c)
	}
	if st := e.WL.Stats(); st.Jobs[core.JobKey{Kind: Kind, State: "done"}] != 1 || st.Jobs[core.JobKey{Kind: Kind, State: "cancelled"}] != 1 {
		t.Errorf("stats: %v", st.Jobs)
	}
}

// A stored update that breaks the chain (here: a gap in the order of
// application) keeps its tune from being served, and is reported; other
// tunes load.
func TestBadStoredUpdateIsAProblem(t *testing.T) {
	e := newEnv(t, Config{})
	bad := e.create(tuneSpec(40, 4))
	good := e.create(tuneSpec(40, 4))
	a, b := e.Worker("a", 0), e.Worker("b", 0)
	for range 2 { // two leases out at once: one of each tune (throughput shares)
		ga, gb := e.MustLease(a), e.MustLease(b)
		e.MustSubmit(a, ga, score(4, 1, 0), core.Accepted)
		e.MustSubmit(b, gb, score(4, 1, 0), core.Accepted)
	}
	if len(e.updates(bad)) == 0 || len(e.updates(good)) == 0 {
		t.Fatalf("updates: %d of one tune, %d of the other; want some of each", len(e.updates(bad)), len(e.updates(good)))
	}
	goodBefore := e.Job(good)
	e.C.Close()
	e.St.Close()
	db, err := sql.Open("sqlite", filepath.Join(e.Dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE tune_updates SET seq = 9 WHERE job_id = ? AND seq = 0", bad); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e.Open()
	ps := e.WL.LoadProblems()
	if len(ps) != 1 || ps[0].ID != bad || !strings.Contains(ps[0].Error(), "gap") {
		t.Fatalf("load problems: %v", ps)
	}
	if _, err := e.C.Job(bad, false); err == nil {
		t.Error("a tune with a broken chain is served")
	}
	if j := e.Job(good); !proto.Equal(j, goodBefore) {
		t.Errorf("the other tune changed:\n%v\n%v", goodBefore, j)
	}
}

// A tune through the core against the synthetic match: three workers play
// batches whose scores follow a smooth function of the values they are
// given, one loses leases, the coordinator restarts twice; every parameter
// ends near the hidden optimum, every batch is applied exactly once, and
// the recorded order replays to θ.
func TestConvergesThroughCore(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole tune")
	}
	e := newEnv(t, Config{})
	spec := tuneSpec(12_000, 30) // 400 updates
	spec.Params = []*arbiterv1.SpsaParam{
		{Name: "RFPMargin", Start: 250, Min: 20, Max: 300, CEnd: 10, REnd: 0.002},
		{Name: "FutMargin", Start: 40, Min: 20, Max: 400, CEnd: 15, REnd: 0.002},
	}
	id := e.create(spec)
	m := &synthetic{names: []string{"RFPMargin", "FutMargin"}, opt: []float64{120, 250}, s: 0.03}
	ws := []*core.Worker{e.Worker("a", 0), e.Worker("b", 0), e.Worker("flaky", 0)}
	var out []core.Grant // leases handed out, answered two rounds later
	round := 0
	for e.Job(id).GetState() == arbiterv1.JobState_JOB_STATE_RUNNING {
		round++
		if round > 2000 {
			t.Fatal("the tune does not end")
		}
		for i, w := range ws {
			g, ok := e.Lease(w)
			if !ok {
				continue
			}
			if i == 2 && round%7 == 0 {
				continue // flaky never answers this one: its lease expires
			}
			out = append(out, g)
		}
		// Answer the oldest leases first but not in order: a worker's
		// result arrives after others handed out later.
		slices.Reverse(out[:min(2, len(out))])
		for len(out) > 3 {
			g := out[0]
			out = out[1:]
			w := ws[slices.IndexFunc(ws, func(w *core.Worker) bool { return w.ID == g.Lease.WorkerID })]
			if _, err := e.Submit(w, g, m.play(gamepairtest.BatchOf(g), 1)); err != nil {
				t.Fatal(err)
			}
		}
		if round%9 == 0 {
			e.ExpireAll()
		}
		if round == 60 || round == 150 {
			e.Restart()
			ws = []*core.Worker{e.Worker("a", 0), e.Worker("b", 0), e.Worker("flaky", 0)}
			out = nil
		}
	}
	j := e.Job(id)
	us := e.updates(id)
	batches := map[int]bool{}
	var order []sp.Update
	for _, u := range us {
		if batches[u.Batch] {
			t.Fatalf("batch %d applied twice", u.Batch)
		}
		batches[u.Batch] = true
		order = append(order, sp.Update{Batch: u.Batch, Wins: int(u.Wins), Losses: int(u.Losses)})
	}
	if len(us) != 400 || j.GetSpsaProgress().GetUpdates() != 400 || j.GetSpsaProgress().GetPairsDone() != 12_000 {
		t.Fatalf("%d updates stored, %d applied, %d pairs; want 400 over 12000", len(us), j.GetSpsaProgress().GetUpdates(), j.GetSpsaProgress().GetPairsDone())
	}
	re, err := sp.Replay(configOfSpec(j.GetSpsa()), order)
	if err != nil {
		t.Fatal(err)
	}
	theta := currentTheta(j)
	if !slices.Equal(re.Theta(), theta) {
		t.Fatalf("replay %v, tune %v", re.Theta(), theta)
	}
	for i, p := range spec.Params {
		if d := math.Abs(theta[i] - m.opt[i]); d > 0.1*(p.Max-p.Min) || d > 0.25*math.Abs(p.Start-m.opt[i]) {
			t.Errorf("%s went from %v to %v; the optimum is %v", p.Name, p.Start, theta[i], m.opt[i])
		}
	}
	if rf := workerRow(j.GetSpsaProgress(), ws[2].ID); rf.GetDisconnects() == 0 {
		t.Errorf("flaky lost no lease: %v", rf)
	}
	t.Logf("θ %.1f after %d updates (optimum %v); trajectory points %v", theta, len(us), m.opt, j.GetSpsaProgress().GetTrajectoryUpdates())
}

// The batches of a tune of the embedded engine are played for real by the
// worker's game runner: the engines accept the perturbed options, and the
// results pass every check and are applied.
func TestRealEngineBatches(t *testing.T) {
	e := newEnv(t, Config{})
	spec := tuneSpec(4, 2)
	spec.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 300}}
	id := e.create(spec)
	a := e.Worker("a", 0)
	for range 2 {
		g := e.MustLease(a)
		res, err := gamepairs.PlayBatch(context.Background(), gamepairtest.BatchOf(g), builtin.New)
		if err != nil {
			t.Fatal(err)
		}
		e.MustSubmit(a, g, res, core.Accepted)
	}
	j := e.Job(id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || j.GetSpsaProgress().GetGames() != 8 || len(e.updates(id)) != 2 {
		t.Fatalf("after two real batches: %v", j.GetSpsaProgress())
	}
	n, err := e.St.CountPGNs(context.Background(), id)
	if err != nil || n != 8 {
		t.Errorf("%d games stored (%v), want 8", n, err)
	}
}
