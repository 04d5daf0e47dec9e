//go:build unix

package e2e

// Tablebase adjudication on the cluster: a real coordinator process with
// --syzygy, a worker credential held by a test that plays its leased
// batch for real (gamepairs.PlayBatchTables with the same tables) and then
// lies about one tablebase verdict, and a real worker process with
// --syzygy as the control.

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
	"github.com/arbiter-chess/arbiter/testing/tbtest"
	"github.com/arbiter-chess/arbiter/worker/gamepairs"
)

const tbBook = "../../cmd/arbiter/testdata/tb-endgames.epd"

// recount sets r's W/D/L (engine A's) and pentanomial from its outcomes
// (engine A is White in the first game of each pair).
func recount(r *arbiterv1.GamePairBatchResult) {
	r.Wins, r.Draws, r.Losses = 0, 0, 0
	r.Pentanomial = &arbiterv1.Pentanomial{}
	pair := 0
	for k, o := range r.GetGames() {
		var a int // A's half points
		switch o.GetResult() {
		case arbiterv1.GameResult_GAME_RESULT_WHITE_WINS:
			a = 2
		case arbiterv1.GameResult_GAME_RESULT_DRAW:
			a = 1
		}
		if k%2 == 1 {
			a = 2 - a
		}
		switch a {
		case 2:
			r.Wins++
		case 1:
			r.Draws++
		default:
			r.Losses++
		}
		pair += a
		if k%2 == 1 {
			p := r.Pentanomial
			*[]*uint64{&p.Ll, &p.Ld, &p.Dd, &p.Wd, &p.Ww}[pair] += 1
			pair = 0
		}
	}
}

// lieAboutTablebase turns the first decisive tablebase adjudication of r
// into the opposite win (PGN result, reason and outcome alike, counts
// recounted); false when r has none.
func lieAboutTablebase(r *arbiterv1.GamePairBatchResult) bool {
	for k, pgn := range r.GetPgns() {
		var from, to, fromWhy, toWhy string
		var res arbiterv1.GameResult
		switch {
		case strings.Contains(pgn, "{White wins by adjudication: SyzygyTB} 1-0"):
			from, to, fromWhy, toWhy, res = "1-0", "0-1", "White", "Black", arbiterv1.GameResult_GAME_RESULT_BLACK_WINS
		case strings.Contains(pgn, "{Black wins by adjudication: SyzygyTB} 0-1"):
			from, to, fromWhy, toWhy, res = "0-1", "1-0", "Black", "White", arbiterv1.GameResult_GAME_RESULT_WHITE_WINS
		default:
			continue
		}
		pgn = strings.Replace(pgn, `[Result "`+from+`"]`, `[Result "`+to+`"]`, 1)
		pgn = strings.Replace(pgn, "{"+fromWhy+" wins by adjudication: SyzygyTB} "+from, "{"+toWhy+" wins by adjudication: SyzygyTB} "+to, 1)
		r.Pgns[k] = pgn
		for _, o := range r.GetGames() {
			if o.GetGameIndex() == uint32(k) {
				o.Result = res
			}
		}
		recount(r)
		return true
	}
	return false
}

