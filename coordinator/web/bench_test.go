package web

// BenchmarkPages renders each page from a coordinator whose store holds
// 1,000 tests (one of them finished after 10,000 games), 500 workers, a
// finished SPSA tune of 20 parameters (2,000 updates by every worker), a
// perft job and a reported verify session, and reports the time per page
// (ns/op; the budget is 50 ms a page). The store is written directly, so
// that building it takes seconds, and the coordinator then loads it as it
// would after a restart.
//
//	go test -run '^$' -bench Pages -benchtime 20x ./coordinator/web/

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

const (
	benchTests     = 1000
	benchBigGames  = 10_000
	benchWorkers   = 500
	benchBigPairs  = 4 // pairs per batch of the big test
	benchRunning   = 20
	benchPositions = 50 // reported verify positions
	benchParams    = 20 // parameters of the tune
	benchUpdates   = 2000
)

// benchPGN is one game of about 80 plies with engine comments, as workers
// write them.
func benchPGN(rng *rand.Rand) string {
	pos := engine.StartPosition()
	var b strings.Builder
	b.WriteString("[Event \"bench\"]\n[Site \"?\"]\n[Date \"2026.01.01\"]\n[Round \"1\"]\n[White \"new\"]\n[Black \"base\"]\n[Result \"*\"]\n\n")
	for ply := 0; ply < 80; ply++ {
		moves := pos.LegalMoves()
		if len(moves) == 0 {
			break
		}
		m := moves[rng.IntN(len(moves))]
		if ply%2 == 0 {
			fmt.Fprintf(&b, "%d. ", ply/2+1)
		}
		fmt.Fprintf(&b, "%s {%+.2f/%d %.3fs} ", pos.SAN(m), rng.Float64()*2-1, 8+rng.IntN(6), rng.Float64())
		pos.MakeMove(m)
	}
	b.WriteString("*\n")
	return b.String()
}

type benchFixture struct {
	cl                     *cluster
	big, perft, sess, tune string
}

// parallel runs n writes on 32 goroutines (the store commits waiting
// writes together).
func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// outcomes is a consistent batch of pairs: pentanomial, W/D/L.
func outcomes(rng *rand.Rand, pairs int) (p [5]int64, w, d, l int64) {
	for k := 0; k < pairs; k++ {
		score := 0
		for g := 0; g < 2; g++ {
			switch r := rng.IntN(10); {
			case r < 4:
				w++
				score += 2
			case r < 8:
				d++
				score++
			default:
				l++
			}
		}
		p[score]++
	}
	return p, w, d, l
}

