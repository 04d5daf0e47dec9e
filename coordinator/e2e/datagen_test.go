//go:build unix

package e2e

// DATAGEN on the farm, end to end: datasets submitted and pulled with the
// binary's commands while workers and the coordinator are SIGKILLed, the
// pulled files checked against one another, against Stockfish (every FEN
// legal) and against the store; bad input refused with nothing stored; and
// forged shards refused from a worker that holds the batch's lease.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/engine"
	kdatagen "github.com/arbiter-chess/arbiter/kinds/datagen"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

const stockfishPath = "/usr/games/stockfish"

// TestDatagenKilled: a dataset of the embedded engine on a coordinator
// process and two worker processes; a worker is SIGKILLed mid-run and
// another joins, then the coordinator is SIGKILLed and restarted on the
// same data dir. The dataset that ends is whole and counted once
// (checkDataset).
func TestDatagenKilled(t *testing.T) {
	runKilledDataset(t, killedRun{positions: 3000, nodes: 1000, batchGames: 4, seed: 11, limit: 4 * time.Minute})
}

// TestDatagenFull is the full run, opt-in (ARBITER_DATAGEN_FULL=1;
// it takes hours on two cores): `arbiter up` with one worker in its
// process and one worker process (two workers) generates 200,000
// positions at nodes=5000 while the worker process and then `arbiter up`
// itself (the coordinator and its worker) are SIGKILLed and restarted.
// ARBITER_DATAGEN_POSITIONS and ARBITER_DATAGEN_NODES override the size,
// to try the run small.
func TestDatagenFull(t *testing.T) {
	if os.Getenv("ARBITER_DATAGEN_FULL") != "1" {
		t.Skip("the full run is opt-in: ARBITER_DATAGEN_FULL=1 (and go test -timeout 0)")
	}
	r := killedRun{positions: 200_000, nodes: 5000, batchGames: 8, seed: 1, up: true}
	if v, err := strconv.Atoi(os.Getenv("ARBITER_DATAGEN_POSITIONS")); err == nil && v > 0 {
		r.positions = v
	}
	if v, err := strconv.Atoi(os.Getenv("ARBITER_DATAGEN_NODES")); err == nil && v > 0 {
		r.nodes = v
	}
	// At least 10 positions a second at nodes=5000 (two cores shared with
	// other work gave 17 with the kills).
	r.limit = 5*time.Minute + time.Duration(r.positions/10*r.nodes/5000)*time.Second
	t.Logf("full run: %d positions at nodes=%d, time limit %v", r.positions, r.nodes, r.limit)
	runKilledDataset(t, r)
}

// killedRun is a dataset run through kills.
type killedRun struct {
	positions, nodes, batchGames int
	seed                         uint64
	limit                        time.Duration // for the whole run
	// up: the coordinator is `arbiter up --workers 1` (killing it kills a
	// worker too) beside one worker process; otherwise a coordinator
	// process and two worker processes.
	up bool
}

func runKilledDataset(t *testing.T, r killedRun) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	begin := time.Now()
	var coord *proc
	startCoord := func() {
		if !r.up {
			coord = coordinator(t, addr, data)
			return
		}
		coord = start(t, "up", "up", "--workers", "1", "--threads", "1", "--hash", "16", "--listen", addr, "--data", data,
			"--token", token, "--http", "", "--log-level", "info")
		coordinatorUp(t, addr)
	}
	startCoord()
	conn := dial(t, addr, token)
	w1 := startWorker(t, addr, "--name", "w1")
	if !r.up {
		startWorker(t, addr, "--name", "w2")
	}

	id := submitDatagen(t, addr, "--positions", fmt.Sprint(r.positions), "--each", fmt.Sprintf("nodes=%d", r.nodes),
		"--random-plies", "8-9", "--random-seed", fmt.Sprint(r.seed), "--batch-games", fmt.Sprint(r.batchGames))
	positions := func(j *arbiterv1.Job) uint64 { return kdatagen.DatagenOf(j).GetProgress().GetPositions() }
	at := func(frac float64) func(*arbiterv1.Job) bool {
		return func(j *arbiterv1.Job) bool { return positions(j) >= uint64(frac*float64(r.positions)) }
	}
	left := func() time.Duration { return max(r.limit-time.Since(begin), time.Second) }

	j := waitFor(t, conn, id, left(), "a quarter of the dataset", at(0.25))
	w1.kill(t)
	t.Logf("worker w1 killed at %d/%d positions (%v)", positions(j), r.positions, time.Since(begin).Round(time.Second))
	startWorker(t, addr, "--name", "w3")

	j = waitFor(t, conn, id, left(), "half of the dataset", at(0.5))
	coord.kill(t)
	t.Logf("coordinator killed at %d/%d positions (%v)", positions(j), r.positions, time.Since(begin).Round(time.Second))
	time.Sleep(1500 * time.Millisecond) // the workers see it gone; their leases would expire
	startCoord()

	waitDataset(t, conn, id, left())
	t.Logf("dataset done after %v", time.Since(begin).Round(time.Second))
	checkDataset(t, addr, data, id, r.positions, false)
}

