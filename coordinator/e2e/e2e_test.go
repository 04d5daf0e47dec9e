//go:build unix

// Package e2e holds the cluster's integration tests, on loopback TCP with
// a real SQLite store. Tests that kill, signal or measure a coordinator or
// worker process run the real arbiter binary (built once in TestMain);
// the others serve the coordinator and run workers in the test process
// (local/localcluster, what `arbiter up` runs). Clients are the binary's
// commands, or test-only clients that speak the real gRPC API to replay,
// corrupt and malform results.
package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	_ "modernc.org/sqlite"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

const token = "e2e-secret"

// stockfishBin is Debian's Stockfish, which the tests run as a second program.
const stockfishBin = "/usr/games/stockfish"

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arbiter-e2e-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "arbiter")
	build := exec.Command("go", "build", "-o", bin, "github.com/arbiter-chess/arbiter/cmd/arbiter")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building arbiter:", err)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// EnvStore names the variable that picks the store every coordinator of
// these tests runs on: unset, SQLite in its data dir; "postgres", a
// PostgreSQL database of its own per data dir on a real server
// (testing/pgtest), so the same tests run on either store.
const envStore = "ARBITER_E2E_STORE"

var pgDatabases sync.Map // data dir → the URL of its database

// storeURL is the --store of a coordinator on data ("": SQLite).
func storeURL(t *testing.T, data string) string {
	t.Helper()
	switch os.Getenv(envStore) {
	case "":
		return ""
	case "postgres":
	default:
		t.Fatalf("%s=%q: want postgres or nothing", envStore, os.Getenv(envStore))
	}
	if data == "" { // a temporary data dir: never started again
		return pgtest.Start(t).NewDatabase(t)
	}
	if v, ok := pgDatabases.Load(data); ok {
		return v.(string)
	}
	dsn := pgtest.Start(t).NewDatabase(t)
	pgDatabases.Store(data, dsn)
	return dsn
}

// onSQLiteOnly skips a test about the SQLite file itself when the
// harness runs on PostgreSQL.
func onSQLiteOnly(t *testing.T) {
	t.Helper()
	if os.Getenv(envStore) != "" {
		t.Skipf("about the SQLite store file; %s=%s", envStore, os.Getenv(envStore))
	}
}

// openStoreDB opens the store of the coordinator on data for reading
// its tables directly (the coordinator may be dead), on either store;
// statements take ? placeholders on both.
func openStoreDB(data string) (*sql.DB, error) {
	if v, ok := pgDatabases.Load(data); ok {
		return store.PostgresDB(v.(string))
	}
	return sql.Open("sqlite", "file:"+filepath.Join(data, "coordinator.db")+"?mode=ro&_pragma=busy_timeout(5000)")
}

type proc struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

// start runs the binary; its output is shown if the test fails.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: &out}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, lastLines(out.String(), 40))
		}
	})
	return p
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// killHolding SIGKILLs the worker p, registered as name, at a moment it
// holds a lease: it is paused (SIGSTOP), given time for a result already
// sent to land, and killed if the coordinator still lists a unit on it;
// otherwise it is resumed and tried again. A kill timed by sleeping can
// land between two batches, where nothing is lost.
func (p *proc) killHolding(t *testing.T, conn *grpc.ClientConn, name string) {
	t.Helper()
	admin := arbiterv1.NewAdminServiceClient(conn)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		p.cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(150 * time.Millisecond)
		ws, err := admin.ListWorkers(ctxT(t, 10*time.Second), &arbiterv1.ListWorkersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws.GetWorkers() {
			if w.GetName() == name && len(w.GetUnits()) > 0 {
				p.kill(t)
				return
			}
		}
		p.cmd.Process.Signal(syscall.SIGCONT)
		time.Sleep(time.Duration(20+rand.IntN(80)) * time.Millisecond)
	}
	t.Fatalf("worker %s never held a lease when paused", name)
}

