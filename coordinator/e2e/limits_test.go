//go:build unix

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/grpcerr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// procKiB reads a field (VmRSS, VmHWM) of /proc/PID/status in KiB.
func procKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}

// TestWrongRoleBodiesCostNothing is the audit's attack: a valid worker
// credential sends 40 requests of 15 MB to a client method, concurrently
// over four connections. The role is checked from the headers, so the
// coordinator's peak RSS stays under 200 MB and every call is refused
// PERMISSION_DENIED. The control: the same body with a client credential
// is read (and refused for what it says, not for who sent it).
func TestWrongRoleBodiesCostNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 600 MB over loopback")
	}
	addr := proctest.FreeAddr(t)
	co := coordinator(t, addr, t.TempDir())
	pid := co.cmd.Process.Pid
	workerTok := workerToken(t, addr)
	clientTok := newCredential(t, addr, "client")
	huge := &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{BookName: strings.Repeat("x", 15<<20)}}

	before := procKiB(t, pid, "VmHWM")
	const conns, calls = 4, 40
	var cs []*grpc.ClientConn
	for range conns {
		cs = append(cs, dial(t, addr, workerTok))
	}
	var wg sync.WaitGroup
	codesSeen := make(chan codes.Code, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := arbiterv1.NewJobServiceClient(cs[i%conns]).SubmitMatch(ctxT(t, 60*time.Second), huge)
			codesSeen <- status.Code(err)
		}()
	}
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		if c != codes.PermissionDenied {
			t.Errorf("a worker's 15 MB call to SubmitMatch: %v, want PermissionDenied", c)
		}
	}
	peak := procKiB(t, pid, "VmHWM")
	t.Logf("coordinator peak RSS %d MiB before, %d MiB after 40 × 15 MB with the wrong role", before>>10, peak>>10)
	if peak > 200<<10 {
		t.Errorf("coordinator peak RSS %d MiB after wrong-role bodies, want under 200 MiB", peak>>10)
	}

	// Control: a client may call SubmitMatch, so its body is read; the spec
	// is refused for its content.
	_, err := arbiterv1.NewJobServiceClient(dial(t, addr, clientTok)).SubmitMatch(ctxT(t, 60*time.Second), huge)
	if c := status.Code(err); c == codes.PermissionDenied || c == codes.OK {
		t.Fatalf("client's SubmitMatch: %v, want refused for its spec", err)
	}
	// And a worker's own method works with the same credential.
	if _, err := arbiterv1.NewWorkerServiceClient(cs[0]).Register(ctxT(t, 10*time.Second),
		&arbiterv1.RegisterRequest{Name: "limits-control", Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, HashMb: 16}}); err != nil {
		t.Fatalf("worker's Register: %v", err)
	}
}

// TestSubmitBurstHitsQuota: 1,000 submits in a burst by one client
// credential are refused past --max-submits-per-minute with
// RESOURCE_EXHAUSTED naming the limit, and nothing past it is stored.
func TestSubmitBurstHitsQuota(t *testing.T) {
	addr := proctest.FreeAddr(t)
	data := t.TempDir()
	coordinator(t, addr, data, "--max-submits-per-minute", "50")
	conn := dial(t, addr, newCredential(t, addr, "client"))
	jobs := arbiterv1.NewJobServiceClient(conn)
	spec := &arbiterv1.PerftSpec{Fen: "8/8/8/8/8/8/8/K1k5 w - - 0 1", Depth: 1}
	var (
		mu              sync.Mutex
		accepted, quota int
		other           []error
		wg              sync.WaitGroup
	)
	sem := make(chan struct{}, 32)
	for range 1000 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, err := jobs.SubmitPerft(ctxT(t, 60*time.Second), &arbiterv1.SubmitPerftRequest{Spec: spec})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				accepted++
			case status.Code(err) == codes.ResourceExhausted && grpcerr.Reason(err) == "QUOTA":
				quota++
				if m := status.Convert(err).Message(); quota == 1 && (!strings.Contains(m, "50 submits per minute") || !strings.Contains(m, "--max-submits-per-minute")) {
					other = append(other, fmt.Errorf("quota message %q does not name the limit and its flag", m))
				}
			default:
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range other {
		t.Error(err)
	}
	// The bucket refills at 50 a minute: a slow burst may earn a few more.
	if accepted < 50 || accepted > 60 || quota != 1000-accepted {
		t.Fatalf("1000 submits: %d accepted, %d refused by the quota; want 50 (a few more if the burst took seconds) and the rest refused", accepted, quota)
	}
	resp, err := jobs.ListJobs(ctxT(t, 10*time.Second), &arbiterv1.ListJobsRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetJobs()); n != accepted {
		t.Fatalf("%d jobs stored, want the %d accepted", n, accepted)
	}
	// Control: the admin is not limited.
	submit(t, dial(t, addr, token), spec)
}

