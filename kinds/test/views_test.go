package test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

func codeOf(err error) apierr.Code {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

// The history's last point is the test's own state (the same LLR, Elo and
// games as its snapshot), it is built from the store the same as it was
// grown batch by batch, and it survives a restart.
func TestHistoryFollowsTheSPRT(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(sprtSpec(2))
	w := e.Worker("w", 0)
	ctx := context.Background()
	h, err := e.WL.History(ctx, id)
	if err != nil || len(h) != 1 || h[0] != (testview.HistoryPoint{}) {
		t.Fatalf("history of a new test: %v %v", h, err)
	}
	results := []*arbiterv1.GamePairBatchResult{
		pairsResult([2]sprt.Outcome{sprt.Win, sprt.Draw}, [2]sprt.Outcome{sprt.Draw, sprt.Draw}),
		pairsResult([2]sprt.Outcome{sprt.Loss, sprt.Draw}, [2]sprt.Outcome{sprt.Win, sprt.Win}),
		draws(2), wins(2),
		pairsResult([2]sprt.Outcome{sprt.Loss, sprt.Loss}, [2]sprt.Outcome{sprt.Win, sprt.Draw}),
	}
	for i, r := range results {
		e.MustSubmit(w, e.MustLease(w), r, core.Accepted)
		h, err := e.WL.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != i+2 {
			t.Fatalf("after %d batches: %d points", i+1, len(h))
		}
		mp := e.Job(id).GetMatchProgress()
		last := h[len(h)-1]
		if last.Games != int64(mp.GetGames()) || last.LLR != mp.GetLlr() || last.Elo != mp.GetElo() ||
			last.EloLow != mp.GetEloCiLow() || last.EloHigh != mp.GetEloCiHigh() {
			t.Fatalf("after %d batches: last point %+v, snapshot games %d LLR %v Elo %v [%v, %v]", i+1, last,
				mp.GetGames(), mp.GetLlr(), mp.GetElo(), mp.GetEloCiLow(), mp.GetEloCiHigh())
		}
		for k := 1; k < len(h); k++ {
			if h[k].Games != h[k-1].Games+4 {
				t.Fatalf("point %d: %d games after %d", k, h[k].Games, h[k-1].Games)
			}
		}
	}
	grown, _ := e.WL.History(ctx, id)
	e.Restart()
	built, err := e.WL.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(grown) {
		t.Fatalf("rebuilt %d points, grown %d", len(built), len(grown))
	}
	for i := range built {
		if built[i] != grown[i] {
			t.Fatalf("point %d: rebuilt %+v, grown %+v", i, built[i], grown[i])
		}
	}
	if _, err := e.WL.History(ctx, "nope"); codeOf(err) != apierr.NotFound {
		t.Fatalf("history of an unknown test: %v", err)
	}
}

// A long history is thinned evenly: bounded, in order of games, always
// ending at the latest batch, and the same whether grown or built at once.
func TestHistoryThinning(t *testing.T) {
	for _, n := range []int{1, 3, 2 * MaxHistoryPoints, 2*MaxHistoryPoints + 1, 5000} {
		grown := newHistory(0)
		for i := 1; i <= n; i++ {
			grown.add(testview.HistoryPoint{Games: int64(2 * i)})
		}
		built := newHistory(n)
		for i := 1; i <= n; i++ {
			built.add(testview.HistoryPoint{Games: int64(2 * i)})
		}
		for _, h := range []*history{grown, built} {
			l := h.list()
			if len(l) > 2*MaxHistoryPoints+2 || l[0].Games != 0 || l[len(l)-1].Games != int64(2*n) {
				t.Fatalf("%d batches: %d points from %d to %d", n, len(l), l[0].Games, l[len(l)-1].Games)
			}
			if n >= 4*MaxHistoryPoints && len(l) < MaxHistoryPoints {
				t.Fatalf("%d batches: only %d points", n, len(l))
			}
			step := l[1].Games - l[0].Games
			for i := 1; i < len(l)-1; i++ {
				if l[i].Games-l[i-1].Games != step {
					t.Fatalf("%d batches: uneven points at %d: %v", n, i, l[i-1:i+1])
				}
			}
		}
	}
}

// A test's priority and throughput change while it runs, through the core
// (its submitter or an admin), are stored and take effect at once.
func TestSetPriority(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(matchSpec(100, 1, 4))
	ctx := context.Background()
	mallory := identity.Identity{Name: "mallory", Role: identity.Client}
	if err := e.C.SetPriority(ctx, mallory, id, 5, 2); codeOf(err) != apierr.PermissionDenied {
		t.Fatalf("another client: %v", err)
	}
	if err := e.C.SetPriority(ctx, alice, id, 5, 2); codeOf(err) != apierr.PermissionDenied {
		t.Fatalf("a worker credential: %v", err)
	}
	for _, bad := range []struct {
		p int32
		s float64
	}{{1001, 1}, {-1001, 1}, {0, 0}, {0, -1}, {0, 2e6}} {
		if err := e.C.SetPriority(ctx, carol, id, bad.p, bad.s); codeOf(err) != apierr.InvalidArgument {
			t.Fatalf("priority %d share %v: %v", bad.p, bad.s, err)
		}
	}
	if err := e.C.SetPriority(ctx, carol, "nope", 1, 1); codeOf(err) != apierr.NotFound {
		t.Fatalf("unknown job: %v", err)
	}
	if err := e.C.SetPriority(ctx, carol, id, 7, 3.5); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		m := e.Job(id).GetMatch()
		if m.GetPriority() != 7 || m.GetThroughput() != 3.5 {
			t.Fatalf("%s: priority %d throughput %v", when, m.GetPriority(), m.GetThroughput())
		}
		cands := e.WL.Candidates(e.Worker("w", 0), nil)
		if len(cands) != 1 || cands[0].Priority != 7 || cands[0].Share != 3.5 {
			t.Fatalf("%s: candidates %+v", when, cands)
		}
	}
	check("at once")
	e.Restart()
	check("after a restart")
	if err := e.C.SetPriority(ctx, admin, id, -3, 1); err != nil {
		t.Fatalf("admin: %v", err)
	}
	if err := e.C.Cancel(ctx, carol, id, "test"); err != nil {
		t.Fatal(err)
	}
	if err := e.C.SetPriority(ctx, carol, id, 1, 1); codeOf(err) != apierr.FailedPrecondition {
		t.Fatalf("finished test: %v", err)
	}
}