// coordinator starts a coordinator and waits until it answers health checks.
func coordinator(t *testing.T, addr, data string, extra ...string) *proc {
	t.Helper()
	args := []string{"coordinator", "--listen", addr, "--data", data, "--token", token,
		"--lease-duration", "1s", "--unit-duration", "100ms", "--log-level", "info"}
	if u := storeURL(t, data); u != "" {
		args = append(args, "--store", u)
	}
	args = append(args, extra...)
	p := start(t, "coordinator", args...)
	conn := dial(t, addr, token)
	h := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("coordinator not healthy: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// localCluster serves a coordinator in the test process with the
// settings coordinator() gives the binary, on data ("" for a temporary
// directory), with n in-process workers of one thread each (each its own
// identity, named up-1, up-2, ...); more join with AddWorkers. Warnings and
// errors of the coordinator and workers show in the test's log.
func localCluster(t *testing.T, data string, n int) *localcluster.Cluster {
	t.Helper()
	dsn := storeURL(t, data)
	cl, err := localcluster.Start(localcluster.Config{Workers: n, Threads: 1, HashMB: 16, Builtin: builtin.New,
		Server: localcluster.ServerConfig{Data: data, Store: dsn, Token: token, LeaseDuration: time.Second, UnitDuration: 100 * time.Millisecond,
			Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}})
	if err != nil {
		t.Fatal(err)
	}
	if dsn != "" && data == "" {
		pgDatabases.Store(cl.Data(), dsn) // for openStoreDB(cl.Data())
	}
	t.Cleanup(cl.Stop)
	return cl
}

// addWorkers starts n more in-process workers.
func addWorkers(t *testing.T, cl *localcluster.Cluster, n int) {
	t.Helper()
	if err := cl.AddWorkers(n); err != nil {
		t.Fatal(err)
	}
}

// startWorker starts a worker process with its own worker credential (its
// own identity, so that workers verify one another's units).
func startWorker(t *testing.T, addr string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"worker", "--coordinator", addr, "--token", workerToken(t, addr), "--threads", "1", "--hash", "16", "--log-level", "info"}, extra...)
	return start(t, "worker", args...)
}

var credentialSeq atomic.Int64

// workerToken creates a worker credential with the bootstrap admin token.
func workerToken(t *testing.T, addr string) string {
	t.Helper()
	return newCredential(t, addr, "worker")
}

// newCredential creates a credential of role with the bootstrap admin token.
func newCredential(t *testing.T, addr, role string) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%s-%d", role, credentialSeq.Add(1))
	resp, err := arbiterv1.NewAdminServiceClient(dial(t, addr, token)).CreateCredential(ctxT(t, 10*time.Second),
		&arbiterv1.CreateCredentialRequest{Name: name, Role: role})
	if err != nil {
		t.Fatalf("create %s credential: %v", role, err)
	}
	return resp.GetToken()
}

