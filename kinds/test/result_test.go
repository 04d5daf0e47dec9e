package test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// An SPRT fed a strong result accepts H1 and the test ends: the core ends
// its leases (the other worker is told to stop) and a late result is
// discarded.
func TestSPRTDecidesH1(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(sprtSpec(4))
	a, b := e.Worker("a", 0), e.Worker("b", 0)
	held := e.MustLease(b)
	batches := 0
	for e.Job(id).GetState() == arbiterv1.JobState_JOB_STATE_RUNNING {
		if batches++; batches > 50 {
			t.Fatal("no decision after 50 winning batches")
		}
		e.MustSubmit(a, e.MustLease(a), wins(4), core.Accepted)
	}
	j := e.Job(id)
	mp := j.GetMatchProgress()
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE || mp.GetSprtState() != string(sprt.Accepted) || mp.GetLlr() < mp.GetUpperBound()-1 {
		t.Fatalf("after %d batches: state %v, sprt %q, LLR %v of %v", batches, j.GetState(), mp.GetSprtState(), mp.GetLlr(), mp.GetUpperBound())
	}
	if mp.GetGames() != uint64(8*batches) || mp.GetPentanomial().GetWw() != uint64(4*batches) || mp.GetBatchesLeased() != 0 {
		t.Fatalf("counts after %d batches: %v", batches, mp)
	}
	hs, err := e.C.Heartbeat(context.Background(), alice, b.ID, []core.Held{{LeaseID: held.Lease.ID, UnitID: held.Lease.UnitID}})
	if err != nil || hs[0].State != core.HeldCancelled {
		t.Fatalf("heartbeat of a lease of a decided test: %+v %v", hs, err)
	}
	e.MustSubmit(b, held, wins(4), core.Discarded)
	if n, _ := e.storedBatches(id); n != batches {
		t.Fatalf("%d batches stored, %d accepted", n, batches)
	}
	if g, ok := e.Lease(a); ok {
		t.Fatalf("a lease of a decided test: %s", g.Lease.UnitID)
	}
	jobs, _ := e.St.Jobs(context.Background())
	if len(jobs) != 1 || jobs[0].State != store.StateDone {
		t.Fatalf("stored job: %+v", jobs[0])
	}
}

// A batch counts once: the same result again is a duplicate, and so is a
// second worker's result for a batch a late result already counted.
func TestDuplicateNotAdded(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(matchSpec(20, 2, 4))
	a, b := e.Worker("a", 0), e.Worker("b", 0)
	g := e.MustLease(a)
	e.MustSubmit(a, g, draws(2), core.Accepted)
	e.MustSubmit(a, g, wins(2), core.Duplicate)

	// a's lease on batch 1 expires, b gets the batch, then a's late result
	// arrives: it counts, b is told to stop, and b's result is a duplicate.
	late := e.MustLease(a)
	e.ExpireAll()
	again := e.MustLease(b)
	if again.Lease.UnitID != late.Lease.UnitID {
		t.Fatalf("lost batch %s not re-issued (got %s)", late.Lease.UnitID, again.Lease.UnitID)
	}
	e.MustSubmit(a, late, draws(2), core.Accepted)
	hs, _ := e.C.Heartbeat(context.Background(), alice, b.ID, []core.Held{{LeaseID: again.Lease.ID, UnitID: again.Lease.UnitID}})
	if hs[0].State != core.HeldCancelled {
		t.Fatalf("the second player of a counted batch: %v", hs[0].State)
	}
	e.MustSubmit(b, again, wins(2), core.Duplicate)
	mp := e.Job(id).GetMatchProgress()
	if mp.GetGames() != 8 || mp.GetDraws() != 8 || mp.GetBatchesDone() != 2 || mp.GetPgns() != 8 {
		t.Fatalf("after 2 batches and 2 duplicates: %v", mp)
	}
	if n, p := e.storedBatches(id); n != 2 || p != 8 {
		t.Fatalf("stored %d batches, %d games", n, p)
	}
}

