//go:build unix

package e2e

// Chaos: a mixed perft and match run while the coordinator and the workers
// are SIGKILLed at seeded random moments and restarted. Nothing may be lost
// or counted twice.

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestChaos kills a process at a random moment every 0.5–2.5 s (seeded:
// ARBITER_CHAOS_SEED, default 2026), at least 20 times, while a perft 6
// job with verification and a 40-game match run, restarting whatever was
// killed. Afterwards the perft total and divide are exact, the match has
// exactly its games, and the store holds one run per unit and worker and
// one row per batch.
func TestChaos(t *testing.T) {
	seed := uint64(2026)
	if s, err := strconv.ParseUint(os.Getenv("ARBITER_CHAOS_SEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coord := coordinator(t, addr, data)
	conn := dial(t, addr, token)
	// Each worker keeps its credential across restarts (same identity,
	// same worker id on re-registration).
	tokens := []string{workerToken(t, addr), workerToken(t, addr)}
	startW := func(i int) *proc {
		return start(t, "worker", "worker", "--coordinator", addr, "--token", tokens[i], "--threads", "1", "--hash", "16",
			"--name", "chaos-"+strconv.Itoa(i), "--log-level", "info")
	}
	workers := []*proc{startW(0), startW(1)}

	perft := submit(t, conn, &arbiterv1.PerftSpec{Depth: 6, SplitPly: 3, VerifyFraction: 0.2})
	test := submitTest(t, addr, "match", "--each", "nodes=400", "--games", "40", "--batch-pairs", "2")

	kills := 0
	deadline := time.Now().Add(4 * time.Minute)
	finished := func() bool {
		p, m := getJobQuiet(conn, perft.GetJobId()), getJobQuiet(conn, test)
		return p != nil && m != nil && done(p) && done(m)
	}
	for kills < 20 || !finished() {
		if time.Now().After(deadline) {
			t.Fatalf("not finished after %d kills in 4 minutes", kills)
		}
		time.Sleep(time.Duration(500+rng.IntN(2000)) * time.Millisecond)
		if kills >= 20 {
			continue // enough chaos: let the run finish
		}
		switch victim := rng.IntN(3); victim {
		case 0:
			coord.kill(t)
			coord = coordinator(t, addr, data)
		default:
			i := victim - 1
			workers[i].kill(t)
			workers[i] = startW(i)
		}
		kills++
	}
	t.Logf("%d kills (seed %d)", kills, seed)

	want := localPerft(t, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6)
	checkDivide(t, getJob(t, conn, perft.GetJobId()), want)
	m := getJob(t, conn, test).GetMatchProgress()
	st := storeCounts(t, data, test)
	if m.GetGames() != 40 || st.pairs != 20 || st.pgns != 40 || st.batches != st.distinctIdx || st.batches != 10 {
		t.Fatalf("match after chaos: %d games; store %+v (want 20 pairs in 10 distinct batches, 40 PGNs)", m.GetGames(), st)
	}
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var dupRuns int
	db.QueryRow("SELECT COUNT(*) FROM (SELECT unit_id, worker_id FROM runs GROUP BY unit_id, worker_id HAVING COUNT(*) > 1) AS dup").Scan(&dupRuns)
	if dupRuns != 0 {
		t.Fatalf("%d units with two runs of one worker", dupRuns)
	}
}

// getJobQuiet returns a job, or nil while the coordinator is away.
func getJobQuiet(conn *grpc.ClientConn, id string) *arbiterv1.Job {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := arbiterv1.NewJobServiceClient(conn).GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		return nil
	}
	return resp.GetJob()
}
