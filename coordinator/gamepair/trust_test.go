package gamepair_test

// The trust rules (trust.go, crosscheck.go, purge.go) through a real test
// workload (kinds/test's) in a core on a fake clock, over a real SQLite
// store: earning trust, an untrusted identity's batches held and its
// mismatch dropped, a liar purged with the SPRT recomputed exactly and
// stored, and two trusted identities that disagree pausing the test. Made
// up games (SkipGameReplay): moves differ where the outcomes' terminations
// do (wins end in checkmate, draws by repetition).

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	testkind "github.com/arbiter-chess/arbiter/kinds/test"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

var (
	farm    = identity.Identity{Name: "farm", Role: identity.Worker}  // vouched: an admin made it
	farm2   = identity.Identity{Name: "farm2", Role: identity.Worker} // vouched too
	mallory = identity.Identity{Name: "mallory", Role: identity.Worker}
	eve     = identity.Identity{Name: "eve", Role: identity.Worker}
)

type trustEnv struct {
	*gamepairtest.Env[testkind.Config, *testkind.Workload]
	trust *gamepair.Trust // the running coordinator's
}

// newTrustEnv is a test workload whose trust is stored in its store, with
// farm and farm2 vouched for, and replayFraction of trusted batches drawn.
func newTrustEnv(t *testing.T, replayFraction float64) *trustEnv {
	t.Helper()
	te := &trustEnv{}
	cfg := testkind.Config{}
	cfg.ReplayFraction = replayFraction
	te.Env = gamepairtest.NewEnv(t, cfg, func(cfg testkind.Config, st *store.Store, now func() time.Time, reg *prometheus.Registry) *testkind.Workload {
		cfg.Store, cfg.Now, cfg.Registerer = st, now, reg
		cfg.SkipGameReplay = true
		trust, err := gamepair.NewTrust(context.Background(), st, func(id string) bool { return id == farm.Name || id == farm2.Name }, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Trust, te.trust = trust, trust
		return testkind.New(cfg)
	})
	return te
}

// nodesSpec is a test of games games in batches of one pair between two
// embedded engines at 1,000 nodes (a replay reproduces its games), an
// SPRT when sprtOn (then without a cap: games 0).
func nodesSpec(games uint64, sprtOn bool) *arbiterv1.MatchSpec {
	ops := make([]*arbiterv1.Opening, 8)
	for i := range ops {
		ops[i] = &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{gamepairtest.BookMoves[i]}}
	}
	s := &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "new", Command: "embedded"},
		EngineB:     &arbiterv1.EngineSpec{Name: "base", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Openings:    ops, BookName: "test book", BookOrder: "sequential", Seed: 7, Games: games, BatchPairs: 1,
	}
	if sprtOn {
		s.Games, s.Sprt = 0, &arbiterv1.SprtParams{Elo0: 0, Elo1: 10, Model: "logistic"}
	}
	return s
}

func result(o sprt.Outcome) *arbiterv1.GamePairBatchResult {
	return gamepairtest.PairResult(1, func(int) (sprt.Outcome, sprt.Outcome) { return o, o })
}

func (te *trustEnv) stored(id string) []testkind.Batch {
	te.T.Helper()
	bs, err := testkind.StoredBatches(context.Background(), te.St, id)
	if err != nil {
		te.T.Fatal(err)
	}
	return bs
}

// replayOf leases for w of id and fails unless it gets the replay of g.
func (te *trustEnv) replayOf(id identity.Identity, w *core.Worker, g core.Grant) core.Grant {
	te.T.Helper()
	r, ok := te.LeaseOf(id, w)
	if !ok || r.Lease.UnitID != g.Lease.UnitID {
		te.T.Fatalf("%s leased %q %v, want the replay of %s", w.Name, r.Lease.UnitID, ok, g.Lease.UnitID)
	}
	return r
}

// playAndReplay has a worker of a play a fresh batch with outcome first,
// then a worker of b replay it with outcome second, answered want; it
// returns the batch's grant.
func (te *trustEnv) playAndReplay(a identity.Identity, wa *core.Worker, b identity.Identity, wb *core.Worker,
	first, second sprt.Outcome, want core.Verdict) core.Grant {
	te.T.Helper()
	g, ok := te.LeaseOf(a, wa)
	if !ok {
		te.T.Fatalf("%s got no batch", wa.Name)
	}
	te.MustSubmitOf(a, wa, g, result(first), core.Accepted)
	te.MustSubmitOf(b, wb, te.replayOf(b, wb, g), result(second), want)
	return g
}

// afresh fails unless w of id leases g's batch again (played afresh).
func (te *trustEnv) afresh(id identity.Identity, w *core.Worker, g core.Grant) {
	te.T.Helper()
	if r, ok := te.LeaseOf(id, w); !ok || r.Lease.UnitID != g.Lease.UnitID {
		te.T.Fatalf("%s leased %q %v, want %s afresh", w.Name, r.Lease.UnitID, ok, g.Lease.UnitID)
	}
}