// A worker's games and incidents of the last hour, over all tests, and the
// running tests it is excluded from; rebuilt from the store on a restart.
// Incidents are stored with their reasons, and single games are read back.
func TestWorkerActivityAndGames(t *testing.T) {
	e := newEnv(t, Config{Settings: gamepair.Settings{IncidentWindow: 4, IncidentMaxRate: 0.2}})
	id := e.create(matchSpec(100, 2, 4))
	w := e.Worker("w", 0)
	ctx := context.Background()
	r := withIncidents(draws(2), arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS, 2)
	r.Incidents[0].Detail = "flag fell at move 31"
	e.MustSubmit(w, e.MustLease(w), r, core.Accepted)
	check := func(when string, games, incidents int64, excluded bool) {
		a := e.WL.WorkerActivity()[w.ID]
		if a.Games != games || a.Incidents != incidents || (len(a.Excluded) == 1) != excluded || (excluded && a.Excluded[0] != id) {
			t.Fatalf("%s: activity %+v, want %d games, %d incidents, excluded %v", when, a, games, incidents, excluded)
		}
	}
	check("after a batch", 4, 2, true)
	evs, err := e.WL.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, ev := range evs {
		details = append(details, ev.Kind+": "+ev.Detail)
	}
	all := strings.Join(details, "\n")
	if !strings.Contains(all, "incident: game 0: time_loss (new): flag fell at move 31") || !strings.Contains(all, "excluded: ") {
		t.Fatalf("events:\n%s", all)
	}
	e.Clk.Advance(30 * time.Minute)
	e.Restart()
	check("after a restart", 4, 2, true)
	p, err := e.WL.PGN(ctx, id, 0, 3)
	if err != nil || p != gamepairtest.PGN {
		t.Fatalf("PGN 0/3: %q %v", p, err)
	}
	if _, err := e.WL.PGN(ctx, id, 0, 4); codeOf(err) != apierr.NotFound {
		t.Fatalf("PGN 0/4: %v", err)
	}
	if _, err := e.WL.PGN(ctx, id, -1, 0); codeOf(err) != apierr.InvalidArgument {
		t.Fatalf("PGN -1/0: %v", err)
	}
	bs, err := e.WL.Batches(ctx, id)
	if err != nil || len(bs) != 1 || bs[0].Pairs != 2 || bs[0].WorkerID != w.ID || bs[0].Draws != 4 {
		t.Fatalf("batches: %+v %v", bs, err)
	}
	e.Clk.Advance(31 * time.Minute)
	check("an hour later", 0, 0, true)
}