func buildFixture(b *testing.B) (*benchFixture, error) {
	dir := b.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	start := time.Now()
	workerIDs := make([]string, benchWorkers)
	for i := range workerIDs {
		workerIDs[i] = fmt.Sprintf("w-%012x", i)
	}
	if err := parallel(benchWorkers, func(i int) error {
		caps, _ := json.Marshal(core.Caps{Cores: uint32(1 + i%16), HashMB: 256, EngineVersion: "arbiter-engine bench", Hostname: fmt.Sprintf("host%d", i),
			Tags: []string{"perft", "game-pair"}, BenchNPS: uint64(1_500_000 + i*1000), BenchSig: 123456789, Platform: "linux/amd64"})
		return st.PutWorker(ctx, store.Worker{ID: workerIDs[i], Name: fmt.Sprintf("node-%d", i), Owner: fmt.Sprintf("farm-%d", i%20),
			Capabilities: string(caps), RegisteredAt: now.Add(-time.Hour)})
	}); err != nil {
		return nil, err
	}
	spec := testSpec(b, 2000, 0, true)
	specBytes, _ := proto.Marshal(spec)
	finishedSpec := proto.Clone(spec).(*arbiterv1.MatchSpec)
	finishedSpec.Openings = nil
	finishedBytes, _ := proto.Marshal(finishedSpec)
	params := sprt.Params{Elo0: 0, Elo1: 40, Alpha: 0.05, Beta: 0.05, Model: sprt.Logistic}
	seq, _ := sprt.NewSequential(params, 2)
	seqJSON, _ := json.Marshal(seq)
	ids := make([]string, benchTests)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%011x", i)
	}
	// Tests are numbered in submission order (seq), so create them one
	// group at a time in order.
	for i := 0; i < benchTests; i++ {
		state, sp := store.StateDone, finishedBytes
		if i >= benchTests-benchRunning {
			state, sp = store.StateRunning, specBytes
		}
		j := &store.Job{ID: ids[i], Kind: "sprt", State: state, CreatedAt: now.Add(-time.Duration(benchTests-i) * time.Minute),
			RootMoves: []string{}, Submitter: fmt.Sprintf("user%d", i%7), Throughput: 1}
		if state == store.StateDone {
			j.FinishedAt = j.CreatedAt.Add(30 * time.Second)
		}
		pairs := 2
		if i == 0 {
			pairs = benchBigPairs // the big test
		}
		if err := CreateBenchTest(ctx, st, j, sp, pairs, string(seqJSON)); err != nil {
			return nil, err
		}
	}
	pgn := benchPGN(rng)
	big := ids[0]
	bigBatches := benchBigGames / (2 * benchBigPairs)
	type batch struct {
		b    BenchBatch
		pgns []string
	}
	var small []batch
	for i := 1; i < benchTests; i++ {
		p, w, d, l := outcomes(rng, 2)
		small = append(small, batch{b: BenchBatch{UnitID: ids[i] + ".0", JobID: ids[i], Idx: 0, WorkerID: workerIDs[i%benchWorkers], Pairs: 2,
			Penta: p, Wins: w, Draws: d, Losses: l, At: now.Add(-time.Duration(i) * time.Minute)}, pgns: []string{pgn, pgn, pgn, pgn}})
	}
	if err := parallel(len(small), func(i int) error {
		return CommitBenchBatch(ctx, st, small[i].b, small[i].pgns, string(seqJSON), nil)
	}); err != nil {
		return nil, err
	}
	var bigs []batch
	for k := 0; k < bigBatches; k++ {
		p, w, d, l := outcomes(rng, benchBigPairs)
		pg := make([]string, 2*benchBigPairs)
		for g := range pg {
			pg[g] = pgn
		}
		inc := ""
		if k%50 == 0 {
			inc = "time_loss:1"
		}
		bigs = append(bigs, batch{b: BenchBatch{UnitID: fmt.Sprintf("%s.%d", big, k), JobID: big, Idx: k, WorkerID: workerIDs[k%benchWorkers],
			Pairs: benchBigPairs, Penta: p, Wins: w, Draws: d, Losses: l, Incidents: inc, At: now.Add(-time.Duration(bigBatches-k) * 3 * time.Second)}, pgns: pg})
	}
	if err := parallel(len(bigs), func(i int) error {
		var evs []store.Event
		if i%50 == 0 {
			evs = []store.Event{{JobID: big, UnitID: bigs[i].b.UnitID, WorkerID: bigs[i].b.WorkerID, Kind: "incident",
				Detail: "game 3: time_loss (new): flag fell at move 57", At: bigs[i].b.At}}
		}
		return CommitBenchBatch(ctx, st, bigs[i].b, bigs[i].pgns, string(seqJSON), evs)
	}); err != nil {
		return nil, err
	}
	tuneID, err := writeTune(ctx, st, rng, workerIDs, now)
	if err != nil {
		return nil, err
	}
	st.Close()
	b.Logf("store written in %v", time.Since(start).Round(time.Millisecond))
	loadStart := time.Now()
	cl := newCluster(b, clusterOpts{dir: dir, books: bookDir})
	b.Logf("coordinator loaded 1,000 tests and 500 workers in %v", time.Since(loadStart).Round(time.Millisecond))
	f := &benchFixture{cl: cl, big: big, sess: "s-benchsession", tune: tuneID}
	carol := identity.Identity{Name: "carol", Role: identity.Client}
	ref, err := cl.c.Core.Create(ctx, carol, jobkind.Perft, &arbiterv1.PerftSpec{Depth: 6})
	if err != nil {
		return nil, err
	}
	f.perft = ref.ID
	var reps []*arbiterv1.VerifyPositionReport
	for i := 0; i < benchPositions; i++ {
		r := proto.Clone(benchReport).(*arbiterv1.VerifyPositionReport)
		r.Id = fmt.Sprintf("random %d", i)
		reps = append(reps, r)
	}
	sum := &arbiterv1.VerifySessionSummary{Engine: "bug", Depth: 4, Positions: 1000, Ok: 1000 - benchPositions, Bugs: benchPositions, Findings: 2 * benchPositions}
	for first := 0; first < len(reps); first += 25 {
		if _, err := verifyOf(cl.c).Report(ctx, carol, f.sess, sum, uint32(first), reps[first:first+25]); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// writeTune stores a finished tune of benchParams parameters with
// benchUpdates updates of 2 pairs, played in turn by every worker, each θ
// the one the tune's own arithmetic gives.
func writeTune(ctx context.Context, st *store.Store, rng *rand.Rand, workerIDs []string, now time.Time) (string, error) {
	spec := &arbiterv1.SpsaSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: matchspec.Embedded}, Pairs: 2 * benchUpdates, BatchPairs: 2,
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 2000}}, BookName: "uho-200.epd", Seed: 5, Throughput: 1}
	for i := 0; i < benchParams; i++ {
		spec.Params = append(spec.Params, &arbiterv1.SpsaParam{Name: fmt.Sprintf("Param%02d", i), Start: 100, Min: 0, Max: 1000, CEnd: 10, REnd: 0.002})
	}
	tune, err := spsa.New(spsaspec.Config(spec))
	if err != nil {
		return "", err
	}
	specBytes, _ := proto.Marshal(spec)
	id := "tbenchtune01"
	j := &store.Job{ID: id, Kind: jobkind.SPSA, State: store.StateDone, CreatedAt: now.Add(-2 * time.Hour), FinishedAt: now.Add(-time.Hour),
		RootMoves: []string{}, Submitter: "carol", Throughput: 1, UnitsTotal: benchUpdates}
	ups := make([]BenchTuneUpdate, benchUpdates)
	for k := range ups {
		p, w, d, l := outcomes(rng, 2)
		if err := tune.Apply(k, int(w), int(l)); err != nil {
			return "", err
		}
		at := now.Add(-2*time.Hour + time.Duration(k)*time.Second)
		ups[k] = BenchTuneUpdate{UnitID: gamepair.UnitID(id, k), WorkerID: workerIDs[k%len(workerIDs)], Pairs: 2,
			Penta: p, Wins: w, Draws: d, Loss: l, Theta: tune.Theta(), LeasedAt: at.Add(-time.Second), At: at}
	}
	if err := CreateBenchTune(ctx, st, j, specBytes, 2); err != nil {
		return "", err
	}
	return id, parallel(len(ups), func(i int) error { return CommitBenchTuneUpdate(ctx, st, id, i, ups[i]) })
}