// Every shape rule refuses a result, which changes nothing; the good one
// is then accepted.
func TestMalformedResults(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(matchSpec(20, 2, 4))
	a := e.Worker("a", 0)
	g := e.MustLease(a)
	big := strings.Repeat("x", MaxPGNBytes)
	type mutation = func(r *arbiterv1.GamePairBatchResult) any
	cases := []struct {
		want   string // in the refusal: the rule that refused it
		mutate mutation
	}{
		{"not a game-pair result", func(r *arbiterv1.GamePairBatchResult) any { return &arbiterv1.PerftBatchResult{Counts: []uint64{1}} }},
		{"pentanomial missing", func(r *arbiterv1.GamePairBatchResult) any { r.Pentanomial = nil; return r }},
		{"the pentanomial counts 3", func(r *arbiterv1.GamePairBatchResult) any { r.Pentanomial.Dd++; return r }},
		{"pentanomial count out of range", func(r *arbiterv1.GamePairBatchResult) any { r.Pentanomial.Ll = 1 << 62; return r }},
		{"W/D/L out of range", func(r *arbiterv1.GamePairBatchResult) any { r.Wins = 1 << 62; return r }},
		{"W/D/L count 5", func(r *arbiterv1.GamePairBatchResult) any { r.Draws++; return r }},
		{"cannot come from pentanomial", func(r *arbiterv1.GamePairBatchResult) any { r.Draws, r.Wins, r.Losses = 0, 3, 1; return r }},
		{"the result has 3 PGNs", func(r *arbiterv1.GamePairBatchResult) any { r.Pgns = r.Pgns[:3]; return r }},
		{"PGN 1 is not a PGN game", func(r *arbiterv1.GamePairBatchResult) any { r.Pgns[1] = "1. e4 *"; return r }},
		{"PGN 2 is 1048577 bytes", func(r *arbiterv1.GamePairBatchResult) any { r.Pgns[2] = "[" + big; return r }},
		{"incident 4 names game 4", func(r *arbiterv1.GamePairBatchResult) any {
			return withIncidents(r, arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, 5)
		}},
		{"300 incidents for 4 games", func(r *arbiterv1.GamePairBatchResult) any {
			for len(r.Incidents) < 300 {
				withIncidents(r, arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, 4)
			}
			return r
		}},
		{"the result has 0 game outcomes", func(r *arbiterv1.GamePairBatchResult) any { r.Games = nil; return r }},
		{"the result has 3 game outcomes", func(r *arbiterv1.GamePairBatchResult) any { r.Games = r.Games[:3]; return r }},
		{"names game 2 (each of 0..3 once)", func(r *arbiterv1.GamePairBatchResult) any { r.Games[3].GameIndex = 2; return r }},
		{"names game 4", func(r *arbiterv1.GamePairBatchResult) any { r.Games[3].GameIndex = 4; return r }},
		{"is not a game result", func(r *arbiterv1.GamePairBatchResult) any { r.Games[0].Result = 0; return r }},
		{"is not a game termination", func(r *arbiterv1.GamePairBatchResult) any { r.Games[0].Termination = 0; return r }},
		{"99 is not a game termination", func(r *arbiterv1.GamePairBatchResult) any { r.Games[0].Termination = 99; return r }},
		{"result draw cannot come from termination checkmate", func(r *arbiterv1.GamePairBatchResult) any {
			r.Games[1].Termination = arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE
			return r
		}},
		{"pair 0 has an unfinished game", func(r *arbiterv1.GamePairBatchResult) any {
			r.Games[1].Result, r.Games[1].Termination = arbiterv1.GameResult_GAME_RESULT_NONE, arbiterv1.GameTermination_GAME_TERMINATION_ABANDONED
			return r
		}},
		{"the game outcomes give W/D/L", func(r *arbiterv1.GamePairBatchResult) any {
			r.Games[0].Result, r.Games[0].Termination = arbiterv1.GameResult_GAME_RESULT_BLACK_WINS, arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE
			return r
		}},
		{"the game outcomes give pentanomial", func(r *arbiterv1.GamePairBatchResult) any {
			// W/D/L 1/2/1 either way: the pairs reported are (W,L) and
			// (D,D), the games say (W,D) and (D,L).
			good := pairsResult([2]sprt.Outcome{sprt.Win, sprt.Loss}, [2]sprt.Outcome{sprt.Draw, sprt.Draw})
			good.Games = pairsResult([2]sprt.Outcome{sprt.Win, sprt.Draw}, [2]sprt.Outcome{sprt.Draw, sprt.Loss}).Games
			return good
		}},
	}
	for _, c := range cases {
		_, err := e.Submit(a, g, c.mutate(draws(2)))
		if reason := apierr.ReasonOf(err); reason != apierr.ReasonMalformedResult || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (reason %q)", c.want, err, reason)
		} else if len(err.Error()) > 400 {
			t.Errorf("%s: a %d-byte error", c.want, len(err.Error()))
		}
	}
	if n, p := e.storedBatches(id); n != 0 || p != 0 || e.Job(id).GetMatchProgress().GetGames() != 0 {
		t.Fatalf("refused results counted: %d batches, %d games", n, p)
	}
	// The PGNs of one result together: 16 games of just under 1 MiB pass
	// 12 MiB.
	big8 := e.create(matchSpec(16, 8, 4))
	var g8 core.Grant
	for g8.Lease.JobID != big8 {
		g8 = e.MustLease(a)
	}
	r8 := draws(8)
	for i := range r8.Pgns {
		r8.Pgns[i] = "[" + big[1:]
	}
	if _, err := e.Submit(a, g8, r8); apierr.ReasonOf(err) != apierr.ReasonTooLarge {
		t.Errorf("16 MiB of PGNs: %v", err)
	}
	e.MustSubmit(a, g, pairsResult([2]sprt.Outcome{sprt.Win, sprt.Loss}, [2]sprt.Outcome{sprt.Loss, sprt.Draw}), core.Accepted)
	if n, p := e.storedBatches(id); n != 1 || p != 4 {
		t.Fatalf("the good result: %d batches, %d games", n, p)
	}
}

