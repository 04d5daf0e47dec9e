//go:build unix

package web

// The submit form's git sources in a real headless Chromium, against a
// real coordinator (gRPC and pages on loopback, a SQLite store) and a real
// git server on loopback (git http-backend, testing/gittest) serving a
// small C engine with two branches:
//   - controls: a malformed ref and a branch the repository lacks are
//     each refused with the error beside engine A's git fields, and no
//     test is made;
//   - the user fills "branch dev against main", previews the diff on the
//     form (no test made by the preview), submits; the git server is then
//     shut, and workers that never saw it build both engines from the
//     coordinator's copies and play the match to its end;
//   - the "test a branch against the default branch" shortcut lists the
//     repository and fills the form from it.
// And an uploaded source tarball (TestBrowserFormUploadTarball): stored,
// built by the workers, played to the end; a tarball leaving its tree is
// refused beside its field.

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/gittest"
	"github.com/arbiter-chess/arbiter/worker"
)

// startBuildingWorker runs an in-process worker that builds and runs
// uploaded engines. Unsandboxed: the sandbox's wrapper is the arbiter
// binary (this test binary is not one); the sandbox has its own tests.
func (cl *cluster) startBuildingWorker(t *testing.T, name string) {
	t.Helper()
	cl.startWorkerWith(t, name, func(c *worker.Config) { c.DataDir, c.AllowUploads, c.Unsandboxed = t.TempDir(), true, true })
}

// waitBuiltAndEnded waits until test id is done (failing the test if it
// fails, is cancelled or takes over 5 minutes) and checks that it played
// 8 games and that a worker built engine, and returns its snapshot.
func (cl *cluster) waitBuiltAndEnded(t *testing.T, c *clusterclient.Client, id, engine string) *arbiterv1.Job {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	j := cl.job(t, c, id)
	for j.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		if time.Now().After(deadline) || j.GetState() == arbiterv1.JobState_JOB_STATE_FAILED || j.GetState() == arbiterv1.JobState_JOB_STATE_CANCELLED {
			t.Fatalf("the test did not end: %v %q %v checks %v", j.GetState(), j.GetError(), j.GetMatchProgress(), j.GetArtifactChecks())
		}
		time.Sleep(300 * time.Millisecond)
		j = cl.job(t, c, id)
	}
	if g := j.GetMatchProgress().GetGames(); g != 8 {
		t.Errorf("the match ended after %d games, want 8", g)
	}
	verified := 0
	for _, ch := range j.GetArtifactChecks() {
		if ch.GetState() == arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED && ch.GetEngine() == engine {
			verified++
		}
	}
	if verified == 0 {
		t.Errorf("no worker reports engine %s built: %v", engine, j.GetArtifactChecks())
	}
	return j
}

