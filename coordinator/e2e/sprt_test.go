//go:build unix

package e2e

// Match and SPRT tests through the cluster: a coordinator and workers on
// loopback (real processes where they are killed), a real SQLite store,
// the CLI as the client, the embedded engine in two
// configurations (default against weakened piece values) at fixed nodes so
// that games are fast and the SPRT decides within a few hundred games.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
	"github.com/arbiter-chess/arbiter/worker/gamepairs"
)

const book = "../../books/uho-200.epd"

var (
	engDefault = "name=default,builtin"
	// The hand-written evaluation with pieces worth little more than
	// pawns: about 270 Elo below the net at 400 nodes (the lighter
	// weakening of pieces alone is level with it there), so SPRTs decide
	// in tens of games.
	engWeak = "name=weak,builtin,option.UseNNUE=false,option.PawnValueMG=200,option.PawnValueEG=250,option.KnightValueMG=150,option.KnightValueEG=150," +
		"option.BishopValueMG=150,option.BishopValueEG=150,option.RookValueMG=250,option.RookValueEG=250,option.QueenValueMG=600,option.QueenValueEG=600"
)

// cli runs the binary to completion and returns its output and exit code.
func cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	// A command that never ends (a --wait on a job that cannot finish) must
	// fail the test with what it printed, not hold the suite to its timeout.
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("arbiter %s: still running after %v, killed; it printed:\n%s", strings.Join(args, " "), cliTimeout, out.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

// cliTimeout bounds one CLI command of these tests.
const cliTimeout = 10 * time.Minute

func clientArgs(addr string) []string { return []string{"--coordinator", addr, "--token", token} }

// submitTest submits with the CLI (no --wait) and returns the test id.
func submitTest(t *testing.T, addr, kind string, extra ...string) string {
	t.Helper()
	args := append([]string{"submit", kind}, clientArgs(addr)...)
	args = append(args, "--engine", engDefault, "--engine", engWeak, "--openings", "file="+book+",order=random,seed=5")
	args = append(args, extra...)
	out, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("submit %s: exit %d: %s", kind, code, out)
	}
	return jobID(out)
}

// jobID is the id a submit without --wait prints: its one line on stdout,
// which cli's combined output ends with (a note on stderr, such as
// matchplan's RepeatNote, may come before it).
func jobID(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

type dbCounts struct {
	batches, pairs, wins, draws, losses, pgns int64
	penta                                     [5]int64
	distinctIdx                               int64
}

// storeCounts reads what the store holds for a test (the coordinator may be
// dead: the file is read directly).
func storeCounts(t *testing.T, data, id string) dbCounts {
	t.Helper()
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var c dbCounts
	if err := db.QueryRow(`SELECT COUNT(*), COALESCE(SUM(pairs),0), COALESCE(SUM(wins),0), COALESCE(SUM(draws),0), COALESCE(SUM(losses),0),
		COUNT(DISTINCT idx) FROM batches WHERE job_id=?`, id).Scan(&c.batches, &c.pairs, &c.wins, &c.draws, &c.losses, &c.distinctIdx); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT penta FROM batches WHERE job_id=?", id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		for i, f := range strings.Split(s, ",") {
			var v int64
			for _, ch := range f {
				v = v*10 + int64(ch-'0')
			}
			c.penta[i] += v
		}
	}
	rows.Close()
	if err := db.QueryRow("SELECT COUNT(*) FROM pgns WHERE job_id=?", id).Scan(&c.pgns); err != nil {
		t.Fatal(err)
	}
	return c
}

func progressCounts(j *arbiterv1.Job) dbCounts {
	mp := j.GetMatchProgress()
	p := mp.GetPentanomial()
	return dbCounts{batches: int64(mp.GetBatchesDone()), pairs: int64(mp.GetGames() / 2), wins: int64(mp.GetWins()),
		draws: int64(mp.GetDraws()), losses: int64(mp.GetLosses()), pgns: int64(mp.GetPgns()), distinctIdx: int64(mp.GetBatchesDone()),
		penta: [5]int64{int64(p.GetLl()), int64(p.GetLd()), int64(p.GetDd()), int64(p.GetWd()), int64(p.GetWw())}}
}

func countPGN(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "[Event ")
}