// A newcomer's batches are all held, replayed by a trusted identity only
// (never by another newcomer), and count once confirmed; after
// TrustThreshold confirmed batches it is trusted (stored: a restart keeps
// it), and its batches count on its word.
func TestTrustEarnedByConfirmedBatches(t *testing.T) {
	te := newTrustEnv(t, 0)
	id := te.Create(testkind.Kind, nodesSpec(2*(gamepair.TrustThreshold+4), false))
	m1, f1, e1 := te.WorkerOf(mallory, "m1", 1e6), te.WorkerOf(farm, "f1", 1e6), te.WorkerOf(eve, "e1", 1e6)
	for k := range gamepair.TrustThreshold {
		if te.trust.Trusted(mallory.Name) {
			t.Fatalf("mallory trusted after %d confirmed batches", k)
		}
		g, _ := te.LeaseOf(mallory, m1)
		te.MustSubmitOf(mallory, m1, g, result(sprt.Win), core.Accepted)
		if n := len(te.stored(id)); n != k {
			t.Fatalf("mallory's unconfirmed batch counted: %d stored, want %d", n, k)
		}
		if r, ok := te.LeaseOf(eve, e1); ok && r.Lease.UnitID == g.Lease.UnitID {
			t.Fatal("a newcomer replays a newcomer's batch")
		} else if ok {
			te.C.Release(context.Background(), eve, e1.ID, r.Lease.ID, "", false)
		}
		te.MustSubmitOf(farm, f1, te.replayOf(farm, f1, g), result(sprt.Win), core.Accepted)
	}
	if l := te.trust.Level(mallory.Name); !l.Trusted || l.Agreed != gamepair.TrustThreshold {
		t.Fatalf("after %d confirmed batches: %+v", gamepair.TrustThreshold, l)
	}
	te.Restart()
	if !te.trust.Trusted(mallory.Name) || te.trust.Trusted(eve.Name) {
		t.Fatalf("after a restart: mallory %+v, eve %+v", te.trust.Level(mallory.Name), te.trust.Level(eve.Name))
	}
	m1 = te.WorkerOf(mallory, "m1", 1e6)
	before := len(te.stored(id))
	g, _ := te.LeaseOf(mallory, m1)
	te.MustSubmitOf(mallory, m1, g, result(sprt.Win), core.Accepted)
	if n := len(te.stored(id)); n != before+1 {
		t.Fatalf("a trusted identity's batch at replay fraction 0: %d stored, want %d", n, before+1)
	}
}

// An untrusted identity gets no batch of a test no replay can check (a
// clock): nothing there could confirm its games.
func TestTrustNoClockBatchesForNewcomers(t *testing.T) {
	te := newTrustEnv(t, 0)
	spec := nodesSpec(4, false)
	spec.TimeControl = gamepairtest.BaseInc(10*time.Second, 100*time.Millisecond)
	te.Create(testkind.Kind, spec)
	if g, ok := te.LeaseOf(mallory, te.WorkerOf(mallory, "m1", 1e6)); ok {
		t.Fatalf("a newcomer leased %s of a clock test", g.Lease.UnitID)
	}
	if _, ok := te.LeaseOf(farm, te.WorkerOf(farm, "f1", 1e6)); !ok {
		t.Fatal("the vouched identity gets no batch of the clock test")
	}
}