// A made-up batch index costs O(1) and is refused or ignored; a signed lease
// adopted far ahead does not make anything loop up to it; a forged stored
// batch is skipped at load and reported, and everything else resumes.
func TestForgedHugeIndex(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(sprtSpec(2)) // no cap: testview.MaxPairs/2 batches
	a := e.Worker("a", 0)
	huge := id + ".17179869184"
	start := time.Now()
	if got, ok := e.WL.Locate(huge); !ok || got != id {
		t.Fatalf("Locate(%s) = %q %v", huge, got, ok)
	}
	if ad := e.WL.Adopt(core.Lease{ID: "l", UnitID: huge, JobID: id, WorkerID: a.ID}, a); ad != core.AdoptCancelled {
		t.Fatalf("adopting batch 17179869184: %v", ad)
	}
	_, err := e.WL.Result(context.Background(), core.ResultCall{Lease: core.Lease{UnitID: huge, JobID: id}, Worker: a, Result: draws(2)})
	if apierr.ReasonOf(err) != apierr.ReasonUnknownUnit {
		t.Fatalf("result for batch 17179869184: %v", err)
	}
	// A made-up lease through the core: refused without reaching the
	// workload.
	hs, err := e.C.Heartbeat(context.Background(), alice, a.ID, []core.Held{{LeaseID: "l1-0-forged", UnitID: huge}})
	if err != nil || hs[0].State != core.HeldLost {
		t.Fatalf("made-up heartbeat: %+v %v", hs, err)
	}
	// The last batch of the test, adopted (as after a restart): next stays
	// where it is and batch 0 is the next lease.
	last := unitID(id, testview.MaxPairs/2-1)
	if ad := e.WL.Adopt(core.Lease{ID: "l", UnitID: last, JobID: id, WorkerID: a.ID}, a); ad != core.AdoptActive {
		t.Fatalf("adopting the last batch: %v", ad)
	}
	if _, err := e.WL.Result(context.Background(), core.ResultCall{Lease: core.Lease{UnitID: last, JobID: id}, Worker: a, Result: draws(2)}); err != nil {
		t.Fatal(err)
	}
	if g := e.MustLease(a); g.Lease.UnitID != unitID(id, 0) {
		t.Fatalf("after a far adoption the next lease is %s", g.Lease.UnitID)
	}
	e.WL.Mu.Lock()
	tt := e.WL.Jobs[id]
	if stored, reopened, next := tt.Batches.Position(); reopened != 0 || next != 1 || stored != 1 {
		t.Errorf("after a far adoption: %d re-opened batches, next %d, %d counted", reopened, next, stored)
	}
	e.WL.Mu.Unlock()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("forged indexes took %v", d)
	}

	// Forged rows in the store: an index past the test's batches, and a
	// batch whose counts do not add up.
	ctx := context.Background()
	for _, b := range []Batch{
		{UnitID: huge, JobID: id, Idx: 17179869184, WorkerID: a.ID, Pairs: 2, Penta: [5]int64{0, 0, 2, 0, 0}, Draws: 4},
		{UnitID: unitID(id, 5), JobID: id, Idx: 5, WorkerID: a.ID, Pairs: 2, Penta: [5]int64{0, 0, 0, 0, 2}, Draws: 4},
	} {
		if err := CommitBatch(ctx, e.St, &b, nil, "", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	other := e.create(matchSpec(4, 2, 4))
	before := e.Job(id).GetMatchProgress()
	start = time.Now()
	e.Restart()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("restart with forged batches took %v", d)
	}
	probs := e.WL.LoadProblems()
	if len(probs) != 2 || probs[0].Kind != "batch" || probs[0].ID != huge || probs[1].ID != unitID(id, 5) {
		t.Fatalf("load problems: %v", probs)
	}
	after := e.Job(id).GetMatchProgress()
	if after.GetGames() != before.GetGames() || after.GetBatchesDone() != 1 || before.GetBatchesDone() != 1 {
		t.Fatalf("forged batches counted: before %v, after %v", before, after)
	}
	if e.Job(other).GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatal("the other test did not resume")
	}
	// Batch 5's row still holds its unit id: it is not leased again (its
	// result would fail on the primary key), and a result for it is not
	// added.
	for i := 0; i < 8; i++ {
		if g := e.MustLease(a); g.Lease.UnitID == unitID(id, 5) {
			t.Fatalf("the skipped batch %s was leased", g.Lease.UnitID)
		}
	}
	out, err := e.WL.Result(ctx, core.ResultCall{Lease: core.Lease{UnitID: unitID(id, 5), JobID: id}, Worker: a, Result: draws(2)})
	if err != nil || out.Verdict != core.Duplicate {
		t.Fatalf("a result for the skipped batch: %v %v", out.Verdict, err)
	}
}