// An SPRT between the default engine and a weakened one runs to a decision
// through the cluster; every game is stored and downloads complete.
func TestClusterSPRTDecides(t *testing.T) {
	start0 := time.Now()
	// Worker processes: run in the test process, with the coordinator on
	// the same GOMAXPROCS threads, their games delayed heartbeats past
	// their deadline on a busy machine.
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	startWorker(t, addr, "--name", "w1")
	startWorker(t, addr, "--name", "w2")
	args := append([]string{"submit", "sprt"}, clientArgs(addr)...)
	args = append(args, "--engine", engDefault, "--engine", engWeak, "--each", "nodes=2000",
		"--openings", "file="+book+",order=random,seed=5", "--sprt", "elo0=0,elo1=40,model=logistic", "--batch-pairs", "4", "--wait")
	out, code := cli(t, args...)
	if code != 0 || !strings.Contains(out, "H1 accepted") {
		t.Fatalf("submit sprt --wait: exit %d:\n%s", code, out)
	}
	i := strings.Index(out, "Test:")
	id := strings.Fields(out[i:])[1]
	t.Logf("SPRT decided in %v:\n%s", time.Since(start0).Round(time.Millisecond), out[i:])

	conn := dial(t, addr, token)
	j := getJob(t, conn, id)
	if !done(j) || j.GetMatchProgress().GetSprtState() != "accepted" {
		t.Fatalf("job %v, sprt %q", j.GetState(), j.GetMatchProgress().GetSprtState())
	}
	got, st := progressCounts(j), storeCounts(t, data, id)
	if got.pairs != st.pairs || got.wins != st.wins || got.draws != st.draws || got.losses != st.losses || got.penta != st.penta {
		t.Fatalf("reported %+v, store holds %+v", got, st)
	}
	if st.pgns != 2*st.pairs || st.distinctIdx != st.batches {
		t.Fatalf("store: %d PGNs for %d pairs; %d batches, %d distinct", st.pgns, st.pairs, st.batches, st.distinctIdx)
	}
	pgn := filepath.Join(t.TempDir(), "games.pgn")
	if out, code := cli(t, append([]string{"pgn", id, "-o", pgn}, clientArgs(addr)...)...); code != 0 {
		t.Fatalf("pgn: %d %s", code, out)
	}
	if n := countPGN(t, pgn); n != int(2*st.pairs) {
		t.Fatalf("downloaded %d games, played %d", n, 2*st.pairs)
	}
	out, code = cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	if code != 0 || !strings.Contains(out, "LLR:") || !strings.Contains(out, "Ptnml(0-2)") || !strings.Contains(out, "w1") {
		t.Fatalf("status: %d\n%s", code, out)
	}
}

// A worker SIGKILLed mid-batch loses no pair and adds none twice; a
// coordinator SIGKILLed and restarted resumes the test with the same counts.
func TestClusterMatchSurvivesKills(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co := coordinator(t, addr, data)
	w1 := startWorker(t, addr, "--name", "victim")
	w2 := startWorker(t, addr, "--name", "w2")
	const games = 48
	id := submitTest(t, addr, "match", "--each", "nodes=3000", "--games", "48", "--batch-pairs", "2")
	conn := dial(t, addr, token)
	waitFor(t, conn, id, 60*time.Second, "3 batches", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetBatchesDone() >= 3 })
	w1.kill(t) // mid-batch: both workers always hold one
	waitFor(t, conn, id, 60*time.Second, "3 more batches", func(j *arbiterv1.Job) bool {
		return j.GetMatchProgress().GetBatchesDone() >= 6
	})
	// Kill the other worker (mid-batch too) and then the coordinator, so
	// that nothing changes between the kill and the restart.
	w2.kill(t)
	co.kill(t)
	atKill := storeCounts(t, data, id)
	coordinator(t, addr, data)
	conn = dial(t, addr, token)
	resumed := progressCounts(getJob(t, conn, id))
	if resumed != atKill {
		t.Fatalf("resumed with %+v; the store held %+v at the kill", resumed, atKill)
	}
	t.Logf("killed the coordinator at %d pairs (%d batches); resumed with identical counts", atKill.pairs, atKill.batches)
	startWorker(t, addr, "--name", "w4")
	startWorker(t, addr, "--name", "w3")
	j := waitFor(t, conn, id, 90*time.Second, "done", done)
	st := storeCounts(t, data, id)
	got := progressCounts(j)
	if st.pairs != games/2 || got.pairs != games/2 || st.batches != games/4 || st.distinctIdx != st.batches {
		t.Fatalf("pairs store %d reported %d (want %d); batches %d distinct %d", st.pairs, got.pairs, games/2, st.batches, st.distinctIdx)
	}
	if got.penta != st.penta || got.wins != st.wins || got.draws != st.draws || got.losses != st.losses {
		t.Fatalf("reported %+v, store %+v", got, st)
	}
	var sum int64
	for _, v := range st.penta {
		sum += v
	}
	if sum != games/2 || st.wins+st.draws+st.losses != games || st.pgns != games {
		t.Fatalf("pentanomial %v (%d pairs), W/D/L %d/%d/%d, %d PGNs", st.penta, sum, st.wins, st.draws, st.losses, st.pgns)
	}
	pgn := filepath.Join(t.TempDir(), "g.pgn")
	if out, code := cli(t, append([]string{"pgn", id, "-o", pgn}, clientArgs(addr)...)...); code != 0 || countPGN(t, pgn) != games {
		t.Fatalf("pgn: exit %d, %d games: %s", code, countPGN(t, pgn), out)
	}
}