// signedInChrome is a cluster of the test process and a Chromium signed
// in on its pages as the client carol.
func signedInChrome(t *testing.T) (*cluster, *chrome) {
	t.Helper()
	cl := newCluster(t, clusterOpts{books: bookDir})
	c := newChrome(t, cl.web.URL, t.TempDir())
	c.do("open the sign-in page", chromedp.Navigate(c.base+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")))
	c.navigate("sign in", chromedp.SendKeys(chromedp.CSS("#token"), cl.client), chromedp.Click(chromedp.CSS("#signin")))
	return cl, c
}

// sendEightGames fills the submit form with engines and an 8-game match
// at 1000 nodes from the coordinator's book, 2 pairs a batch, and presses
// button.
func (c *chrome) sendEightGames(what, button string, engines ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	c.navigate(what, append(engines,
		chromedp.Click(chromedp.CSS(`input[name="kind"][value="match"]`)),
		chromedp.SetValue(chromedp.CSS("#games"), "8"),
		chromedp.SetValue(chromedp.CSS("#each"), "nodes=1000"),
		chromedp.SetValue(chromedp.CSS("#book"), "uho-200.epd"),
		chromedp.SetValue(chromedp.CSS("#batch_pairs"), "2"),
		chromedp.Click(chromedp.CSS(button)))...)
}

// tinyRepo is gittest.TinyUCI of the e2e tests' tiny UCI engine.
func tinyRepo(t *testing.T) (root, deep, shallow string) {
	t.Helper()
	return gittest.TinyUCI(t, "../e2e/testdata/tinyuci"), gittest.TinyUCIDeep, gittest.TinyUCIShallow
}

func TestBrowserFormGitBranch(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("no " + chromiumPath + " (Debian package chromium)")
	}
	for _, tool := range []string{"cc", "make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	root, deep, shallow := tinyRepo(t)
	gitURL, stopGit := gittest.ServeStoppable(t, root)
	url := gitURL + "/tinyuci"

	cl, c := signedInChrome(t)
	grpcClient := cl.dial(t, cl.client)
	jobCount := func() int { jobs, _ := cl.c.Core.Jobs(0, nil); return len(jobs) }
	c.visit("/submit", "submit")
	if n := eval[int](c, `document.querySelectorAll('#shortcut-form').length`); n != 0 {
		t.Errorf("the shortcut shows with no repository known")
	}

	fill := func(what, refA string, button string) {
		c.sendEightGames(what, button,
			chromedp.SetValue(chromedp.CSS("#engine_a"), "name=dev,build=make EXE=engine"),
			chromedp.SetValue(chromedp.CSS("#engine_a_repo"), url),
			chromedp.SetValue(chromedp.CSS("#engine_a_ref"), refA),
			chromedp.SetValue(chromedp.CSS("#engine_b"), "name=base,build=make EXE=engine"),
			chromedp.SetValue(chromedp.CSS("#engine_b_repo"), url),
			chromedp.SetValue(chromedp.CSS("#engine_b_ref"), "main"))
	}

	// ---- controls: bad refs are refused beside the git field ----
	before := jobCount()
	for _, bad := range []struct{ ref, want string }{
		{"bad..ref", `not a branch, tag or commit name`},
		{"no-such-branch", `no branch, tag or commit "no-such-branch"`},
	} {
		fill("submit "+bad.ref, bad.ref, "#submit-test")
		got := eval[string](c, `(document.getElementById('engine_a_git-error') || {innerText: ''}).innerText`)
		if !strings.Contains(got, bad.want) {
			t.Errorf("ref %s: the error beside the git field is %q, want %q; page: %s", bad.ref, got, bad.want,
				eval[string](c, `document.querySelector('main').innerText`))
		}
		if problems := eval[[]string](c, a11yScript); len(problems) > 0 {
			t.Errorf("ref %s: the refusal's accessibility:\n%s", bad.ref, strings.Join(problems, "\n"))
		}
		if p := eval[string](c, "location.pathname"); p != "/submit/test" {
			t.Errorf("ref %s: the form went to %s", bad.ref, p)
		}
	}
	if n := jobCount(); n != before {
		t.Fatalf("refused forms made %d jobs", n-before)
	}
	// The refusals answered 400 and 404, which the console reports.
	if errs := strings.Join(c.consoleErrors(), "\n"); !strings.Contains(errs, "400") || !strings.Contains(errs, "404") {
		t.Errorf("the refusals' statuses: %q", errs)
	}

	// ---- the diff before submitting ----
	fill("preview the diff", "dev", "#preview-diff")
	preview := eval[string](c, `(document.getElementById('preview') || {innerText: ''}).innerText`)
	for _, want := range []string{"-\t\t\t" + shallow, "+\t\t\t" + deep, "Search one ply deeper (Ada Tester)", "From base", "to dev"} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview)
		}
	}
	if n := jobCount(); n != before {
		t.Fatalf("the preview made a job")
	}
	c.screenshot("submit-preview")
	if problems := eval[[]string](c, a11yScript); len(problems) > 0 {
		t.Errorf("the preview page's accessibility:\n%s", strings.Join(problems, "\n"))
	}

	// ---- submit from the preview's page: the form kept every value ----
	c.navigate("submit the test", chromedp.Click(chromedp.CSS("#submit-test")))
	loc := eval[string](c, "location.pathname")
	if !strings.HasPrefix(loc, "/tests/s") {
		t.Fatalf("the form went to %s: %s", loc, eval[string](c, `document.querySelector('main').innerText`))
	}
	id := strings.TrimPrefix(loc, "/tests/")
	// The repository goes away before any worker exists: the workers
	// build what the coordinator stored.
	stopGit()
	cl.startBuildingWorker(t, "w1")
	cl.startBuildingWorker(t, "w2")
	j := cl.waitBuiltAndEnded(t, grpcClient, id, "dev")
	a, b := j.GetMatch().GetEngineA().GetArtifact(), j.GetMatch().GetEngineB().GetArtifact()
	if a.GetRepository() != url || a.GetBranch() != "dev" || b.GetBranch() != "main" || len(a.GetSha256()) != 64 || a.GetCommit() == b.GetCommit() {
		t.Errorf("the engines' artifacts: A %v B %v", a, b)
	}
	c.visit("/tests/"+id, "test-from-git")
	if d := eval[string](c, `(document.getElementById('diff') || {innerText: ''}).innerText`); !strings.Contains(d, "+\t\t\t"+deep) {
		t.Errorf("the test page's diff: %q", d)
	}

	// ---- the shortcut: the repository is known now ----
	c.visit("/submit", "submit-shortcut")
	if opts := eval[string](c, `Array.from(document.querySelectorAll('#shortcut-repo option')).map(o => o.value).join(' ')`); opts != url {
		t.Fatalf("the shortcut offers %q, want %q", opts, url)
	}
	c.navigate("use the shortcut", chromedp.SetValue(chromedp.CSS("#shortcut-branch"), "dev"), chromedp.Click(chromedp.CSS("#shortcut-fill")))
	got := eval[[]string](c, `['engine_a','engine_a_repo','engine_a_ref','engine_b','engine_b_repo','engine_b_ref'].map(k => document.getElementById(k).value)`)
	want := []string{`name="dev",build="make EXE=engine"`, url, "dev", `name=main,build="make EXE=engine"`, url, "HEAD"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the shortcut filled %q, want %q", got, want)
	}
	if errs := c.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowserFormUploadTarball: in Chromium, a source tarball chosen in
