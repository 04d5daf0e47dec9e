//go:build unix

package e2e

// A game counts only if its engines played it: at a fixed node count the
// embedded engine is deterministic, so another identity replaying a batch
// must produce the same moves. A real coordinator process on loopback,
// honest worker processes of their own identities, and a worker built to
// invent legal moves, connected with one worker credential over the real
// gRPC API.

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
	"github.com/arbiter-chess/arbiter/worker"
)

// inventor is the embedded engine, except that on every fifth ply it
// plays another legal move than the one its search chose: every game it
// plays is a legal game, with scores and an end its moves support, which
// no replay of the PGN alone can tell from an honest one.
type inventor struct{ match.Player }

func (p inventor) Think(ctx context.Context, req *match.ThinkRequest) (match.Reply, error) {
	rep, err := p.Player.Think(ctx, req)
	if err != nil || len(req.Moves)%5 != 2 {
		return rep, err
	}
	pos := engine.StartPosition()
	if req.StartFEN != "" {
		if pos, err = engine.ParseFEN(req.StartFEN); err != nil {
			return rep, err
		}
	}
	for _, u := range req.Moves {
		m, err := pos.ParseUCIMove(u)
		if err != nil {
			return rep, err
		}
		pos.MakeMove(m)
	}
	for _, m := range pos.LegalMoves() {
		if u := pos.UCIMove(m); u != rep.Move {
			rep.Move = u
			break
		}
	}
	return rep, nil
}