func dial(t *testing.T, addr, tok string) *grpc.ClientConn {
	t.Helper()
	conn, err := clusterclient.Dial(addr, clusterclient.Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func submit(t *testing.T, conn *grpc.ClientConn, spec *arbiterv1.PerftSpec) *arbiterv1.Job {
	t.Helper()
	resp, err := arbiterv1.NewJobServiceClient(conn).SubmitPerft(ctxT(t, 30*time.Second), &arbiterv1.SubmitPerftRequest{Spec: spec})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return resp.GetJob()
}

func getJob(t *testing.T, conn *grpc.ClientConn, id string) *arbiterv1.Job {
	t.Helper()
	resp, err := arbiterv1.NewJobServiceClient(conn).GetJob(ctxT(t, 10*time.Second), &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatalf("get job: %v", err)
	}
	return resp.GetJob()
}

// waitFor polls a job until cond holds.
func waitFor(t *testing.T, conn *grpc.ClientConn, id string, limit time.Duration, what string, cond func(*arbiterv1.Job) bool) *arbiterv1.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		resp, err := arbiterv1.NewJobServiceClient(conn).GetJob(ctxT(t, 5*time.Second), &arbiterv1.GetJobRequest{JobId: id})
		if err == nil {
			if cond(resp.GetJob()) {
				return resp.GetJob()
			}
			if s := resp.GetJob().GetState(); s == arbiterv1.JobState_JOB_STATE_FAILED || s == arbiterv1.JobState_JOB_STATE_CANCELLED {
				t.Fatalf("job %s ended %v (%s) while waiting for %s", id, s, resp.GetJob().GetError(), what)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func done(j *arbiterv1.Job) bool { return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE }

type perftOut struct {
	FEN    string                 `json:"fen"`
	Depth  int                    `json:"depth"`
	Nodes  json.Number            `json:"nodes"`
	Divide map[string]json.Number `json:"divide"`
}

// localPerft runs `arbiter perft --divide --json` for reference.
func localPerft(t *testing.T, fen string, depth int) perftOut {
	t.Helper()
	out, err := exec.Command(bin, "perft", "--fen", fen, "--depth", fmt.Sprint(depth), "--divide", "--json", "--threads", "2", "--hash", "64").Output()
	if err != nil {
		t.Fatalf("local perft: %v", err)
	}
	var r perftOut
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("local perft json %q: %v", out, err)
	}
	return r
}

func checkDivide(t *testing.T, got *arbiterv1.Job, want perftOut) {
	t.Helper()
	if got.GetNodes() != want.Nodes.String() {
		t.Fatalf("nodes %s, want %s", got.GetNodes(), want.Nodes)
	}
	if len(got.GetDivide()) != len(want.Divide) {
		t.Fatalf("divide has %d moves, want %d", len(got.GetDivide()), len(want.Divide))
	}
	for _, d := range got.GetDivide() {
		if w := want.Divide[d.GetMove()]; w.String() != d.GetNodes() {
			t.Errorf("divide %s: %s, want %s", d.GetMove(), d.GetNodes(), w)
		}
	}
}

// TestTwoWorkersPerft6 runs perft 6 of the start position and of a Chess960
// position on two workers, through `arbiter submit --wait --json`.
func TestTwoWorkersPerft6(t *testing.T) {
	addr := localCluster(t, "", 2).Addr()

	out, err := exec.Command(bin, "submit", "perft", "--coordinator", addr, "--token", token, "--depth", "6",
		"--divide", "--wait", "--json", "--recheck", "0.25").Output()
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	var res perftOut
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("json %q: %v", out, err)
	}
	if res.Nodes.String() != "119060324" || res.Depth != 6 {
		t.Fatalf("perft 6 = %s (depth %d), want 119060324", res.Nodes, res.Depth)
	}
	if len(res.Divide) != 20 || res.Divide["e2e4"].String() != "9771632" || res.Divide["g1f3"].String() != "5723523" {
		t.Fatalf("divide wrong: %v", res.Divide)
	}

	// Chess960 (Shredder-FEN castling), checked move by move against the
	// local engine and the published total.
	const fen960 = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
	conn := dial(t, addr, token)
	job := submit(t, conn, &arbiterv1.PerftSpec{Fen: fen960, Depth: 6})
	if !job.GetPerft().GetChess960() {
		t.Fatal("Chess960 not detected")
	}
	final := waitFor(t, conn, job.GetJobId(), 60*time.Second, "960 job", done)
	if final.GetNodes() != "227689589" {
		t.Fatalf("960 perft 6 = %s, want 227689589", final.GetNodes())
	}
	checkDivide(t, final, localPerft(t, fen960, 6))
}

// TestWorkerKilled: a worker SIGKILLed mid-job loses only its lease.
func TestWorkerKilled(t *testing.T) {
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	w1 := startWorker(t, addr)
	// Two identities stay after the kill: the job is verified by default,
	// and one identity cannot verify its own units.
	startWorker(t, addr)
	startWorker(t, addr)
	conn := dial(t, addr, token)
	job := submit(t, conn, &arbiterv1.PerftSpec{Depth: 7, SplitPly: 3})
	waitFor(t, conn, job.GetJobId(), 60*time.Second, "some progress", func(j *arbiterv1.Job) bool {
		return j.GetProgress().GetUnitsDone() >= 5 && j.GetProgress().GetActiveWorkers() >= 2
	})
	w1.kill(t)
	final := waitFor(t, conn, job.GetJobId(), 120*time.Second, "job done", done)
	if final.GetNodes() != "3195901860" {
		t.Fatalf("perft 7 = %s, want 3195901860", final.GetNodes())
	}
}

// TestCoordinatorKilled: the coordinator is SIGKILLed mid-job and restarted
// on the same data dir; the waiting client and the workers carry on, the
// total is exact, and no unit was counted twice.
func TestCoordinatorKilled(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	c1 := coordinator(t, addr, data)
	startWorker(t, addr)
	startWorker(t, addr)
	conn := dial(t, addr, token)

	// A client waiting with --wait --json across the restart.
	client := exec.Command(bin, "submit", "perft", "--coordinator", addr, "--token", token, "--depth", "7",
		"--split-ply", "3", "--divide", "--wait", "--json")
	var cout, cerr bytes.Buffer
	client.Stdout, client.Stderr = &cout, &cerr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if client.ProcessState == nil {
			client.Process.Kill()
			client.Wait()
		}
	})
	var jobID string
	deadline := time.Now().Add(30 * time.Second)
	for jobID == "" {
		resp, err := arbiterv1.NewJobServiceClient(conn).ListJobs(ctxT(t, 5*time.Second), &arbiterv1.ListJobsRequest{})
		if err == nil && len(resp.GetJobs()) > 0 {
			jobID = resp.GetJobs()[0].GetJobId()
		}
		if time.Now().After(deadline) {
			t.Fatal("job never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := waitFor(t, conn, jobID, 60*time.Second, "progress", func(j *arbiterv1.Job) bool {
		return j.GetProgress().GetUnitsDone() >= 10
	})
	c1.kill(t)
	t.Logf("coordinator killed at %d/%d units", before.GetProgress().GetUnitsDone(), before.GetProgress().GetUnitsTotal())
	time.Sleep(1500 * time.Millisecond) // workers see it gone, leases would expire
	coordinator(t, addr, data)

	waitErr := make(chan error, 1)
	go func() { waitErr <- client.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("waiting client failed: %v\n%s", err, cerr.String())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("waiting client did not finish\n%s", cerr.String())
	}
	var res perftOut
	if err := json.Unmarshal(cout.Bytes(), &res); err != nil {
		t.Fatalf("json %q: %v", cout.String(), err)
	}
	if res.Nodes.String() != "3195901860" {
		t.Fatalf("perft 7 after restart = %s, want 3195901860", res.Nodes)
	}
	if len(res.Divide) != 20 || res.Divide["e2e4"].String() != "309478263" || res.Divide["a2a3"].String() != "106743106" {
		t.Fatalf("divide wrong: %v", res.Divide)
	}
	if !strings.Contains(cerr.String(), "reconnecting") {
		t.Errorf("client did not report the reconnect:\n%s", cerr.String())
	}

	// Nothing counted twice: one stored run per unit (no verification),
	// every unit settled.
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var units, settled, runs, maxRuns int
	if err := db.QueryRow("SELECT COUNT(*), SUM(settled) FROM units WHERE job_id=?", jobID).Scan(&units, &settled); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT COUNT(*), COALESCE(MAX(n),0) FROM (SELECT COUNT(*) AS n FROM runs WHERE job_id=? GROUP BY unit_id) AS per_unit", jobID).Scan(&runs, &maxRuns); err != nil {
		t.Fatal(err)
	}
	if settled != units || runs != units || maxRuns != 1 {
		t.Fatalf("units %d, settled %d, units with runs %d, max runs per unit %d", units, settled, runs, maxRuns)
	}
}