// engine A's file field is stored, the workers build it and the match
// against the builtin engine ends; control: a tarball with an entry
// leaving its tree is refused beside the file field, making no test.
func TestBrowserFormUploadTarball(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("no " + chromiumPath + " (Debian package chromium)")
	}
	for _, tool := range []string{"cc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	dir := t.TempDir()
	good := tinyTarball(t, dir)
	evil := tarball(t, dir, "evil.tar.gz", []string{"Makefile", "../outside.c"}, map[string]string{"Makefile": "all:\n", "../outside.c": "x"})
	cl, c := signedInChrome(t)
	grpcClient := cl.dial(t, cl.client)
	jobCount := func() int { jobs, _ := cl.c.Core.Jobs(0, nil); return len(jobs) }
	send := func(what, tarball string) {
		c.visit("/submit", "submit-upload")
		c.sendEightGames(what, "#submit-test",
			chromedp.SetValue(chromedp.CSS("#engine_a"), "name=dev,build=make EXE=engine"),
			chromedp.SetUploadFiles(chromedp.CSS("#engine_a_file"), []string{tarball}),
			chromedp.SetValue(chromedp.CSS("#engine_b"), "name=base,builtin"))
	}
	send("submit a tarball leaving its tree", evil)
	if got := eval[string](c, `(document.getElementById('engine_a_file-error') || {innerText: ''}).innerText`); !strings.Contains(got, "outside.c") {
		t.Errorf("the error beside the file field: %q; page: %s", got, eval[string](c, `document.querySelector('main').innerText`))
	}
	if n := jobCount(); n != 0 {
		t.Fatalf("a refused tarball made %d jobs", n)
	}
	c.consoleErrors() // the refusal's 400
	send("submit the tarball", good)
	loc := eval[string](c, "location.pathname")
	if !strings.HasPrefix(loc, "/tests/s") {
		t.Fatalf("the form went to %s: %s", loc, eval[string](c, `document.querySelector('main').innerText`))
	}
	id := strings.TrimPrefix(loc, "/tests/")
	cl.startBuildingWorker(t, "w1")
	cl.startBuildingWorker(t, "w2")
	cl.waitBuiltAndEnded(t, grpcClient, id, "dev")
	if errs := c.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