// A newcomer whose batch a trusted replay contradicts is found lying at
// once, with no third identity: its batch is dropped (the trusted replay
// counts), every batch it counted in the test (here a replay it completed)
// is purged with its games, the SPRT is recomputed from its start over
// the batches kept, and all of it is stored: after a restart the liar is
// still excluded and a liar, and the state is the same.
func TestTrustLiarPurgedAndSPRTRecomputed(t *testing.T) {
	te := newTrustEnv(t, 1) // every trusted batch replayed too
	id := te.Create(testkind.Kind, nodesSpec(0, true))
	m1, f1 := te.WorkerOf(mallory, "m1", 1e6), te.WorkerOf(farm, "f1", 1e6)

	// Batch 0, farm's: held; mallory replays it, agreeing: counted,
	// credited to mallory's worker.
	g0 := te.playAndReplay(farm, f1, mallory, m1, sprt.Win, sprt.Win, core.Accepted)
	// Batch 1, mallory's: held; farm replays it, agreeing: counted.
	te.playAndReplay(mallory, m1, farm, f1, sprt.Draw, sprt.Draw, core.Accepted)
	if bs := te.stored(id); len(bs) != 2 || bs[0].WorkerID != m1.ID {
		t.Fatalf("before the lie: %+v", bs)
	}
	// Batch 2, mallory's: farm's replay differs. Mallory lies.
	te.playAndReplay(mallory, m1, farm, f1, sprt.Win, sprt.Draw, core.Accepted)

	check := func(when string) {
		t.Helper()
		bs := te.stored(id)
		if len(bs) != 2 || bs[0].Idx != 1 || bs[1].Idx != 2 || bs[0].WorkerID != f1.ID || bs[1].WorkerID != f1.ID {
			t.Fatalf("%s: stored %+v, want farm's batches 1 and 2 only", when, bs)
		}
		row, err := testkind.LoadTest(context.Background(), te.St, id)
		if err != nil {
			t.Fatal(err)
		}
		var got sprt.Sequential
		if err := json.Unmarshal([]byte(row.SPRT), &got); err != nil {
			t.Fatal(err)
		}
		// The SPRT, recomputed: exactly a fresh one over the kept batches.
		want, err := sprt.NewSequential(got.Params, 1)
		if err != nil {
			t.Fatal(err)
		}
		var total sprt.Results
		var penta sprt.Pentanomial
		for _, b := range bs {
			gamepair.AddCounts(&total, &penta, b.Penta, b.Wins, b.Draws, b.Losses)
			if _, err := want.Update(total); err != nil {
				t.Fatal(err)
			}
		}
		mp := te.Job(id).GetMatchProgress()
		if got.LLR != want.LLR || mp.GetLlr() != want.LLR || mp.GetGames() != 4 || mp.GetDraws() != 4 {
			t.Fatalf("%s: stored LLR %v, shown %v (%d games, %d draws); recomputed without the liar %v", when, got.LLR, mp.GetLlr(),
				mp.GetGames(), mp.GetDraws(), want.LLR)
		}
		if l := te.trust.Level(mallory.Name); !l.Liar || l.Trusted || !strings.Contains(l.Reason, "differ") {
			t.Fatalf("%s: mallory %+v", when, l)
		}
		if n, _ := te.St.CountPGNs(context.Background(), id); n != 4 {
			t.Fatalf("%s: %d games stored, want the kept batches' 4", when, n)
		}
	}
	check("after the lie")
	te.Restart()
	check("after a restart")
	m1, f1 = te.WorkerOf(mallory, "m1", 1e6), te.WorkerOf(farm, "f1", 1e6)
	if g, ok := te.LeaseOf(mallory, m1); ok {
		t.Fatalf("the liar leased %s after a restart", g.Lease.UnitID)
	}
	te.afresh(farm, f1, g0) // the purged batch
}

// A newcomer's replay that contradicts a trusted identity's batch brands
// nobody: the batch is played afresh, and the newcomer stays a newcomer.
func TestTrustNewcomerReplayDropped(t *testing.T) {
	te := newTrustEnv(t, 1)
	id := te.Create(testkind.Kind, nodesSpec(4, false))
	m1, f1 := te.WorkerOf(mallory, "m1", 1e6), te.WorkerOf(farm, "f1", 1e6)
	g0 := te.playAndReplay(farm, f1, mallory, m1, sprt.Win, sprt.Draw, core.Discarded)
	if l := te.trust.Level(mallory.Name); l.Liar || l.Agreed != 0 {
		t.Fatalf("mallory after a contradicting replay: %+v", l)
	}
	if n := len(te.stored(id)); n != 0 {
		t.Fatalf("%d batches stored", n)
	}
	te.afresh(farm, f1, g0)
}