// TestDatagenKeepDuplicates: with --keep-duplicates a position seen
// before stays in the dataset and is counted as a duplicate. One random
// ply from the start position gives 20 openings for the 15 or more games
// of 800 positions, so games start alike and duplicates are all but
// certain (the position after the opening ply alone repeats unless 15 of
// 20 openings are drawn without a repeat: a chance under 1 in 1000).
func TestDatagenKeepDuplicates(t *testing.T) {
	cl := localCluster(t, "", 2)
	const n = 800
	id := submitDatagen(t, cl.Addr(), "--positions", fmt.Sprint(n), "--each", "nodes=300", "--random-plies", "1",
		"--random-seed", "5", "--batch-games", "4", "--keep-duplicates")
	waitDataset(t, dial(t, cl.Addr(), token), id, 2*time.Minute)
	c := checkDataset(t, cl.Addr(), cl.Data(), id, n, true)
	if c.duplicates == 0 {
		t.Fatal("no duplicates in a dataset of 1 random ply: the test shows nothing")
	}
	t.Logf("%d of %d records repeat an earlier position", c.duplicates, n)
}

// TestDatagenBadInput: bad flags are refused by the client naming the
// flag (exit status 2), bad specs by the coordinator (INVALID_ARGUMENT),
// with nothing stored; an engine that is only found bad when a worker
// runs it ends its dataset failed with the reason, once every worker that
// could play it has refused it for the start timeout (the watch every
// kind shares).
func TestDatagenBadInput(t *testing.T) {
	bad, err := badEngineBinary(t)
	if err != nil {
		t.Fatal(err)
	}
	// The workers' operator allows the two bad engines by name.
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, Threads: 1, HashMB: 16, Builtin: builtin.New,
		Engines: []engineallow.Engine{{Name: "noscore", Cmd: bad, Args: []string{"-mode", "noscore", "-at", "3"}},
			{Name: "nolimit", Cmd: bad, Args: []string{"-mode", "manynodes", "-at", "3"}}},
		Server: localcluster.ServerConfig{Token: token, LeaseDuration: time.Second, UnitDuration: 100 * time.Millisecond,
			StartTimeout: 2 * time.Second, Logger: zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel))}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	addr := cl.Addr()
	conn := dial(t, addr, token)
	pull := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"submit", "datagen", "--format", "csv"}, `--format: format "csv": unknown (want text|bulletformat|viriformat|pgn)`},
		{[]string{"submit", "datagen", "--positions", "0"}, "--positions 0: must be > 0"},
		{[]string{"submit", "datagen", "--positions", "-1"}, "--positions -1: must be > 0"},
		{[]string{"submit", "datagen", "--each", ""}, "--each is required"},
		{[]string{"submit", "datagen", "--each", "option.Hash=8"}, `--each "option.Hash=8": nodes=N is required`},
		{[]string{"submit", "datagen", "--each", "tc=10+0.1"}, "datagen plays at fixed nodes only"},
		{[]string{"submit", "datagen", "--random-plies", "9-8"}, `--random-plies "9-8"`},
		{[]string{"submit", "datagen", "--engine", "name=dev,builtin,movetime=100"}, "--engine: movetime=: datagen plays at fixed nodes only"},
		{[]string{"submit", "datagen", "--batch-games", "-3"}, "--batch-games -3"},
		{[]string{"datagen", "pull", "dnosuchjob00", "--format", "csv", "--out", filepath.Join(pull, "x")}, `--format: format "csv": unknown`},
	} {
		args := append([]string{}, c.args...)
		if args[0] == "submit" {
			args = withDefaults(args)
		}
		out, code := cli(t, append(args, clientArgs(addr)...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("arbiter %s: exit %d, %q; want exit 2 and %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
	if entries, _ := os.ReadDir(pull); len(entries) != 0 {
		t.Errorf("a refused pull left %d files", len(entries))
	}

	// The same checks on the coordinator, for clients other than ours.
	good := func() *arbiterv1.DatagenSpec {
		s := kdatagen.Spec(datagen.DefaultSettings())
		s.Engine = &arbiterv1.EngineSpec{Name: "dev", Command: matchspec.Embedded, Protocol: "builtin"}
		s.Nodes, s.Positions, s.Seed = 1000, 100, 1
		return s
	}
	for _, c := range []struct {
		edit func(*arbiterv1.DatagenSpec)
		want string
	}{
		{func(s *arbiterv1.DatagenSpec) { s.Positions = 0 }, "positions"},
		{func(s *arbiterv1.DatagenSpec) { s.Nodes = 0 }, "nodes"},
		{func(s *arbiterv1.DatagenSpec) { s.RandomPliesMin, s.RandomPliesMax = 9, 8 }, "random-plies"},
		{func(s *arbiterv1.DatagenSpec) { s.Engine = nil }, "engine"},
		{func(s *arbiterv1.DatagenSpec) { s.Openings = []string{"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"} }, "openings"},
		{func(s *arbiterv1.DatagenSpec) { s.Adjudication.MaxMoves = 0 }, "max-moves"},
	} {
		spec := good()
		c.edit(spec)
		packed, err := anypb.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = arbiterv1.NewJobServiceClient(conn).SubmitJob(ctxT(t, 10*time.Second),
			&arbiterv1.SubmitJobRequest{Kind: kdatagen.Kind, Spec: packed})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(grpcerr.Message(err), c.want) {
			t.Errorf("SubmitJob %v: %v; want INVALID_ARGUMENT naming %q", spec, err, c.want)
		}
	}
	list, err := arbiterv1.NewJobServiceClient(conn).ListJobs(ctxT(t, 10*time.Second), &arbiterv1.ListJobsRequest{})
	if err != nil || len(list.GetJobs()) != 0 {
		t.Fatalf("after refused submits: %d jobs stored (%v), want none", len(list.GetJobs()), err)
	}
	if entries, _ := os.ReadDir(filepath.Join(cl.Data(), "datagen")); len(entries) != 0 {
		t.Errorf("after refused submits: %d files under DATA/datagen", len(entries))
	}

	// Engines found bad only when the workers run them: the dataset ends
	// failed at 0 positions with the worker's reason once every live
	// worker refused it for the start timeout; as for random plies that find no position (a
	// property of the opening, known only by drawing them).
	book := filepath.Join(t.TempDir(), "mate.epd")
	if err := os.WriteFile(book, []byte("8/8/8/8/8/4k3/1q6/K7 w - - 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Workers first: a dataset no worker can start fails after the start
	// timeout for that reason, none connected included.
	addWorkers(t, cl, 2)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		ws, err := arbiterv1.NewAdminServiceClient(conn).ListWorkers(ctxT(t, 10*time.Second), &arbiterv1.ListWorkersRequest{})
		if err == nil && len(ws.GetWorkers()) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workers did not register: %v", err)
		}
	}
	blocked := map[string]string{
		submitDatagen(t, addr, "--engine", "name=noscore,cmd=noscore", "--positions", "100",
			"--each", "nodes=1000", "--batch-games", "2"): `engine "noscore" reported no score at ply`,
		submitDatagen(t, addr, "--engine", "name=nolimit,cmd=nolimit", "--positions", "100",
			"--each", "nodes=1000", "--batch-games", "2"): `engine "nolimit" searched 1000000000 nodes at ply 11 with a limit of 1000: it ignores the node limit`,
	}
	// Random plies that find no playable position are found at submit
	// (the first batch's openings are drawn there), and nothing is stored.
	if out, code := cli(t, append([]string{"submit", "datagen", "--engine", "name=dev,builtin", "--positions", "100", "--each", "nodes=1000",
		"--openings", "file=" + book, "--random-plies", "1"}, clientArgs(addr)...)...); code != 2 ||
		!strings.Contains(out, "random-plies: 100 draws of 1-1 random plies from 8/8/8/8/8/4k3/1q6/K7 w - - 0 1 all ended the game") {
		t.Errorf("random plies with no playable position: exit %d: %s; want 2 naming random-plies", code, out)
	}
	for id, want := range blocked {
		var j *arbiterv1.Job
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			j = getJob(t, conn, id)
			if j.GetState() == arbiterv1.JobState_JOB_STATE_FAILED && strings.Contains(j.GetError(), want) {
				break
			}
			if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || time.Now().After(deadline) {
				t.Fatalf("%s: %v (%s), blocked %q; want failed with %q", id, j.GetState(), j.GetError(), j.GetProgress().GetBlocked(), want)
			}
		}
		if p := kdatagen.DatagenOf(j).GetProgress(); p.GetPositions() != 0 || p.GetShards() != 0 {
			t.Errorf("%s: %d positions in %d shards from an engine the workers refused", id, p.GetPositions(), p.GetShards())
		}
		out, code := cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
		var js struct {
			State string `json:"state"`
			Error string `json:"error"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.State != "failed" || !strings.Contains(js.Error, want) {
			t.Errorf("status %s --json: exit %d: %s; want failed with %q", id, code, out, want)
		}
	}
}

// waitDataset waits until a dataset is done; if it is not within limit,
// the failure shows where it stands (positions, shards, batches leased,
// blocked, each worker's share).
func waitDataset(t *testing.T, conn *grpc.ClientConn, id string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j := getJobQuiet(conn, id)
		if j != nil && done(j) {
			return
		}
		if s := j.GetState(); s == arbiterv1.JobState_JOB_STATE_FAILED || s == arbiterv1.JobState_JOB_STATE_CANCELLED {
			t.Fatalf("dataset %s ended %v: %s", id, s, j.GetError())
		}
		if time.Now().After(deadline) {
			p := kdatagen.DatagenOf(j).GetProgress()
			t.Fatalf("dataset %s not done after %v: %d positions, %d shards, %d batches leased, blocked %q, workers %v",
				id, limit, p.GetPositions(), p.GetShards(), p.GetBatchesLeased(), j.GetProgress().GetBlocked(), p.GetWorkers())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// withDefaults completes a `submit datagen` command with good values of
// the flags it does not give.
func withDefaults(args []string) []string {
	has := func(flag string) bool {
		for _, a := range args {
			if a == flag {
				return true
			}
		}
		return false
	}
	for _, d := range [][2]string{{"--engine", "name=dev,builtin"}, {"--positions", "100"}, {"--each", "nodes=1000"}} {
		if !has(d[0]) {
			args = append(args, d[0], d[1])
		}
	}
	return args
}

// TestDatagenForgedShard: a worker holding a batch's lease submits shards
// that are not that batch (bytes that are no shard, the games of another
// seed, the batch's games with one opening move changed): each is refused
// as malformed or implausible and nothing counts; the honest shard for the
// same lease is then accepted, once.
func TestDatagenForgedShard(t *testing.T) {
	cl := localCluster(t, "", 0)
	addr := cl.Addr()
	conn := dial(t, addr, token)
	id := submitDatagen(t, addr, "--positions", "40", "--each", "nodes=300", "--batch-games", "2", "--random-seed", "9")
	f := fakeWorkerWith(t, dial(t, addr, workerToken(t, addr)), "forger", capability.Datagen, capability.Builtin)
	l := f.lease()
	b := &arbiterv1.DatagenBatch{}
	if err := l.GetUnit().GetPlugin().UnmarshalTo(b); err != nil || b.GetJobId() != id {
		t.Fatalf("leased %v (%v), want a batch of %s", l.GetUnit(), err, id)
	}
	// The lease lasts 1s: keep it while the games are played.
	stop := f.keepLease(l)
	defer stop()

	settings := kdatagen.BatchSettings(b)
	play := func(seed uint64) []datagen.Game {
		newPlayer := func() (match.Player, error) { return builtin.New("dev", map[string]string{"Hash": "8"}) }
		games, err := datagen.PlayGames(context.Background(), newPlayer, settings, seed, int(b.GetGames()))
		if err != nil {
			t.Fatal(err)
		}
		return games
	}
	honest := play(b.GetSeed())
	other := play(b.GetSeed() + 1)
	altered := alterOpening(t, honest)

	for _, c := range []struct {
		what  string
		shard []byte
		want  string // in the message
	}{
		{"garbage bytes", []byte("these bytes are not a shard at all"), "shard"},
		{"another seed's games", encodeShard(t, other), "the seed's random ply"},
		{"an opening move changed", encodeShard(t, altered), "game 0"},
	} {
		_, err := f.submitShard(l, c.shard)
		reason := grpcerr.Reason(err)
		if status.Code(err) != codes.InvalidArgument || (reason != apierr.ReasonMalformedResult && reason != apierr.ReasonImplausibleResult) ||
			!strings.Contains(grpcerr.Message(err), c.want) {
			t.Errorf("%s: %v (reason %s); want INVALID_ARGUMENT, MALFORMED_RESULT or IMPLAUSIBLE_RESULT, naming %q", c.what, err, reason, c.want)
		} else {
			t.Logf("%s: refused, %s: %s", c.what, reason, grpcerr.Message(err))
		}
	}
	if p := kdatagen.DatagenOf(getJob(t, conn, id)).GetProgress(); p.GetShards() != 0 || p.GetPositions() != 0 {
		t.Fatalf("forged shards counted: %d shards, %d positions", p.GetShards(), p.GetPositions())
	}
	if got, err := f.submitShard(l, encodeShard(t, honest)); err != nil || got != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("the honest shard: %v, %v; want accepted", got, err)
	}
	if got, err := f.submitShard(l, encodeShard(t, honest)); err != nil || got == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("the honest shard again: %v, %v; want not accepted twice", got, err)
	}
	j := getJob(t, conn, id)
	p := kdatagen.DatagenOf(j).GetProgress()
	want := 0
	for _, g := range honest {
		want += datagen.Count(g, settings.Filters)
	}
	if p.GetShards() != 1 || p.GetPositions() != uint64(min(want, 40)) {
		t.Fatalf("after the honest shard: %d shards, %d positions; want 1, %d", p.GetShards(), p.GetPositions(), min(want, 40))
	}
	stop()
	refused := uint64(0)
	for _, w := range kdatagen.DatagenOf(getJob(t, conn, id)).GetProgress().GetWorkers() {
		if w.GetWorkerId() == f.id {
			refused = w.GetRefused()
		}
	}
	if refused != 3 {
		t.Errorf("the forger's refused shards: %d, want 3", refused)
	}
	// Real workers finish the dataset from where the forger left it.
	addWorkers(t, cl, 2)
	waitDataset(t, conn, id, 2*time.Minute)
	checkDataset(t, addr, cl.Data(), id, 40, false)
}

// alterOpening is games with one random opening ply of the first game
// replaced by another legal move (the moves after it are kept).
func alterOpening(t *testing.T, games []datagen.Game) []datagen.Game {
	t.Helper()
	out := append([]datagen.Game(nil), games...)
	g := out[0]
	g.Moves = append([]datagen.Move(nil), g.Moves...)
	pos, err := engine.ParseFEN(g.StartFEN)
	if err != nil {
		t.Fatal(err)
	}
	// The last random ply: a different move there keeps the earlier plies.
	last := 0
	for i, m := range g.Moves {
		if m.Random {
			last = i
		}
	}
	for i := 0; i < last; i++ {
		m, err := pos.ParseUCIMove(g.Moves[i].UCI)
		if err != nil {
			t.Fatal(err)
		}
		pos.MakeMove(m)
	}
	for _, m := range pos.LegalMoves() {
		if u := pos.UCIMove(m); u != g.Moves[last].UCI {
			g.Moves[last].UCI = u
			out[0] = g
			return out
		}
	}
	t.Fatal("no other legal move to play")
	return nil
}

func encodeShard(t *testing.T, games []datagen.Game) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := datagen.EncodeShard(&b, games); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// submitShard submits a shard for l.
func (f *fakeWorker) submitShard(l *arbiterv1.Lease, shard []byte) (arbiterv1.SubmitOutcome, error) {
	res, err := anypb.New(&arbiterv1.DatagenBatchResult{Shard: shard})
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := f.c.Submit(ctxT(f.t, 30*time.Second), &arbiterv1.SubmitRequest{WorkerId: f.id, LeaseId: l.GetLeaseId(),
		UnitId: l.GetUnit().GetUnitId(), Elapsed: durationpb.New(time.Second), Result: &arbiterv1.SubmitRequest_Plugin{Plugin: res}})
	return r.GetOutcome(), err
}

// keepLease heartbeats l until the returned function is called.
func (f *fakeWorker) keepLease(l *arbiterv1.Lease) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
			f.c.Heartbeat(hctx, &arbiterv1.HeartbeatRequest{WorkerId: f.id,
				Leases: []*arbiterv1.HeldLease{{LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId()}}})
			hcancel()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }
}

// submitDatagen submits a dataset of the embedded engine (unless --engine
// is given) with `arbiter submit datagen --json` and returns its id.
func submitDatagen(t *testing.T, addr string, extra ...string) string {
	t.Helper()
	args := append([]string{"submit", "datagen", "--json"}, clientArgs(addr)...)
	if !strings.Contains(strings.Join(extra, " "), "--engine") {
		args = append(args, "--engine", "name=dev,builtin")
	}
	out, code := cli(t, append(args, extra...)...)
	var j struct {
		ID   string `json:"job_id"`
		Kind string `json:"kind"`
	}
	js := out // after a net upload's line (stderr), when net=FILE
	if i := strings.Index(js, "{"); i > 0 {
		js = js[i:]
	}
	if code != 0 || json.Unmarshal([]byte(js), &j) != nil || j.ID == "" || j.Kind != "datagen" {
		t.Fatalf("submit datagen %s: exit %d: %s", strings.Join(extra, " "), code, out)
	}
	return j.ID
}

// datasetCounts is what checkDataset found in the files.
type datasetCounts struct {
	games, duplicates int
}

// datagenJSON is the part of `status --json` a dataset's checks read
// (docs/json.md).
type datagenJSON struct {
	State   string `json:"state"`
	Datagen struct {
		PositionsWanted  int     `json:"positions_wanted"`
		Positions        int     `json:"positions"`
		Games            int     `json:"games"`
		Shards           int     `json:"shards"`
		Duplicates       int     `json:"duplicates"`
		KeepDuplicates   bool    `json:"keep_duplicates"`
		WhiteWins        int     `json:"white_wins"`
		Draws            int     `json:"draws"`
		BlackWins        int     `json:"black_wins"`
		AverageGamePlies float64 `json:"average_game_plies"`
		DuplicateRate    float64 `json:"duplicate_rate"`
	} `json:"detail"`
}

// checkDataset pulls a finished dataset in the four formats with the CLI
// and checks: the text, bulletformat and viriformat files hold exactly n
// records, the same ones; every FEN is legal (Stockfish); every record is a position of a
// game of the PGN, in order, and carries that game's result; no position
// repeats unless keep; `status --json` counts what the files hold; and the
// store holds each batch once, their positions summing to n.
func checkDataset(t *testing.T, addr, data, id string, n int, keep bool) datasetCounts {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for _, format := range []string{"text", "bulletformat", "viriformat", "pgn"} {
		files[format] = filepath.Join(dir, "data."+format)
		out, code := cli(t, append([]string{"datagen", "pull", id, "--format", format, "--out", files[format]}, clientArgs(addr)...)...)
		if code != 0 || !strings.Contains(out, fmt.Sprintf(": %d records, ", n)) {
			t.Fatalf("pull --format %s: exit %d:\n%s", format, code, lastLines(out, 5))
		}
	}

	// text and bulletformat: n records, the same.
	text, err := os.ReadFile(files["text"])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	bin, err := os.ReadFile(files["bulletformat"])
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != n || len(bin) != n*datagen.BulletRecordSize {
		t.Fatalf("text holds %d records, bulletformat %d bytes; want %d records (%d bytes)", len(lines), len(bin), n, n*datagen.BulletRecordSize)
	}
	recs := make([]datagen.Record, n)
	fens := make([]string, n)
	for i, line := range lines {
		r, err := datagen.ParseText(line)
		if err != nil {
			t.Fatalf("text record %d %q: %v", i+1, line, err)
		}
		want, err := datagen.AppendBullet(nil, r)
		if err != nil {
			t.Fatalf("text record %d: %v", i+1, err)
		}
		if got := bin[i*datagen.BulletRecordSize : (i+1)*datagen.BulletRecordSize]; !bytes.Equal(got, want) {
			t.Fatalf("bulletformat record %d is not text record %d (%q):\n% x\nwant\n% x", i+1, i+1, line, got, want)
		}
		recs[i], fens[i] = r, strings.TrimSpace(strings.Split(line, "|")[0])
	}
	checkViriDataset(t, files["viriformat"], recs)
	checkLegal(t, fens)

	// Duplicates: none unless kept; kept ones are counted.
	dups := 0
	seen := map[[16]byte]int{}
	for i, fen := range fens {
		k := datagen.PositionKey(fen)
		if first, ok := seen[k]; ok {
			if !keep {
				t.Fatalf("record %d repeats the position of record %d: %s", i+1, first+1, fen)
			}
			dups++
			continue
		}
		seen[k] = i
	}

	// PGN: every record is a position of its game, in order, with the
	// game's result; every game holds at least one record.
	pgn, err := os.ReadFile(files["pgn"])
	if err != nil {
		t.Fatal(err)
	}
	games := parseDatagenPGN(t, string(pgn))
	gi, next := 0, 0
	used := make([]int, len(games))
	for i, r := range recs {
		found := false
		for ; gi < len(games); gi, next = gi+1, 0 {
			if k := indexFrom(games[gi].fens, fens[i], next); k >= 0 {
				next, found = k+1, true
				break
			}
		}
		if !found {
			t.Fatalf("text record %d (%s) is no later position of the PGN's games", i+1, lines[i])
		}
		if r.Result != games[gi].result {
			t.Fatalf("text record %d (%s) has result %s; its game (%d of the PGN) ended %s", i+1, lines[i], r.Result, gi+1, games[gi].result)
		}
		used[gi]++
	}
	var wdl [3]int
	plies := 0
	for i, g := range games {
		if used[i] == 0 {
			t.Fatalf("PGN game %d has none of the records", i+1)
		}
		wdl[g.result-datagen.WhiteWins]++
		plies += len(g.fens)
	}

	// status --json counts what the files hold.
	out, code := cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	var st datagenJSON
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json: exit %d: %s", code, out)
	}
	d := st.Datagen
	if st.State != "done" || d.Positions != n || d.PositionsWanted != n || d.KeepDuplicates != keep {
		t.Errorf("status: %s, %d of %d positions, keep_duplicates %v; want done, %d of %d, %v", st.State, d.Positions, d.PositionsWanted,
			d.KeepDuplicates, n, n, keep)
	}
	if d.Games != len(games) || [3]int{d.WhiteWins, d.Draws, d.BlackWins} != wdl {
		t.Errorf("status: %d games (%d-%d-%d); the files hold %d games (%d-%d-%d)", d.Games, d.WhiteWins, d.Draws, d.BlackWins,
			len(games), wdl[0], wdl[1], wdl[2])
	}
	if avg := float64(plies) / float64(len(games)); math.Abs(d.AverageGamePlies-avg) > 1e-9 {
		t.Errorf("status: %.3f plies a game on average; the PGN's games %.3f", d.AverageGamePlies, avg)
	}
	if keep {
		if d.Duplicates != dups {
			t.Errorf("status: %d duplicates; the file repeats %d positions", d.Duplicates, dups)
		}
		if rate := float64(dups) / float64(n); math.Abs(d.DuplicateRate-rate) > 1e-9 {
			t.Errorf("status: duplicate rate %.5f; the file's %.5f", d.DuplicateRate, rate)
		}
	}

	// The store: every batch once, its positions summing to n.
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, batches, seqs, sum int
	if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT batch), COUNT(DISTINCT seq), COALESCE(SUM(positions),0) FROM datagen_shards WHERE job_id=?",
		id).Scan(&rows, &batches, &seqs, &sum); err != nil {
		t.Fatal(err)
	}
	if rows != batches || rows != seqs || rows != d.Shards || sum != n {
		t.Errorf("store: %d shard rows, %d distinct batches, %d distinct seqs, %d positions; status %d shards; want one row a batch, %d positions",
			rows, batches, seqs, sum, d.Shards, n)
	}
	t.Logf("dataset %s: %d records, %d games (%d-%d-%d), %d shards, %d repeated positions", id, n, len(games), wdl[0], wdl[1], wdl[2], rows, dups)
	return datasetCounts{games: len(games), duplicates: dups}
}

func indexFrom(list []string, s string, from int) int {
	for i := from; i < len(list); i++ {
		if list[i] == s {
			return i
		}
	}
	return -1
}

// pgnGame is a game of a pulled PGN: its result and the FEN before each
// of its plies.
type pgnGame struct {
	result datagen.Result
	fens   []string
}

var (
	pgnComment  = regexp.MustCompile(`\{[^}]*\}`)
	pgnMoveNum  = regexp.MustCompile(`^\d+\.+$`)
	pgnTagValue = regexp.MustCompile(`^\[(\w+) "(.*)"\]$`)
)

// parseDatagenPGN reads the PGN `datagen pull` writes, replaying each
// game's moves (SAN) from its start position.
func parseDatagenPGN(t *testing.T, text string) []pgnGame {
	t.Helper()
	var games []pgnGame
	for _, chunk := range strings.Split(text, "[Event ")[1:] {
		tags := map[string]string{}
		var movetext strings.Builder
		for _, line := range strings.Split("[Event "+chunk, "\n") {
			if m := pgnTagValue.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				tags[m[1]] = m[2]
			} else {
				movetext.WriteString(line + " ")
			}
		}
		g := pgnGame{}
		switch tags["Result"] {
		case "1-0":
			g.result = datagen.WhiteWins
		case "0-1":
			g.result = datagen.BlackWins
		case "1/2-1/2":
			g.result = datagen.Draw
		default:
			t.Fatalf("PGN game %d: result %q", len(games)+1, tags["Result"])
		}
		pos := engine.StartPosition()
		if fen, ok := tags["FEN"]; ok {
			var err error
			if pos, err = engine.ParseFEN(fen); err != nil {
				t.Fatalf("PGN game %d: FEN: %v", len(games)+1, err)
			}
		}
		for _, tok := range strings.Fields(pgnComment.ReplaceAllString(movetext.String(), " ")) {
			if pgnMoveNum.MatchString(tok) || tok == tags["Result"] {
				continue
			}
			m, err := pos.ParseSAN(tok)
			if err != nil {
				t.Fatalf("PGN game %d, ply %d: %q: %v", len(games)+1, len(g.fens)+1, tok, err)
			}
			g.fens = append(g.fens, pos.FEN())
			pos.MakeMove(m)
		}
		if pc, err := strconv.Atoi(tags["PlyCount"]); err != nil || pc != len(g.fens) {
			t.Fatalf("PGN game %d: PlyCount %q, %d moves", len(games)+1, tags["PlyCount"], len(g.fens))
		}
		games = append(games, g)
	}
	return games
}

// checkLegal has Stockfish read every FEN (one process for all): it must
// print the same FEN back (`d`) and find legal moves (`go perft 1`).
func checkLegal(t *testing.T, fens []string) {
	t.Helper()
	if _, err := os.Stat(stockfishPath); err != nil {
		t.Logf("no %s: FENs not checked by Stockfish", stockfishPath)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sf := exec.CommandContext(ctx, stockfishPath)
	in, err := sf.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := sf.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sf.Start(); err != nil {
		t.Fatal(err)
	}
	// On a failure Stockfish is still writing: end it rather than wait.
	defer func() { sf.Process.Kill(); sf.Wait() }()
	go func() {
		w := bufio.NewWriter(in)
		fmt.Fprintln(w, "uci")
		for _, f := range fens {
			fmt.Fprintf(w, "position fen %s\nd\ngo perft 1\n", f)
		}
		fmt.Fprintln(w, "quit")
		w.Flush()
		in.Close()
	}()
	// `go perft` runs on Stockfish's search thread, so its count may come
	// after the next `d`: the FENs and the counts are matched in order,
	// each on its own.
	sc := bufio.NewScanner(outPipe)
	echoed, counted := 0, 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Fen: "):
			if echoed >= len(fens) {
				t.Fatalf("stockfish printed more positions than it was given: %s", line)
			}
			if got := strings.TrimPrefix(line, "Fen: "); got != fens[echoed] {
				t.Fatalf("record %d: stockfish reads %q as %q", echoed+1, fens[echoed], got)
			}
			echoed++
		case strings.HasPrefix(line, "Nodes searched: "):
			nodes, err := strconv.Atoi(strings.TrimPrefix(line, "Nodes searched: "))
			if err != nil || nodes == 0 || counted >= len(fens) {
				t.Fatalf("record %d (%s): stockfish: %q", counted+1, fens[min(counted, len(fens)-1)], line)
			}
			counted++
		}
	}
	io.Copy(io.Discard, outPipe)
	if echoed != len(fens) || counted != len(fens) {
		t.Fatalf("stockfish read %d and counted the moves of %d of %d positions (%v)", echoed, counted, len(fens), sc.Err())
	}
}

// badEngineBinary builds testing/testengines/badengine into the test's
// temporary directory.
func badEngineBinary(t *testing.T) (string, error) {
	path := filepath.Join(t.TempDir(), "badengine")
	out, err := exec.Command("go", "build", "-o", path, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building badengine: %v\n%s", err, out)
	}
	return path, nil
}

// TestDatagenLostLease: a worker's lease expires (its batch goes back to
// be served again) and the worker then delivers the shard, which counts.
// The batch must not be served again, and no batch may stay marked as
// leased: a batch left so would hold back the batches the dataset still
// needs, and near its end the dataset would never finish.
func TestDatagenLostLease(t *testing.T) {
	cl := localCluster(t, "", 0)
	addr := cl.Addr()
	conn := dial(t, addr, token)
	id := submitDatagen(t, addr, "--positions", "100000", "--each", "nodes=300", "--batch-games", "1", "--random-seed", "4")
	a := fakeWorkerWith(t, dial(t, addr, workerToken(t, addr)), "slow", capability.Datagen, capability.Builtin)
	la := a.lease()
	b := &arbiterv1.DatagenBatch{}
	if err := la.GetUnit().GetPlugin().UnmarshalTo(b); err != nil {
		t.Fatal(err)
	}
	newPlayer := func() (match.Player, error) { return builtin.New("dev", map[string]string{"Hash": "8"}) }
	games, err := datagen.PlayGames(context.Background(), newPlayer, kdatagen.BatchSettings(b), b.GetSeed(), int(b.GetGames()))
	if err != nil {
		t.Fatal(err)
	}
	shard := encodeShard(t, games)
	// a never heartbeats: its lease expires (1s), then its shard arrives.
	time.Sleep(2500 * time.Millisecond)
	if got, err := a.submitShard(la, shard); err != nil || got != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("the expired lease's shard: %v, %v; want accepted", got, err)
	}
	bw := fakeWorkerWith(t, dial(t, addr, workerToken(t, addr)), "fast", capability.Datagen, capability.Builtin)
	lb := bw.lease()
	if lb.GetUnit().GetUnitId() == la.GetUnit().GetUnitId() {
		// Served again: its copy must at least not stay leased.
		if got, err := bw.submitShard(lb, shard); err != nil || got == arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
			t.Fatalf("the same batch again: %v, %v; want not accepted", got, err)
		}
		p := kdatagen.DatagenOf(getJob(t, conn, id)).GetProgress()
		t.Fatalf("the stored batch %s was served again (then %d batches leased)", lb.GetUnit().GetUnitId(), p.GetBatchesLeased())
	}
	p := kdatagen.DatagenOf(getJob(t, conn, id)).GetProgress()
	if p.GetShards() != 1 || p.GetBatchesLeased() != 1 {
		t.Fatalf("%d shards, %d batches leased; want 1 shard and the new lease", p.GetShards(), p.GetBatchesLeased())
	}
}

// checkViriDataset: the viriformat file, read by the reader written from
// the format's definition, holds the text's records in order: FEN, score
// and result.
func checkViriDataset(t *testing.T, path string, recs []datagen.Record) {
	t.Helper()
	i, games := 0, 0
	err := datagen.ReadViriFile(path, func(g datagen.ViriGame) error {
		games++
		for _, p := range g.Positions {
			if i >= len(recs) || p.FEN != recs[i].FEN || p.Score != recs[i].Score || g.Result != recs[i].Result {
				return fmt.Errorf("position %d (game at byte offset %d): %+v %s is not text record %d", i, g.Offset, p, g.Result, i+1)
			}
			i++
		}
		return nil
	})
	if err != nil || i != len(recs) {
		t.Fatalf("viriformat: %v after %d of %d records", err, i, len(recs))
	}
	fi, _ := os.Stat(path)
	t.Logf("viriformat: %d records in %d games, %d bytes, %.2f bytes a record", i, games, fi.Size(), float64(fi.Size())/float64(i))
}