// TestRunningJobsBurst: 200 submits, 48 at a time, of jobs that stay running
// (no workers) by one client credential leave exactly
// --max-running-jobs-per-identity of them; the rest are refused naming it.
func TestRunningJobsBurst(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--max-running-jobs-per-identity", "20", "--max-submits-per-minute", "0")
	jobs := arbiterv1.NewJobServiceClient(dial(t, addr, newCredential(t, addr, "client")))
	var (
		mu       sync.Mutex
		accepted int
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, 48) // under --max-calls-per-identity
	for range 200 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, err := jobs.SubmitPerft(ctxT(t, 60*time.Second), &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3}})
			mu.Lock()
			defer mu.Unlock()
			switch m := status.Convert(err).Message(); {
			case err == nil:
				accepted++
			case status.Code(err) != codes.ResourceExhausted || !strings.Contains(m, "limit of 20 running jobs"):
				t.Errorf("submit: %v", err)
			}
		}()
	}
	wg.Wait()
	if accepted != 20 {
		t.Fatalf("%d of 200 concurrent submits accepted, want the limit of 20", accepted)
	}
}

// TestAbandonedUploadSwept: an upload begun and left half-sent leaves a
// partial file; a restarted coordinator removes it once it has been idle
// for --upload-abandon-after, and a fresh upload works.
func TestAbandonedUploadSwept(t *testing.T) {
	addr := proctest.FreeAddr(t)
	data := t.TempDir()
	co := coordinator(t, addr, data, "--upload-abandon-after", "2s")
	arts := arbiterv1.NewArtifactServiceClient(dial(t, addr, newCredential(t, addr, "client")))
	const sha = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	if _, err := arts.BeginUpload(ctxT(t, 10*time.Second), &arbiterv1.BeginUploadRequest{Sha256: sha, Size: 4 << 20,
		Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Name: "abandoned"}); err != nil {
		t.Fatal(err)
	}
	up, err := arts.Upload(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Send(&arbiterv1.UploadRequest{Sha256: sha, Offset: 0, Data: make([]byte, 1<<20)}); err != nil {
		t.Fatal(err)
	}
	if _, err := up.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(data, "artifacts", "partial", sha)
	if _, err := os.Stat(part); err != nil {
		t.Fatalf("partial file of the abandoned upload: %v", err)
	}
	co.kill(t)
	time.Sleep(2500 * time.Millisecond)
	coordinator(t, addr, data, "--upload-abandon-after", "2s")
	if _, err := os.Stat(part); !os.IsNotExist(err) {
		t.Fatalf("partial file of an upload idle past --upload-abandon-after still there after a restart (stat: %v)", err)
	}
}

// TestPerftWorkBounded: depth 20 is refused with its estimate; deep-split
// jobs are admitted while the positions the running jobs hold stay under
// --perft-max-held-positions, the next refused naming it; the coordinator
// stays small and restarts with the admitted jobs.
func TestPerftWorkBounded(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	flags := []string{"--perft-max-held-positions", "12000"}
	co := coordinator(t, addr, data, flags...)
	jobs := arbiterv1.NewJobServiceClient(dial(t, addr, newCredential(t, addr, "client")))
	_, err := jobs.SubmitPerft(ctxT(t, 30*time.Second), &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 20}})
	if m := status.Convert(err).Message(); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(m, "depth 20 from this position is about") || !strings.Contains(m, "--perft-max-nodes") {
		t.Fatalf("depth 20: %v", err)
	}
	spec := &arbiterv1.PerftSpec{Depth: 7, SplitPly: 3} // 5,362 unique positions each
	var ids []string
	for range 2 {
		resp, err := jobs.SubmitPerft(ctxT(t, 60*time.Second), &arbiterv1.SubmitPerftRequest{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.GetJob().GetJobId())
	}
	_, err = jobs.SubmitPerft(ctxT(t, 60*time.Second), &arbiterv1.SubmitPerftRequest{Spec: spec})
	if m := status.Convert(err).Message(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(m, "the limit is 12000") ||
		!strings.Contains(m, "--perft-max-held-positions") {
		t.Fatalf("third deep split: %v", err)
	}
	t.Logf("refused: %s; coordinator peak RSS %d MiB", status.Convert(err).Message(), procKiB(t, co.cmd.Process.Pid, "VmHWM")>>10)
	co.kill(t)
	began := time.Now()
	coordinator(t, addr, data, flags...)
	t.Logf("restart with the two jobs: healthy after %v", time.Since(began).Round(time.Millisecond))
	for _, id := range ids {
		if j := getJob(t, dial(t, addr, token), id); j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
			t.Fatalf("job %s after restart: %v", id, j.GetState())
		}
	}
}

