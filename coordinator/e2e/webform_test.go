//go:build unix

package e2e

// The submit form's "branch dev against main" with real processes: an
// arbiter coordinator serving its pages, a git server on loopback that
// only the coordinator fetches from, headless Chromium (Debian chromium)
// driving the form, and two sandboxed arbiter worker processes started
// after the git server is shut. The user previews the diff, submits, and
// the test runs to its end; control: a missing branch is refused beside
// the git field and makes no test.
// TestWebFormUploadTarball does the same for a source tarball uploaded
// on the form.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/grpc"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/gittest"
	headlesstest "github.com/arbiter-chess/arbiter/testing/headless"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// headless drives a real headless Chromium.
type headless struct {
	t   *testing.T
	ctx context.Context
}

func newHeadless(t *testing.T) *headless {
	return &headless{t: t, ctx: headlesstest.Start(t)}
}

// run runs actions within a minute.
func (h *headless) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		h.t.Fatalf("%s: %v", what, err)
	}
}

// leave runs actions that load a new page and waits for it.
func (h *headless) leave(what string, actions ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	h.eval(`window.__old = true; ""`)
	h.run(what, actions...)
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__old === undefined && document.readyState === "complete" && !!document.querySelector("footer.foot")`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: no new page after a minute (%v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *headless) eval(js string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		h.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func TestWebFormBranchAgainstMain(t *testing.T) {
	requireTools(t)
	h := newHeadless(t)
	root, deep := gittest.TinyUCI(t, "testdata/tinyuci"), gittest.TinyUCIDeep
	gitSrv, stopGit := gittest.ServeStoppable(t, root)
	url := gitSrv + "/tinyuci"
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr, "--git-allow", "127.0.0.1")
	conn := dial(t, addr, token)
	base := "http://" + httpAddr
	bookPath, err := filepath.Abs(book)
	if err != nil {
		t.Fatal(err)
	}

	h.signIn(base)
	fill := func(what, refA, button string) {
		h.sendEightGames(base, what, button, bookPath,
			chromedp.SetValue(chromedp.CSS("#engine_a"), "name=dev,build=make EXE=engine"),
			chromedp.SetValue(chromedp.CSS("#engine_a_repo"), url),
			chromedp.SetValue(chromedp.CSS("#engine_a_ref"), refA),
			chromedp.SetValue(chromedp.CSS("#engine_b"), "name=base,build=make EXE=engine"),
			chromedp.SetValue(chromedp.CSS("#engine_b_repo"), url),
			chromedp.SetValue(chromedp.CSS("#engine_b_ref"), "main"))
	}

	// Control: a branch the repository lacks, refused beside the field.
	fill("submit a missing branch", "no-such-branch", "#submit-test")
	if got := h.eval(`(document.getElementById('engine_a_git-error') || {innerText: ''}).innerText`); !strings.Contains(got, `no branch, tag or commit "no-such-branch"`) {
		t.Errorf("beside the git field: %q; page: %s", got, h.eval(`document.querySelector('main').innerText`))
	}
	if jobs := listJobs(t, conn); len(jobs) != 0 {
		t.Fatalf("a refused form made %d jobs", len(jobs))
	}

	// The diff before submitting, then the test from the same page.
	fill("preview the diff", "dev", "#preview-diff")
	if preview := h.eval(`(document.getElementById('preview') || {innerText: ''}).innerText`); !strings.Contains(preview, "+\t\t\t"+deep) ||
		!strings.Contains(preview, "Search one ply deeper") {
		t.Fatalf("the preview:\n%s\npage: %s", preview, h.eval(`document.querySelector('main').innerText`))
	}
	if jobs := listJobs(t, conn); len(jobs) != 0 {
		t.Fatalf("the preview made %d jobs", len(jobs))
	}
	// The book file input is not refilled on the returned page: choose it
	// again, as a user does.
	h.leave("submit", chromedp.SetUploadFiles(chromedp.CSS("#book_file"), []string{bookPath}), chromedp.Click(chromedp.CSS("#submit-test")))
	loc := h.eval("location.pathname")
	if !strings.HasPrefix(loc, "/tests/s") {
		t.Fatalf("the form went to %s: %s", loc, h.eval(`document.querySelector('main').innerText`))
	}
	id := strings.TrimPrefix(loc, "/tests/")

	// The repository goes away before any worker exists.
	stopGit()
	j := runToEnd(t, addr, conn, id)
	if a := j.GetMatch().GetEngineA().GetArtifact(); a.GetRepository() != url || a.GetBranch() != "dev" || len(a.GetSha256()) != 64 {
		t.Errorf("engine A's artifact: %v", a)
	}
	t.Logf("test %s ended: %d games, %v", id, j.GetMatchProgress().GetGames(), j.GetMatchProgress().GetPentanomial())
}

// listJobs lists the coordinator's jobs, as arbiter status does.
func listJobs(t *testing.T, conn *grpc.ClientConn) []*arbiterv1.Job {
	t.Helper()
	resp, err := arbiterv1.NewJobServiceClient(conn).ListJobs(ctxT(t, 10*time.Second), &arbiterv1.ListJobsRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetJobs()
}

// sendEightGames opens the submit form, fills it with engines and an
// 8-game match at 1000 nodes on the uploaded book, 2 pairs a batch, and
// presses button.
func (h *headless) sendEightGames(base, what, button, book string, engines ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	h.run("open the form", chromedp.Navigate(base+"/submit"), chromedp.WaitVisible(chromedp.CSS("#engine_a")))
	h.leave(what, append(engines,
		chromedp.SetUploadFiles(chromedp.CSS("#book_file"), []string{book}),
		chromedp.Click(chromedp.CSS(`input[name="kind"][value="match"]`)),
		chromedp.SetValue(chromedp.CSS("#games"), "8"),
		chromedp.SetValue(chromedp.CSS("#each"), "nodes=1000"),
		chromedp.SetValue(chromedp.CSS("#batch_pairs"), "2"),
		chromedp.Click(chromedp.CSS(button)))...)
}

// signIn signs in on the pages with the bootstrap token.
func (h *headless) signIn(base string) {
	h.t.Helper()
	h.run("open the sign-in page", chromedp.Navigate(base+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")))
	h.leave("sign in", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#signin")))
}

// runToEnd starts two worker processes and waits until the 8-game test
// id is done and a worker reports its uploaded engine "dev" built.
func runToEnd(t *testing.T, addr string, conn *grpc.ClientConn, id string) *arbiterv1.Job {
	t.Helper()
	startWorkerIn(t, addr, "w1")
	startWorkerIn(t, addr, "w2")
	deadline := time.Now().Add(5 * time.Minute)
	for !done(getJob(t, conn, id)) {
		if time.Now().After(deadline) {
			j := getJob(t, conn, id)
			t.Fatalf("the test did not end: %v %q %v checks %v", j.GetState(), j.GetError(), j.GetMatchProgress(), j.GetArtifactChecks())
		}
		time.Sleep(300 * time.Millisecond)
	}
	j := getJob(t, conn, id)
	if g := j.GetMatchProgress().GetGames(); g != 8 {
		t.Errorf("the match ended after %d games, want 8", g)
	}
	built := false
	for _, c := range j.GetArtifactChecks() {
		built = built || (c.GetEngine() == "dev" && c.GetState() == arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED)
	}
	if !built {
		t.Errorf("no worker reports engine dev built: %v", j.GetArtifactChecks())
	}
	return j
}

// TestWebFormUploadTarball: a source tarball chosen in engine A's file
// field (made by tar from testdata/tinyuci) is stored by the coordinator
// process, built by two sandboxed worker processes, and its match against
// the builtin engine ends; control: a file that is no tarball is refused
// beside the file field, making no test.
func TestWebFormUploadTarball(t *testing.T) {
	requireTools(t)
	h := newHeadless(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "tinyuci.tar.gz")
	if out, err := exec.Command("tar", "-czf", good, "-C", "testdata/tinyuci", ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	notTar := filepath.Join(dir, "broken.tar.gz")
	if err := os.WriteFile(notTar, []byte("not a tarball"), 0o644); err != nil {
		t.Fatal(err)
	}
	bookPath, err := filepath.Abs(book)
	if err != nil {
		t.Fatal(err)
	}
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr)
	conn := dial(t, addr, token)
	base := "http://" + httpAddr
	h.signIn(base)
	send := func(what, tarball string) {
		h.sendEightGames(base, what, "#submit-test", bookPath,
			chromedp.SetValue(chromedp.CSS("#engine_a"), "name=dev,build=make EXE=engine"),
			chromedp.SetUploadFiles(chromedp.CSS("#engine_a_file"), []string{tarball}),
			chromedp.SetValue(chromedp.CSS("#engine_b"), "name=base,builtin"))
	}
	send("submit a file that is no tarball", notTar)
	if got := h.eval(`(document.getElementById('engine_a_file-error') || {innerText: ''}).innerText`); !strings.Contains(got, "not a gzip-compressed tar") {
		t.Errorf("beside the file field: %q; page: %s", got, h.eval(`document.querySelector('main').innerText`))
	}
	if jobs := listJobs(t, conn); len(jobs) != 0 {
		t.Fatalf("a refused file made %d jobs", len(jobs))
	}
	send("submit the tarball", good)
	loc := h.eval("location.pathname")
	if !strings.HasPrefix(loc, "/tests/s") {
		t.Fatalf("the form went to %s: %s", loc, h.eval(`document.querySelector('main').innerText`))
	}
	j := runToEnd(t, addr, conn, strings.TrimPrefix(loc, "/tests/"))
	if a := j.GetMatch().GetEngineA().GetArtifact(); a.GetKind() != arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE || len(a.GetSha256()) != 64 {
		t.Errorf("engine A's artifact: %v", a)
	}
}