// Two trusted identities that disagree stop the test for an admin: it is
// cancelled with the reason (stored, so a restart keeps it stopped),
// nothing of the batch counts, and resumed it plays the batch afresh.
func TestTrustTwoTrustedDisagreePause(t *testing.T) {
	te := newTrustEnv(t, 1)
	id := te.Create(testkind.Kind, nodesSpec(4, false))
	f1, f2 := te.WorkerOf(farm, "f1", 1e6), te.WorkerOf(farm2, "f2", 1e6)
	g0 := te.playAndReplay(farm, f1, farm2, f2, sprt.Win, sprt.Draw, core.Discarded)
	paused := func(when string) {
		t.Helper()
		j := te.Job(id)
		if j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || !strings.Contains(j.GetError(), "paused") ||
			!strings.Contains(j.GetError(), "farm2") {
			t.Fatalf("%s: %v %q", when, j.GetState(), j.GetError())
		}
		if n := len(te.stored(id)); n != 0 {
			t.Fatalf("%s: %d batches stored", when, n)
		}
	}
	paused("after the mismatch")
	te.Restart()
	paused("after a restart")
	if err := te.WL.Resume(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	te.afresh(farm, te.WorkerOf(farm, "f1", 1e6), g0)
}

// What anonymous pages show (PublicSnapshot): while a batch is held the
// counts stand where they were when none was, even as other batches
// count, so a count that did not move singles out no held batch; once
// every held batch settles they catch up.
func TestTrustPublicSnapshotWaitsForHeldBatches(t *testing.T) {
	te := newTrustEnv(t, 0)
	id := te.Create(testkind.Kind, nodesSpec(8, false))
	m1, f1 := te.WorkerOf(mallory, "m1", 1e6), te.WorkerOf(farm, "f1", 1e6)
	shown := func() uint64 {
		t.Helper()
		j, ok := te.WL.PublicSnapshot(id)
		if !ok {
			t.Fatal("no public snapshot")
		}
		return j.GetMatchProgress().GetGames()
	}
	g0, _ := te.LeaseOf(farm, f1)
	te.MustSubmitOf(farm, f1, g0, result(sprt.Draw), core.Accepted)
	if n := shown(); n != 2 {
		t.Fatalf("nothing held: %d games shown, want 2", n)
	}
	g1, _ := te.LeaseOf(mallory, m1) // held until farm replays it
	te.MustSubmitOf(mallory, m1, g1, result(sprt.Draw), core.Accepted)
	replay := te.replayOf(farm, f1, g1)
	f2 := te.WorkerOf(farm, "f2", 1e6) // a fresh batch while f1 replays
	g2, _ := te.LeaseOf(farm, f2)
	te.MustSubmitOf(farm, f2, g2, result(sprt.Draw), core.Accepted)
	if live, n := te.Job(id).GetMatchProgress().GetGames(), shown(); live != 4 || n != 2 {
		t.Fatalf("a batch held: %d games counted, %d shown; want 4 and the 2 of before", live, n)
	}
	te.MustSubmitOf(farm, f1, replay, result(sprt.Draw), core.Accepted)
	if n := shown(); n != 6 {
		t.Fatalf("all settled: %d games shown, want 6", n)
	}
}

// Two trusted identities disagree and the test pauses; the admin declares
// which lied (the workers page's "found lying"): every batch it counted
// in the stopped test is purged and the state recomputed, in the store,
// before the resume; resumed, the test plays the purged batch afresh and
// the liar gets no batch of it, also after a restart.
func TestTrustDeclaredLiarPurgedFromPausedTest(t *testing.T) {
	te := newTrustEnv(t, 1) // every trusted batch replayed
	id := te.Create(testkind.Kind, nodesSpec(6, false))
	f1, f2 := te.WorkerOf(farm, "f1", 1e6), te.WorkerOf(farm2, "f2", 1e6)
	// Batch 0: farm plays, farm2 replays agreeing: counted, credited to
	// farm2's worker.
	g0 := te.playAndReplay(farm, f1, farm2, f2, sprt.Win, sprt.Win, core.Accepted)
	if bs := te.stored(id); len(bs) != 1 || bs[0].WorkerID != f2.ID {
		t.Fatalf("before the dispute: %+v", bs)
	}
	// Batch 1: farm2's replay contradicts farm: the test pauses.
	te.playAndReplay(farm, f1, farm2, f2, sprt.Win, sprt.Draw, core.Discarded)
	if j := te.Job(id); j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || !strings.Contains(j.GetError(), "paused") {
		t.Fatalf("after the dispute: %v %q", j.GetState(), j.GetError())
	}
	if err := te.trust.DeclareLiar(context.Background(), farm2.Name, "the admin checked its machine", time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := te.WL.DeclareLiar(context.Background(), farm2.Name, "the admin checked its machine"); len(got) != 1 || got[0] != id {
		t.Fatalf("purged %v, want [%s]", got, id)
	}
	check := func(when string) {
		t.Helper()
		if bs := te.stored(id); len(bs) != 0 {
			t.Fatalf("%s: stored %+v, want nothing of farm2", when, bs)
		}
		if n, _ := te.St.CountPGNs(context.Background(), id); n != 0 {
			t.Fatalf("%s: %d games stored", when, n)
		}
		if l := te.trust.Level(farm2.Name); !l.Liar || l.Trusted {
			t.Fatalf("%s: farm2 %+v", when, l)
		}
	}
	check("declared")
	if got := te.WL.DeclareLiar(context.Background(), farm2.Name, "again"); len(got) != 0 {
		t.Fatalf("a second verdict purged %v again", got)
	}
	te.Restart()
	check("after a restart")
	if err := te.WL.Resume(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if g := te.Job(id).GetMatchProgress().GetGames(); g != 0 {
		t.Fatalf("resumed: %d games counted, want 0", g)
	}
	f1, f2 = te.WorkerOf(farm, "f1", 1e6), te.WorkerOf(farm2, "f2", 1e6)
	if g, ok := te.LeaseOf(farm2, f2); ok {
		t.Fatalf("the declared liar leased %s", g.Lease.UnitID)
	}
	te.afresh(farm, f1, g0)
}