// fakeWorker is a test-only worker speaking the real API.
type fakeWorker struct {
	t  *testing.T
	c  arbiterv1.WorkerServiceClient
	id string
}

func newFakeWorker(t *testing.T, conn *grpc.ClientConn, name string) *fakeWorker {
	t.Helper()
	c := arbiterv1.NewWorkerServiceClient(conn)
	r, err := c.Register(ctxT(t, 10*time.Second), &arbiterv1.RegisterRequest{Name: name,
		Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, HashMb: 1, EngineVersion: "fake", Capabilities: []string{"perft"}}})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	return &fakeWorker{t: t, c: c, id: r.GetWorkerId()}
}

func (f *fakeWorker) lease() *arbiterv1.Lease {
	f.t.Helper()
	r, err := f.c.Lease(ctxT(f.t, 10*time.Second), &arbiterv1.LeaseRequest{WorkerId: f.id, Wait: durationpb.New(5 * time.Second)})
	if err != nil || r.GetLease() == nil {
		f.t.Fatalf("lease: %v (lease %v)", err, r.GetLease())
	}
	return r.GetLease()
}

func (f *fakeWorker) submit(l *arbiterv1.Lease, counts []uint64) (arbiterv1.SubmitOutcome, error) {
	r, err := f.c.Submit(ctxT(f.t, 10*time.Second), &arbiterv1.SubmitRequest{WorkerId: f.id, LeaseId: l.GetLeaseId(),
		UnitId: l.GetUnit().GetUnitId(), Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: counts}}})
	return r.GetOutcome(), err
}