// Two tests share the workers by priority: every batch of the
// higher-priority test is leased before any batch of the other.
func TestClusterTestsByPriority(t *testing.T) {
	cl := localCluster(t, "", 0)
	addr, data := cl.Addr(), cl.Data()
	low := submitTest(t, addr, "match", "--each", "nodes=1000", "--games", "8", "--batch-pairs", "1", "--priority", "0")
	high := submitTest(t, addr, "match", "--each", "nodes=1000", "--games", "8", "--batch-pairs", "1", "--priority", "5")
	addWorkers(t, cl, 1)
	conn := dial(t, addr, token)
	waitFor(t, conn, high, 60*time.Second, "high done", done)
	waitFor(t, conn, low, 60*time.Second, "low done", done)
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var highLast, lowFirst int64
	db.QueryRow("SELECT MAX(leased_at) FROM batches WHERE job_id=?", high).Scan(&highLast)
	db.QueryRow("SELECT MIN(leased_at) FROM batches WHERE job_id=?", low).Scan(&lowFirst)
	if highLast == 0 || lowFirst == 0 || highLast > lowFirst {
		t.Fatalf("high-priority batches leased until %d, low-priority from %d", highLast, lowFirst)
	}
}

// Bad input: refused with a clear error and nothing stored; an engine
// missing on the worker is refused by the worker and the test is not given
// to it; malformed batch results are refused and not counted.
func TestClusterTestBadInput(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	// No batch is drawn for a replay: the good result below must count at
	// once (a drawn one waits for another identity; the replay has tests
	// of its own, crosscheck_test.go).
	coordinator(t, addr, data, "--replay-fraction", "0")
	base := append([]string{"submit", "sprt"}, clientArgs(addr)...)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "name=a,builtin,option.NoSuchOption=3", "--engine", engWeak, "--each", "nodes=1000", "--openings", "file=" + book, "--sprt", "elo0=0,elo1=5"}, "unknown option"},
		{[]string{"--engine", "name=a,builtin,option.RFPMargin=9999", "--engine", engWeak, "--each", "nodes=1000", "--openings", "file=" + book, "--sprt", "elo0=0,elo1=5"}, "out of range"},
		{[]string{"--engine", engDefault, "--engine", engWeak, "--each", "tc=0.01", "--openings", "file=" + book, "--sprt", "elo0=0,elo1=5"}, "cannot be played"},
		{[]string{"--engine", engDefault, "--engine", engWeak, "--each", "nodes=1000", "--openings", "file=/nonexistent.epd", "--sprt", "elo0=0,elo1=5"}, "nonexistent.epd"},
		{[]string{"--engine", engDefault, "--engine", engWeak, "--each", "nodes=1000", "--openings", "file=" + book, "--sprt", "elo0=5,elo1=0"}, "elo0"},
		{[]string{"--engine", engDefault, "--engine", engWeak, "--each", "nodes=1000", "--openings", "file=" + book, "--sprt", "elo0=-2000,elo1=-1500"}, "beyond ±200 normalized Elo"},
		{[]string{"--engine", engDefault, "--engine", engWeak, "--each", "nodes=1000", "--openings", "file=" + book}, "--sprt"},
	}
	for _, c := range cases {
		out, code := cli(t, append(base, c.args...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q in:\n%s", c.args, code, c.want, out)
		}
	}
	// The coordinator's own checks (a client that skips the CLI's).
	conn := dial(t, addr, token)
	jobs := arbiterv1.NewJobServiceClient(conn)
	_, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Options: map[string]string{"Bogus": "1"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{MoveTime: durationpb.New(time.Millisecond)}},
		Openings:    []*arbiterv1.Opening{{Fen: "not a fen"}}, Games: 2,
	}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Bogus") {
		t.Errorf("bad spec: %v", err)
	}
	// Bounds the normalized model cannot reach: before, accepted here and
	// every batch's result refused afterwards ("does not straddle zero").
	_, err = jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded"},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}},
		Sprt:        &arbiterv1.SprtParams{Elo0: -2000, Elo1: -1500, Alpha: 0.05, Beta: 0.05, Model: "normalized"},
	}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "beyond ±200 normalized Elo") {
		t.Errorf("normalized bounds -2000/-1500: %v", err)
	}
	if st := storeTests(t, data); st != 0 {
		t.Fatalf("%d tests stored after refusals", st)
	}

	// An engine missing on the worker: the worker refuses, the test is not
	// given to it again, and nothing is counted.
	missing := submitTestEngines(t, addr, "name=ghost,cmd=/nonexistent/engine", engDefault, "--each", "nodes=1000", "--games", "4")
	nobin := startWorker(t, addr, "--name", "nobin", "--engine-allow", "/nonexistent/engine")
	j := waitFor(t, conn, missing, 30*time.Second, "worker refusal", func(j *arbiterv1.Job) bool {
		for _, w := range j.GetMatchProgress().GetWorkers() {
			if w.GetExcluded() && strings.Contains(w.GetReason(), "not present or not executable") {
				return true
			}
		}
		return false
	})
	if j.GetMatchProgress().GetGames() != 0 {
		t.Fatalf("games counted for a test no worker can run: %d", j.GetMatchProgress().GetGames())
	}
	if _, err := jobs.CancelJob(ctxT(t, 10*time.Second), &arbiterv1.CancelJobRequest{JobId: missing}); err != nil {
		t.Fatal(err)
	}

	// Malformed results from a (fake) worker: refused, nothing counted.
	nobin.kill(t) // the fake worker must get the batch
	id := submitTest(t, addr, "match", "--each", "nodes=1000", "--games", "8", "--batch-pairs", "2")
	ws := arbiterv1.NewWorkerServiceClient(conn)
	reg, err := ws.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: "fake", Capabilities: &arbiterv1.WorkerCapabilities{
		Cores: 1, Capabilities: []string{"game-pair"}}})
	if err != nil {
		t.Fatal(err)
	}
	wid := reg.GetWorkerId()
	var l *arbiterv1.Lease
	for deadline := time.Now().Add(30 * time.Second); l == nil; {
		if time.Now().After(deadline) {
			t.Fatal("no lease for the fake worker")
		}
		resp, err := ws.Lease(ctxT(t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: wid, Wait: durationpb.New(2 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetLease().GetUnit().GetJobId() == id {
			l = resp.GetLease()
		}
	}
	pg := "[Event \"x\"]\n\n1. e4 *\n\n"
	bad := []*arbiterv1.GamePairBatchResult{
		{Pentanomial: &arbiterv1.Pentanomial{Dd: 3}, Draws: 6, Pgns: []string{pg, pg, pg, pg, pg, pg}}, // 3 pairs in a 2-pair batch
		{Pentanomial: &arbiterv1.Pentanomial{Dd: 2}, Wins: 4, Pgns: []string{pg, pg, pg, pg}},          // W/D/L does not fit
		{Pentanomial: &arbiterv1.Pentanomial{Dd: 2}, Draws: 4, Pgns: []string{pg, pg, pg}},             // 3 PGNs for 4 games
		{Pentanomial: &arbiterv1.Pentanomial{Ww: 1, Ll: 1}, Wins: 2, Losses: 2, Pgns: []string{pg, pg, pg, pg}, // incident out of range
			Incidents: []*arbiterv1.Incident{{Kind: arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, GameIndex: 9}}},
	}
	for i, r := range bad {
		_, err := ws.Submit(ctxT(t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: wid, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
			Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: r}})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("malformed result %d: %v", i, err)
		}
	}
	if j := getJob(t, conn, id); j.GetMatchProgress().GetGames() != 0 || storeCounts(t, data, id).batches != 0 {
		t.Fatalf("malformed results counted: %d games", j.GetMatchProgress().GetGames())
	}
	// A good result (the batch played here, as a worker plays it) counts
	// once; the same again is a duplicate.
	good, err := gamepairs.PlayBatch(ctxT(t, time.Minute), l.GetUnit().GetGamePairs(), builtin.New)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []arbiterv1.SubmitOutcome{arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED, arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE} {
		resp, err := ws.Submit(ctxT(t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: wid, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
			Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: good}})
		if err != nil || resp.GetOutcome() != want {
			t.Fatalf("submit %d: %v %v", i, resp.GetOutcome(), err)
		}
	}
	if st := storeCounts(t, data, id); st.pairs != 2 || st.pgns != 4 {
		t.Fatalf("after a result and its duplicate: %+v", st)
	}
}

func submitTestEngines(t *testing.T, addr, a, b string, extra ...string) string {
	t.Helper()
	args := append([]string{"submit", "match"}, clientArgs(addr)...)
	args = append(args, "--engine", a, "--engine", b, "--openings", "file="+book)
	out, code := cli(t, append(args, extra...)...)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, out)
	}
	return jobID(out)
}

func storeTests(t *testing.T, data string) int {
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.QueryRow("SELECT COUNT(*) FROM tests").Scan(&n)
	return n
}