// TestTablebaseAdjudicationOnCluster: a test submitted with --tb-pieces 4
// is leased to a worker credential that declares Syzygy tables of 4
// pieces; it plays its batch for real with the tables, and its honest
// result (with tablebase adjudications) is accepted, but the same kind of
// batch with one verdict turned around is refused as INVALID_GAME by the
// coordinator's tables. A real worker process with --syzygy then finishes
// the test, its games adjudicated by the tables.
func TestTablebaseAdjudicationOnCluster(t *testing.T) {
	tbTables := tbtest.Dir(t)
	tables := tbtest.Open(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	// No replays: the hand-driven worker below leaves once it has lied and
	// played honestly, and a batch of the real worker drawn for a replay
	// while that identity still looked live would wait for it (replays
	// have their own tests: TestInventedMovesCaughtByReplay).
	coordinator(t, addr, data, "--syzygy", tbTables, "--replay-fraction", "0")
	args := append([]string{"submit", "match"}, clientArgs(addr)...)
	out, code := cli(t, append(args, "--engine", engDefault, "--engine", engWeak, "--openings", "file="+tbBook+",order=sequential",
		"--each", "nodes=2000", "--games", "12", "--batch-pairs", "2", "--tb-pieces", "4")...)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, out)
	}
	id := jobID(out)
	admin := dial(t, addr, token)

	mallory := arbiterv1.NewWorkerServiceClient(dial(t, addr, workerToken(t, addr)))
	reg, err := mallory.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: "mallory", Capabilities: &arbiterv1.WorkerCapabilities{
		Cores: 1, Capabilities: []string{capability.GamePair, capability.Builtin, capability.EngineLimits, capability.Syzygy(3), capability.Syzygy(4)}}})
	if err != nil {
		t.Fatal(err)
	}
	wid := reg.GetWorkerId()
	submit := func(l *arbiterv1.Lease, r *arbiterv1.GamePairBatchResult) error {
		_, err := mallory.Submit(ctxT(t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: wid, LeaseId: l.GetLeaseId(), UnitId: l.GetUnit().GetUnitId(),
			Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: r}})
		return err
	}
	lied, honest := false, false
	for tries := 0; tries < 6 && !(lied && honest); tries++ {
		l := leaseOf(t, mallory, wid, id)
		b := l.GetUnit().GetGamePairs()
		if b.GetAdjudication().GetTablebase().GetPieces() != 4 {
			t.Fatalf("the batch carries tablebase adjudication %v, want 4 pieces", b.GetAdjudication().GetTablebase())
		}
		r, err := gamepairs.PlayBatchTables(context.Background(), b, builtin.New, tables, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !lied && lieAboutTablebase(r) {
			err := submit(l, r)
			if status.Code(err) != codes.InvalidArgument || grpcerr.Reason(err) != apierr.ReasonInvalidGame || !strings.Contains(grpcerr.Message(err), "the tables say") {
				t.Fatalf("a batch with a turned-around tablebase verdict: %v; want InvalidArgument, %s, naming the tables' verdict", err, apierr.ReasonInvalidGame)
			}
			t.Logf("lying batch refused: %v", grpcerr.Message(err))
			lied = true
			continue
		}
		if !honest && strings.Contains(strings.Join(r.GetPgns(), ""), "by adjudication: SyzygyTB") {
			if err := submit(l, r); err != nil {
				t.Fatalf("the honest batch with tablebase adjudications was refused: %v", err)
			}
			honest = true
			continue
		}
		if err := submit(l, r); err != nil {
			t.Fatalf("an honest batch was refused: %v", err)
		}
	}
	if !lied || !honest {
		t.Fatalf("batches played: a decisive tablebase verdict to lie about %v, an honest one with tablebase adjudications %v", lied, honest)
	}

	// A worker without tables is not offered the test, and the test says
	// why; the control, a real worker with the tables, finishes it.
	startWorker(t, addr, "--name", "plain")
	j := waitFor(t, admin, id, time.Minute, "the test blocked for want of tables", func(j *arbiterv1.Job) bool {
		return strings.Contains(j.GetProgress().GetBlocked(), "Syzygy tables of 4 pieces")
	})
	t.Logf("blocked: %s", j.GetProgress().GetBlocked())
	startWorker(t, addr, "--name", "tb1", "--syzygy", tbTables)
	final := waitFor(t, admin, id, 2*time.Minute, "test done", done)
	if g := final.GetMatchProgress().GetGames(); g != 12 {
		t.Fatalf("the test ended with %d games, want 12", g)
	}
	if st := storeCounts(t, data, id); st.pgns != 12 {
		t.Fatalf("stored %+v, want 12 PGNs", st)
	}
}

// TestDatagenTablebaseOnFarm: a dataset submitted with --tb-pieces 4 from
// 5- and 6-piece endings waits, saying why, while only a worker without
// tables is there; a worker with --syzygy then plays it to the end (its
// shards, with tablebase ends, pass the coordinator's checks).
func TestDatagenTablebaseOnFarm(t *testing.T) {
	tbTables := tbtest.Dir(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	conn := dial(t, addr, token)
	id := submitDatagen(t, addr, "--positions", "40", "--each", "nodes=500", "--openings", "file="+tbBook,
		"--random-plies", "0-1", "--filters", "none", "--batch-games", "4", "--tb-pieces", "4")
	startWorker(t, addr, "--name", "plain")
	j := waitFor(t, conn, id, time.Minute, "the dataset blocked for want of tables", func(j *arbiterv1.Job) bool {
		return strings.Contains(j.GetProgress().GetBlocked(), "Syzygy tables of 4 pieces")
	})
	t.Logf("blocked: %s", j.GetProgress().GetBlocked())
	startWorker(t, addr, "--name", "tb1", "--syzygy", tbTables)
	waitDataset(t, conn, id, 3*time.Minute)
}