func compute(t *testing.T, l *arbiterv1.Lease) []uint64 {
	t.Helper()
	res, err := perft.ComputeBatch(context.Background(), l.GetUnit().GetPerft(), engine.NewPerftCounter(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res.GetCounts() // test units are shallow: every count fits in 64 bits
}

// TestReplayedSubmissions: the same result submitted again, by the same or
// another worker, is compared and never added.
func TestReplayedSubmissions(t *testing.T) {
	cl := localCluster(t, "", 0)
	conn := dial(t, cl.Addr(), token)
	job := submit(t, conn, &arbiterv1.PerftSpec{Depth: 5})
	a, b := newFakeWorker(t, conn, "a"), newFakeWorker(t, conn, "b")
	l := a.lease()
	counts := compute(t, l)
	for i, want := range []arbiterv1.SubmitOutcome{arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED,
		arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE, arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE} {
		got, err := a.submit(l, counts)
		if err != nil || got != want {
			t.Fatalf("submission %d: %v, %v; want %v", i+1, got, err, want)
		}
	}
	// Another worker replays the same result for the same unit, under the
	// first worker's lease: it does not hold that lease, so it is refused.
	if got, err := b.submit(l, counts); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("replay by another worker: %v, %v; want PermissionDenied", got, err)
	}
	if p := getJob(t, conn, job.GetJobId()).GetProgress(); p.GetUnitsDone() != 1 {
		t.Fatalf("units done %d after replays, want 1", p.GetUnitsDone())
	}
	addWorkers(t, cl, 2)
	final := waitFor(t, conn, job.GetJobId(), 60*time.Second, "job done", done)
	if final.GetNodes() != "4865609" {
		t.Fatalf("perft 5 = %s, want 4865609", final.GetNodes())
	}
	// A replay after the job ended is discarded.
	if got, err := a.submit(l, counts); err != nil || got != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED {
		t.Fatalf("replay after done: %v, %v", got, err)
	}
	if getJob(t, conn, job.GetJobId()).GetNodes() != "4865609" {
		t.Fatal("total changed after a replay")
	}
}

// TestVerificationMismatch: a test worker submits a wrong (but plausible)
// count; verification detects it and a third run settles it.
func TestVerificationMismatch(t *testing.T) {
	cl := localCluster(t, "", 0)
	conn := dial(t, cl.Addr(), token)
	job := submit(t, conn, &arbiterv1.PerftSpec{Depth: 6, VerifyFraction: 1})
	bad := newFakeWorker(t, conn, "liar")
	l := bad.lease()
	counts := compute(t, l)
	counts[0]++ // still ≥ 1, below the bound: plausible, but wrong
	if got, err := bad.submit(l, counts); err != nil || got != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("first (wrong) run: %v, %v", got, err)
	}
	addWorkers(t, cl, 2)
	final := waitFor(t, conn, job.GetJobId(), 60*time.Second, "job done", done)
	if final.GetNodes() != "119060324" {
		t.Fatalf("perft 6 = %s, want 119060324", final.GetNodes())
	}
	p := final.GetProgress()
	if p.GetMismatches() != 1 || p.GetMismatchesSettled() != 1 {
		t.Fatalf("mismatches %d, settled %d; want 1, 1", p.GetMismatches(), p.GetMismatchesSettled())
	}
	if p.GetUnitsVerified() != p.GetUnitsTotal() {
		t.Fatalf("verified %d of %d units", p.GetUnitsVerified(), p.GetUnitsTotal())
	}
}