// core.List filters on what the workload describes from memory: state,
// kind, submitter, and whether a running test has started.
func TestDescribeAndList(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	done := e.create(matchSpec(2, 1, 4))
	started := e.create(matchSpec(100, 1, 4))
	pending := e.create(sprtSpec(1))
	w := e.Worker("w", 0)
	got := map[string]bool{}
	for !got[done] || !got[started] {
		g := e.MustLease(w)
		e.MustSubmit(w, g, draws(1), core.Accepted)
		got[g.Lease.JobID] = true
	}
	if err := e.C.Cancel(ctx, carol, pending, "test"); err != nil {
		t.Fatal(err)
	}
	pending = e.create(sprtSpec(1))
	states := map[string]string{}
	infos, more := e.C.List(0, 10, nil)
	for _, in := range infos {
		st := in.State
		if st == "running" && !in.Started {
			st = "pending"
		}
		states[in.ID] = st + "/" + in.Kind + "/" + in.Submitter
	}
	if more || len(infos) != 4 || infos[0].ID != pending || states[done] != "done/match/carol" || states[pending] != "pending/sprt/carol" {
		t.Fatalf("list: %v (more %v)", states, more)
	}
	if s := states[started]; s != "running/match/carol" {
		t.Fatalf("started test: %s", s)
	}
	page, more := e.C.List(1, 2, func(in core.JobInfo) bool { return in.Kind != "nope" })
	if len(page) != 2 || !more || page[0].ID != infos[1].ID {
		t.Fatalf("second page: %+v %v", page, more)
	}
	if d, ok := e.WL.Describe("nope"); ok {
		t.Fatalf("unknown test described: %+v", d)
	}
}

// PGNs streams a test's games in order; other ids are refused with the
// right reason, and the reader's error comes back as is.
func TestPGNs(t *testing.T) {
	var otherJob string
	e := newEnv(t, Config{JobExists: func(id string) bool { return id == otherJob }})
	id := e.create(matchSpec(8, 2, 4))
	a := e.Worker("a", 0)
	for i := 0; i < 2; i++ {
		r := draws(2)
		for k := range r.Pgns {
			r.Pgns[k] = "[Game \"" + string(rune('a'+4*i+k)) + "\"]\n"
		}
		e.MustSubmit(a, e.MustLease(a), r, core.Accepted)
	}
	var got []string
	if err := e.WL.PGNs(context.Background(), id, func(p string) error { got = append(got, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "[Game \"a\"]\n[Game \"b\"]\n[Game \"c\"]\n[Game \"d\"]\n[Game \"e\"]\n[Game \"f\"]\n[Game \"g\"]\n[Game \"h\"]\n" {
		t.Fatalf("PGNs: %q", got)
	}
	otherJob = "p123"
	none := func(string) error { return nil }
	if err := e.WL.PGNs(context.Background(), "nope", none); apierr.ReasonOf(err) != apierr.ReasonUnknownJob {
		t.Errorf("unknown id: %v", err)
	}
	if err := e.WL.PGNs(context.Background(), otherJob, none); apierr.ReasonOf(err) != apierr.ReasonBadInput || !strings.Contains(err.Error(), "not a match or SPRT test") {
		t.Errorf("a perft id: %v", err)
	}
	stop := errors.New("reader gone")
	if err := e.WL.PGNs(context.Background(), id, func(string) error { return stop }); err != stop {
		t.Errorf("reader error: %v", err)
	}
}