// startInventor runs, in this process, a real worker (worker.New) whose
// embedded engine is an inventor, connected to addr with worker
// credential tok; it returns the worker's name.
func startInventor(t *testing.T, addr, tok string) string {
	t.Helper()
	conn, err := clusterclient.Dial(addr, clusterclient.Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w, err := worker.New(worker.Config{Conn: conn, Name: "inventor", Threads: 2, HashMB: 16, BenchNPS: 1_000_000,
		Builtin: func(name string, options map[string]string) (match.Player, error) {
			p, err := builtin.New(name, options)
			if err != nil {
				return nil, err
			}
			return inventor{p}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "inventor"
}

// crossCheckMatch submits the fixed-node match both runs play: 12
// batches of one pair.
func crossCheckMatch(t *testing.T, addr string) string {
	return submitTest(t, addr, "match", "--each", "nodes=1000", "--games", "24", "--batch-pairs", "1")
}

// waitWorkers waits until n workers are registered.
func waitWorkers(t *testing.T, admin *grpc.ClientConn, n int) {
	t.Helper()
	ac := arbiterv1.NewAdminServiceClient(admin)
	for deadline := time.Now().Add(60 * time.Second); ; {
		r, err := ac.ListWorkers(ctxT(t, 10*time.Second), &arbiterv1.ListWorkersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetWorkers()) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers registered, want %d", len(r.GetWorkers()), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInventedMovesCaughtByReplay: with --replay-fraction 1, every batch
// of a fixed-node match counts only once a worker of another identity has
// played it again with the same moves. A worker whose worker invents
// legal moves, on a token an account minted (an identity with no trust
// earned), is caught at its first replayed batch (its games differ from a
// trusted identity's replay), excluded from the test, and the match's
// counts are exactly those of the honest control: the same match on a
// farm without the inventor, where every replay agrees. The same inventor
// on a credential the admin made is trusted: its disagreement with
// another trusted identity stops the test for the admin, counting neither
// side (TestInventorTrustedPausesTest).
func TestInventedMovesCaughtByReplay(t *testing.T) {
	run := func(withInventor bool) (dbCounts, *arbiterv1.Job, func(string) float64, string) {
		addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), filepath.Join(t.TempDir(), "data")
		coordinator(t, addr, data, "--http", httpAddr, "--lease-duration", "10s", "--replay-fraction", "1")
		admin := dial(t, addr, token)
		// The honest identities are live before the match starts: a batch
		// is checked only while another identity is there to replay it.
		startWorker(t, addr, "--name", "h1")
		startWorker(t, addr, "--name", "h2")
		waitWorkers(t, admin, 2)
		id := crossCheckMatch(t, addr)
		if withInventor {
			const password = "a-long-enough-password-41"
			addAccount(t, data, "ivan", password)
			startInventor(t, addr, mintWorkerToken(t, httpAddr, "ivan", password))
		}
		final := waitFor(t, admin, id, 6*time.Minute, "match done", done)
		return storeCounts(t, data, id), final, func(outcome string) float64 {
			return metric(t, httpAddr, `arbiter_batch_crosschecks_total{outcome="`+outcome+`"}`)
		}, data
	}

	// The control: two honest identities; every batch is replayed and
	// every replay agrees.
	honest, _, hm, _ := run(false)
	if honest.batches != 12 || honest.pairs != 12 || honest.pgns != 24 {
		t.Fatalf("honest control stored %+v, want 12 batches of one pair", honest)
	}
	if hm("agreed") != 12 || hm("mismatch") != 0 || hm("settled") != 0 {
		t.Fatalf("honest control: %v agreed, %v mismatches, %v settled; want every batch agreed", hm("agreed"), hm("mismatch"), hm("settled"))
	}
	t.Logf("honest control: %+v, %v batches held and agreed", honest, hm("held"))

	// The inventor plays with them from the start.
	got, final, m, data := run(true)
	if got != honest {
		t.Fatalf("with the inventor the store holds %+v; the honest control %+v: invented games were counted", got, honest)
	}
	if m("agreed")+m("settled") != 12 {
		t.Errorf("%v batches agreed and %v settled; want all 12 counted after a replay", m("agreed"), m("settled"))
	}
	if m("mismatch") == 0 {
		t.Fatalf("%v mismatches: the inventor was not caught", m("mismatch"))
	}
	caught := false
	for _, w := range final.GetMatchProgress().GetWorkers() {
		t.Logf("worker %s (%s): %d games, excluded %v: %s", w.GetWorkerId(), w.GetName(), w.GetGames(), w.GetExcluded(), w.GetReason())
		if w.GetName() == "inventor" {
			caught = w.GetExcluded() && strings.Contains(w.GetReason(), "differ")
			if n := incidents(t, data, w.GetWorkerId()); n == 0 {
				t.Error("no incident of the inventor's worker stored")
			}
			if w.GetGames() != 0 {
				t.Errorf("the inventor is credited %d games", w.GetGames())
			}
		} else if w.GetExcluded() {
			t.Errorf("honest worker %s excluded: %s", w.GetName(), w.GetReason())
		}
	}
	if !caught {
		t.Fatal("the inventor's worker is not excluded from the test with the reason")
	}
	t.Logf("with the inventor: %v held, %v agreed, %v mismatches, %v settled, %v dropped", m("held"), m("agreed"), m("mismatch"), m("settled"), m("dropped"))
}

// TestInventorTrustedPausesTest: an inventor on a credential the admin
// made is as trusted as the honest worker beside it, so their first
// disagreement stops the test for the admin (cancelled, with a reason
// naming both identities), with nothing of the disputed batch counted;
// the stop is stored (a coordinator killed and restarted keeps it) and
// the admin's resume runs the test again.
func TestInventorTrustedPausesTest(t *testing.T) {
	addr, data := proctest.FreeAddr(t), filepath.Join(t.TempDir(), "data")
	p := coordinator(t, addr, data, "--lease-duration", "10s", "--replay-fraction", "1")
	admin := dial(t, addr, token)
	startWorker(t, addr, "--name", "h1")
	waitWorkers(t, admin, 1)
	id := crossCheckMatch(t, addr)
	startInventor(t, addr, workerToken(t, addr))
	stopped := waitFor(t, admin, id, 4*time.Minute, "the test paused", func(j *arbiterv1.Job) bool {
		return j.GetState() == arbiterv1.JobState_JOB_STATE_CANCELLED
	})
	if !strings.Contains(stopped.GetError(), "paused") || !strings.Contains(stopped.GetError(), "trusted identities") {
		t.Fatalf("stopped with %q", stopped.GetError())
	}
	// Every stored batch was agreed by both, or counted unchecked before
	// the inventor came: none is the inventor's alone.
	for _, w := range stopped.GetMatchProgress().GetWorkers() {
		if w.GetName() == "inventor" && w.GetGames() != 0 {
			t.Fatalf("the inventor is credited %d games", w.GetGames())
		}
	}
	inventor := ownerOf(t, admin, "inventor")
	p.kill(t)
	httpAddr := proctest.FreeAddr(t)
	coordinator(t, addr, data, "--lease-duration", "10s", "--replay-fraction", "1", "--http", httpAddr)
	admin = dial(t, addr, token)
	if j := getJob(t, admin, id); j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || j.GetError() != stopped.GetError() {
		t.Fatalf("after a restart: %v %q", j.GetState(), j.GetError())
	}
	// The admin names the liar on the workers page: what it counted goes.
	web := signInWeb(t, httpAddr, url.Values{"token": {token}})
	web.post(t, "/workers/block", url.Values{"identity": {inventor}, "reason": {"invents moves"}, "liar": {"on"}}, http.StatusSeeOther)
	if page := web.get(t, "/workers"); !strings.Contains(page, "declared a liar by") {
		t.Errorf("the workers page does not show %s declared a liar:\n%s", inventor, lastLines(page, 40))
	}
	if _, err := arbiterv1.NewJobServiceClient(admin).ResumeJob(ctxT(t, 10*time.Second), &arbiterv1.ResumeJobRequest{JobId: id}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	j := getJob(t, admin, id)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("resumed: %v", j.GetState())
	}
	for _, w := range j.GetMatchProgress().GetWorkers() {
		if w.GetName() == "inventor" && w.GetGames() != 0 {
			t.Fatalf("after the verdict the inventor is credited %d games", w.GetGames())
		}
	}
	t.Logf("stopped: %s; declared %s a liar", stopped.GetError(), inventor)
}

// ownerOf is the identity that registered the worker named name.
func ownerOf(t *testing.T, admin *grpc.ClientConn, name string) string {
	t.Helper()
	ws, err := arbiterv1.NewAdminServiceClient(admin).ListWorkers(ctxT(t, 10*time.Second), &arbiterv1.ListWorkersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws.GetWorkers() {
		if w.GetName() == name {
			return w.GetOwner()
		}
	}
	t.Fatalf("no worker named %s", name)
	return ""
}