// TestBadInput: wrong token, malformed and impossible results, bad jobs.
// None changes the job.
func TestBadInput(t *testing.T) {
	cl := localCluster(t, "", 0)
	addr := cl.Addr()
	conn := dial(t, addr, token)

	// Wrong or missing token: unary and streaming calls are refused.
	wrong := dial(t, addr, "not-the-token")
	_, err := arbiterv1.NewJobServiceClient(wrong).ListJobs(ctxT(t, 5*time.Second), &arbiterv1.ListJobsRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong token on ListJobs: %v", err)
	}
	_, err = arbiterv1.NewWorkerServiceClient(wrong).Register(ctxT(t, 5*time.Second), &arbiterv1.RegisterRequest{
		Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1}})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong token on Register: %v", err)
	}
	stream, err := arbiterv1.NewJobServiceClient(wrong).WatchJob(ctxT(t, 5*time.Second), &arbiterv1.WatchJobRequest{JobId: "x"})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong token on WatchJob: %v", err)
	}
	cmd := exec.Command(bin, "status", "--coordinator", addr, "--token", "nope")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "credential") {
		t.Fatalf("status with wrong token: %v\n%s", err, out)
	}
	w := exec.Command(bin, "worker", "--coordinator", addr, "--token", "nope")
	out, err = w.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "credential") {
		t.Fatalf("worker with wrong token: %v\n%s", err, out)
	}

	// Bad jobs.
	jobs := arbiterv1.NewJobServiceClient(conn)
	for _, spec := range []*arbiterv1.PerftSpec{
		{Fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", Depth: 3},
		{Fen: "8/8/8/8/8/8/8/8 w - - 0 1", Depth: 3},
		{Depth: 99},
		{Depth: 5, SplitPly: 9},
		{Depth: 5, VerifyFraction: 2},
	} {
		if _, err := jobs.SubmitPerft(ctxT(t, 5*time.Second), &arbiterv1.SubmitPerftRequest{Spec: spec}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("bad spec %v accepted: %v", spec, err)
		}
	}
	if _, err := jobs.GetJob(ctxT(t, 5*time.Second), &arbiterv1.GetJobRequest{JobId: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown job: %v", err)
	}
	cmd = exec.Command(bin, "submit", "perft", "--coordinator", addr, "--token", token, "--fen", "garbage", "--depth", "3")
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("submit with bad FEN: %v\n%s", err, out)
	}

	// Malformed and impossible results, on a job whose units have
	// remaining depth 1 (exact checks) and then depth 3.
	job := submit(t, conn, &arbiterv1.PerftSpec{Depth: 3, SplitPly: 2})
	f := newFakeWorker(t, conn, "broken")
	l := f.lease()
	good := compute(t, l)
	refused := func(what string, counts []uint64, unit string, want codes.Code) {
		t.Helper()
		req := &arbiterv1.SubmitRequest{WorkerId: f.id, LeaseId: l.GetLeaseId(), UnitId: unit,
			Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: counts}}}
		if counts == nil {
			req.Result = &arbiterv1.SubmitRequest_GamePairs{GamePairs: &arbiterv1.GamePairBatchResult{}}
		}
		_, err := f.c.Submit(ctxT(t, 5*time.Second), req)
		if status.Code(err) != want {
			t.Errorf("%s: got %v, want %v", what, err, want)
		}
	}
	unit := l.GetUnit().GetUnitId()
	// A unit the worker holds no lease on (unknown or another's): refused
	// before anything looks at the result.
	refused("unknown unit", good, "p000000000000.0", codes.PermissionDenied)
	refused("too few counts", good[:len(good)-1], unit, codes.InvalidArgument)
	refused("too many counts", append(append([]uint64{}, good...), 1), unit, codes.InvalidArgument)
	refused("wrong kind", nil, unit, codes.InvalidArgument)
	wrong1 := append([]uint64{}, good...)
	wrong1[0]++
	refused("depth-1 count not the legal move count", wrong1, unit, codes.InvalidArgument)
	_, err = f.c.Submit(ctxT(t, 5*time.Second), &arbiterv1.SubmitRequest{WorkerId: "w-nobody", UnitId: unit,
		Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: good}}})
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown worker: %v", err)
	}
	if p := getJob(t, conn, job.GetJobId()).GetProgress(); p.GetUnitsDone() != 0 || p.GetNodesDone() != "0" {
		t.Fatalf("bad results changed the job: %v", p)
	}

	deep := submit(t, conn, &arbiterv1.PerftSpec{Depth: 5, SplitPly: 2})
	// Let the fake worker's first lease go: release it.
	f.c.Release(ctxT(t, 5*time.Second), &arbiterv1.ReleaseRequest{WorkerId: f.id, LeaseId: l.GetLeaseId()})
	var dl *arbiterv1.Lease
	for dl == nil {
		x := f.lease()
		if x.GetUnit().GetJobId() == deep.GetJobId() {
			dl = x
		} else {
			f.c.Release(ctxT(t, 5*time.Second), &arbiterv1.ReleaseRequest{WorkerId: f.id, LeaseId: x.GetLeaseId()})
			// Move on: the first job's units go to the real workers later.
			f.submit(x, compute(t, x))
		}
	}
	dgood := compute(t, dl)
	zero := append([]uint64{}, dgood...)
	zero[0] = 0
	l = dl
	refused("zero count for a position with moves", zero, dl.GetUnit().GetUnitId(), codes.InvalidArgument)
	huge := append([]uint64{}, dgood...)
	huge[0] = 1 << 62
	refused("count beyond 218^depth", huge, dl.GetUnit().GetUnitId(), codes.InvalidArgument)
	if p := getJob(t, conn, deep.GetJobId()).GetProgress(); p.GetUnitsDone() != 0 {
		t.Fatalf("bad results changed the deep job: %v", p)
	}

	addWorkers(t, cl, 2)
	if got := waitFor(t, conn, job.GetJobId(), 60*time.Second, "job done", done).GetNodes(); got != "8902" {
		t.Fatalf("perft 3 = %s, want 8902", got)
	}
	if got := waitFor(t, conn, deep.GetJobId(), 60*time.Second, "deep job done", done).GetNodes(); got != "4865609" {
		t.Fatalf("perft 5 = %s, want 4865609", got)
	}
}

