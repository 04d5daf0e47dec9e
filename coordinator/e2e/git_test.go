//go:build unix

package e2e

// A test of two branches of a remote repository, end to end: a git
// server on loopback (git http-backend behind net/http/cgi) serves a
// small engine with two branches; the coordinator fetches both, the
// git server is shut before any worker starts, and worker processes that
// never saw it build both from the coordinator's source artifacts and
// play the SPRT to its decision. The test's page shows the diff; a
// webhook receiver gets exactly one signed finished delivery with the
// result block, and one that fails twice gets it on the third attempt.

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/testing/gittest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

type hookReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	failures int
	got      []hookRequest
}

type hookRequest struct {
	header http.Header
	body   []byte
	status int
}

func newHookReceiver(t *testing.T, failures int) *hookReceiver {
	r := &hookReceiver{failures: failures}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		status := http.StatusOK
		if r.failures > 0 {
			r.failures--
			status = http.StatusServiceUnavailable
		}
		r.got = append(r.got, hookRequest{header: req.Header.Clone(), body: body, status: status})
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) requests() []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookRequest(nil), r.got...)
}

func TestGitRefsSPRTWithDiffAndWebhooks(t *testing.T) {
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	root, deep, shallow := gittest.TinyUCI(t, src), gittest.TinyUCIDeep, gittest.TinyUCIShallow
	gitSrv, stopGit := gittest.ServeStoppable(t, root)
	url := gitSrv + "/tinyuci"
	built := t.TempDir()
	if out, err := exec.Command("make", "-s", "-C", src, "EXE="+filepath.Join(built, "engine")).CombinedOutput(); err != nil {
		t.Fatalf("make: %v: %s", err, out)
	}
	bench := benchOf(t, filepath.Join(built, "engine"))

	ok, flaky := newHookReceiver(t, 0), newHookReceiver(t, 2)
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr, "--hook-allow", "127.0.0.1", "--git-allow", "127.0.0.1", "--hook-retry-base", "200ms",
		"--public-url", "https://farm.example.org")
	api := []string{"--api", "http://" + httpAddr, "--token", token}
	secretOf := func(out string) (string, string) {
		m := regexp.MustCompile(`hook (h[0-9a-f]+): .*\nsecret: ([0-9a-f]+)\n`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("hook add printed:\n%s", out)
		}
		return m[1], m[2]
	}
	out, status := cli(t, append([]string{"hook", "add", ok.srv.URL + "/arbiter", "--events", "finished,failed"}, api...)...)
	if status != 0 {
		t.Fatalf("hook add: %d %s", status, out)
	}
	okHook, okSecret := secretOf(out)
	out, status = cli(t, append([]string{"hook", "add", flaky.srv.URL, "--events", "finished", "--format", "json"}, api...)...)
	if status != 0 {
		t.Fatalf("hook add: %d %s", status, out)
	}
	flakyHook, flakySecret := secretOf(out)

	// Bad refs and repositories: refused, nothing made.
	for _, bad := range []struct{ engine, want string }{
		{"name=dev,source=git:" + url + "@no-such-branch,build=make EXE=engine", `no branch, tag or commit "no-such-branch"`},
		{"name=dev,source=git:" + gitSrv + "/nothing@dev,build=make EXE=engine", "cannot fetch the repository"},
	} {
		args := append([]string{"submit", "sprt"}, clientArgs(addr)...)
		args = append(args, "--engine", bad.engine, "--engine", "name=base,source=git:"+url+"@main,build=make EXE=engine",
			"--each", "nodes=1000", "--openings", "file="+book, "--sprt", "elo0=0,elo1=100")
		out, status := cli(t, args...)
		if status == 0 || !strings.Contains(out, bad.want) {
			t.Errorf("submit with %s: exit %d, want %q:\n%s", bad.engine, status, bad.want, out)
		}
		t.Logf("submit with %s: exit %d:\n%s", bad.engine, status, out)
	}

	args := append([]string{"submit", "sprt"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=dev,source=git:"+url+"@dev,build=make EXE=engine,bench="+bench,
		"--engine", "name=base,source=git:"+url+"@main,build=make EXE=engine,bench="+bench,
		"--each", "nodes=1000", "--openings", "file="+book+",order=random,seed=5",
		"--sprt", "elo0=0,elo1=100,alpha=0.1,beta=0.1,model=logistic", "--batch-pairs", "4")
	out, status = cli(t, args...)
	if status != 0 {
		t.Fatalf("submit: %d %s", status, out)
	}
	m := regexp.MustCompile(`(?m)^(s[0-9a-f]{12})$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no test id in:\n%s", out)
	}
	id := m[1]
	// The repository goes away before any worker exists: the workers
	// build what the coordinator stored.
	stopGit()
	startWorkerIn(t, addr, "w1")
	startWorkerIn(t, addr, "w2")
	conn := dial(t, addr, token)
	deadline := time.Now().Add(4 * time.Minute)
	for !done(getJob(t, conn, id)) {
		if time.Now().After(deadline) {
			t.Fatalf("the test did not decide: %v", getJob(t, conn, id).GetMatchProgress())
		}
		time.Sleep(200 * time.Millisecond)
	}
	j := getJob(t, conn, id)
	mp := j.GetMatchProgress()
	t.Logf("decided: %s after %d games, LLR %.2f", mp.GetSprtState(), mp.GetGames(), mp.GetLlr())
	a := j.GetMatch().GetEngineA().GetArtifact()
	if a.GetRepository() != url || a.GetBranch() != "dev" || a.GetMessage() != "Search one ply deeper (Ada Tester)" || len(a.GetCommit()) != 40 {
		t.Errorf("engine dev's artifact: %v", a)
	}

	// The page shows the diff between the two commits.
	resp, err := http.Get("http://" + httpAddr + "/tests/" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`<h2 id="diff-h">Diff</h2>`, `<span class="d-del">-			` + html.EscapeString(shallow), `<span class="d-add">&#43;			` + html.EscapeString(deep),
		"Search one ply deeper (Ada Tester)", `id="block-openbench"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("test page lacks %q", want)
		}
	}

	// Exactly one signed finished delivery to each hook; the flaky one on
	// its third attempt.
	for deadline := time.Now().Add(time.Minute); len(ok.requests()) < 1 || len(flaky.requests()) < 3; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %d and %d", len(ok.requests()), len(flaky.requests()))
		}
	}
	time.Sleep(2 * time.Second) // further scans and delivery passes send nothing more
	reqs := ok.requests()
	if len(reqs) != 1 {
		t.Fatalf("the receiver got %d deliveries", len(reqs))
	}
	r := reqs[0]
	if r.header.Get("X-Arbiter-Event") != "finished" || !hooks.Verify(okSecret, r.body, r.header.Get("X-Arbiter-Signature-256")) {
		t.Errorf("delivery: event %q, signature %q does not verify", r.header.Get("X-Arbiter-Event"), r.header.Get("X-Arbiter-Signature-256"))
	}
	var p hooks.Payload
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	want := "Games | N: " + itoa(mp.GetGames()) + " W: " + itoa(mp.GetWins()) + " L: " + itoa(mp.GetLosses()) + " D: " + itoa(mp.GetDraws())
	var job struct {
		JobID string `json:"job_id"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(p.Job, &job); err != nil {
		t.Fatal(err)
	}
	if job.JobID != id || job.State != "done" || !strings.HasPrefix(p.Block, "Elo   | ") || !strings.Contains(p.Block, want) ||
		!strings.Contains(p.Block, "\nSPRT  | nodes=1000 Threads=1\n") || !strings.HasSuffix(p.Block, "https://farm.example.org/tests/"+id+"\n") {
		t.Errorf("payload: %+v", p)
	}
	t.Logf("the block delivered:\n%s", p.Block)
	fl := flaky.requests()
	if len(fl) != 3 || fl[0].status != 503 || fl[1].status != 503 || fl[2].status != 200 ||
		!hooks.Verify(flakySecret, fl[2].body, fl[2].header.Get("X-Arbiter-Signature-256")) {
		t.Errorf("flaky receiver: %d requests", len(fl))
	}
	out, status = cli(t, append([]string{"hook", "deliveries", flakyHook}, api...)...)
	if status != 0 || !regexp.MustCompile(flakyHook+`\s+`+id+`\s+finished\s+delivered\s+3\s+200\s`).MatchString(out) {
		t.Errorf("hook deliveries: %d\n%s", status, out)
	}
	out, _ = cli(t, append([]string{"hook", "deliveries", okHook}, api...)...)
	t.Logf("arbiter hook deliveries %s:\n%s", okHook, out)
	block, status := cli(t, append([]string{"status", id, "--block"}, clientArgs(addr)...)...)
	if status != 0 || !strings.Contains(block, want) {
		t.Errorf("status --block: %d\n%s", status, block)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