// BenchBatch is a counted batch of one of the benchmark's tests.
type BenchBatch struct {
	UnitID, JobID, WorkerID, Incidents string
	Idx, Pairs                         int
	Penta                              [5]int64
	Wins, Draws, Losses                int64
	At                                 time.Time
}

// CreateBenchTest and CommitBenchBatch write the benchmarks' tests with
// the test kind's own store functions (its tables), set from
// kinds_ext_test.go as the tune's are.
var (
	CreateBenchTest  func(ctx context.Context, st *store.Store, j *store.Job, spec []byte, batchPairs int, sprt string) error
	CommitBenchBatch func(ctx context.Context, st *store.Store, b BenchBatch, pgns []string, sprt string, events []store.Event) error
)

// BenchTuneUpdate is update Seq (its index) of the benchmark's tune.
type BenchTuneUpdate struct {
	UnitID, WorkerID  string
	Pairs             int
	Penta             [5]int64
	Wins, Draws, Loss int64
	Theta             []float64
	LeasedAt, At      time.Time
}

// CreateBenchTune and CommitBenchTuneUpdate write the benchmark's tune
// with the SPSA kind's own store functions: the kind keeps its tables and
// imports this package, so kinds_ext_test.go, which may import it, sets
// them.
var (
	CreateBenchTune       func(ctx context.Context, st *store.Store, j *store.Job, spec []byte, batchPairs int) error
	CommitBenchTuneUpdate func(ctx context.Context, st *store.Store, jobID string, seq int, u BenchTuneUpdate) error
)

var benchReport = &arbiterv1.VerifyPositionReport{Fen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Depth: 4, Status: "bug", Reference: "3000",
	ReferenceFrom: "arbiter", EngineTotal: "2900", Probes: 12, Findings: []*arbiterv1.VerifyFinding{
		{RootFen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Moves: []string{"a6a7", "e8d7"}, Fen: "8/P2k4/8/8/8/8/8/4K3 w - - 1 2", Depth: 2,
			Missed:  []*arbiterv1.VerifyMoveIssue{{Move: "a7a8n", Reason: "missing under-promotion to knight"}, {Move: "a7a8b", Reason: "missing under-promotion to bishop"}},
			Command: "arbiter verify --engine cmd=bug --fen '8/P2k4/8/8/8/8/8/4K3 w - - 1 2' --depth 2"},
		{RootFen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Moves: []string{"e1d2"}, Fen: "4k3/8/P7/8/8/8/3K4/8 b - - 1 1", Depth: 3,
			Notes: []string{"inconsistent counts: the divide here gives 12 for e8d7, but perft 2 after e8d7 gives 13 (which is right)"}}}}

func BenchmarkPages(b *testing.B) {
	f, err := buildFixture(b)
	if err != nil {
		b.Fatal(err)
	}
	pages := []struct{ name, path string }{
		{"list", "/"},
		{"list-running", "/tests?state=running"},
		{"list-page-10", "/?page=10"},
		{"test-10000-games", "/tests/" + f.big},
		{"games", "/tests/" + f.big + "/games?page=5"},
		{"game-viewer", "/tests/" + f.big + "/games/7/3"},
		{"perft", "/perft/" + f.perft},
		{"tune-20-params", "/tunes/" + f.tune},
		{"verify", "/verify/" + f.sess},
		{"workers-500", "/workers"},
		{"submit", "/submit"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", p.path, nil)
			w := httptest.NewRecorder()
			cold, coldCPU := time.Now(), cpuTime()
			f.cl.srv.ServeHTTP(w, req) // warm: the test's history is built once
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", p.path, w.Code, excerpt(w.Body.String()))
			}
			b.Logf("%s: first render %v (CPU %v)", p.path, time.Since(cold).Round(time.Microsecond), (cpuTime() - coldCPU).Round(time.Microsecond))
			size := w.Body.Len()
			runtime.GC()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				f.cl.srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", p.path, w.Code)
				}
			}
			b.StopTimer()
			// On a shared machine wall time measures the neighbours too:
			// the process's CPU time per page is what the page costs.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/page")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}