// TestConnectionsAndCallsPerIdentity: a client credential past
// --max-connections-per-identity or --max-calls-per-identity is refused
// before its body, naming the limit; closing a connection or ending a
// call frees its place; the admin is not counted.
func TestConnectionsAndCallsPerIdentity(t *testing.T) {
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--max-connections-per-identity", "2", "--max-calls-per-identity", "2")
	tok := newCredential(t, addr, "client")
	list := func(conn *grpc.ClientConn) error {
		_, err := arbiterv1.NewJobServiceClient(conn).ListJobs(ctxT(t, 10*time.Second), &arbiterv1.ListJobsRequest{})
		return err
	}
	c1, c2 := dial(t, addr, tok), dial(t, addr, tok)
	for _, c := range []*grpc.ClientConn{c1, c2} {
		if err := list(c); err != nil {
			t.Fatal(err)
		}
	}
	c3 := dial(t, addr, tok)
	err := list(c3)
	if m := status.Convert(err).Message(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(m, "limit of 2 open connections") ||
		!strings.Contains(m, "--max-connections-per-identity") {
		t.Fatalf("third connection: %v", err)
	}
	c2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c4 := dial(t, addr, tok)
		if err := list(c4); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a connection closed, a new one still refused: %v", err)
		}
		c4.Close()
		time.Sleep(100 * time.Millisecond)
	}

	// Calls: two long WatchJob streams on c1 take both places.
	id := submit(t, dial(t, addr, token), &arbiterv1.PerftSpec{Depth: 5}).GetJobId()
	var cancels []func()
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		st, err := arbiterv1.NewJobServiceClient(c1).WatchJob(ctx, &arbiterv1.WatchJobRequest{JobId: id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	err = list(c1)
	if m := status.Convert(err).Message(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(m, "limit of 2 calls in progress") {
		t.Fatalf("a call past two streams: %v", err)
	}
	if err := list(dial(t, addr, token)); err != nil {
		t.Fatalf("the admin meanwhile: %v", err)
	}
	cancels[0]()
	deadline = time.Now().Add(10 * time.Second)
	for list(c1) != nil {
		if time.Now().After(deadline) {
			t.Fatal("a stream ended, calls still refused")
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancels[1]()
}

// TestPerMethodLimit: a client's 300 KiB GetJob (a method of a few ids)
// is refused RESOURCE_EXHAUSTED naming the method and its limit; the
// same call of normal size is answered.
func TestPerMethodLimit(t *testing.T) {
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	jobs := arbiterv1.NewJobServiceClient(dial(t, addr, newCredential(t, addr, "client")))
	_, err := jobs.GetJob(ctxT(t, 10*time.Second), &arbiterv1.GetJobRequest{JobId: strings.Repeat("p", 300<<10)})
	if m := status.Convert(err).Message(); status.Code(err) != codes.ResourceExhausted ||
		!strings.Contains(m, "/arbiter.v1.JobService/GetJob") || !strings.Contains(m, "at most 262144") {
		t.Fatalf("300 KiB GetJob: %v", err)
	}
	_, err = jobs.GetJob(ctxT(t, 10*time.Second), &arbiterv1.GetJobRequest{JobId: "p000000000000"})
	if status.Code(err) != codes.NotFound && status.Code(err) != codes.InvalidArgument {
		t.Fatalf("GetJob of an unknown id: %v, want it answered", err)
	}
}