// TestWorkerSIGTERM: a worker told to stop finishes or gives back its
// lease, delivers its results and exits 0; the job completes elsewhere.
func TestWorkerSIGTERM(t *testing.T) {
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	w := startWorker(t, addr, "--grace", "10s")
	conn := dial(t, addr, token)
	job := submit(t, conn, &arbiterv1.PerftSpec{Depth: 7, SplitPly: 3})
	waitFor(t, conn, job.GetJobId(), 60*time.Second, "progress", func(j *arbiterv1.Job) bool {
		return j.GetProgress().GetUnitsDone() >= 3
	})
	w.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- w.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("worker exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("worker did not stop after SIGTERM")
	}
	if !strings.Contains(w.out.String(), "shutting down") {
		t.Errorf("no shutdown log")
	}
	// No lease is left behind for the stopped worker.
	waitFor(t, conn, job.GetJobId(), 3*time.Second, "no leases left", func(j *arbiterv1.Job) bool {
		return j.GetProgress().GetActiveWorkers() == 0
	})
	startWorker(t, addr)
	startWorker(t, addr)
	if got := waitFor(t, conn, job.GetJobId(), 120*time.Second, "job done", done).GetNodes(); got != "3195901860" {
		t.Fatalf("perft 7 = %s", got)
	}
}
