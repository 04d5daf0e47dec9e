package web

import (
	"context"
	"html"
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/gittest"
)

// TestTestPageShowsDiff submits, through gRPC, a test of two branches of
// a repository served over HTTP on loopback: the coordinator fetches
// both, and the test's page shows the diff between them, escaped; a test
// of one commit against another repository shows none.
func TestTestPageShowsDiff(t *testing.T) {
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "engine")
	repo.Commit("Depth 2", map[string]string{"Makefile": "all:\n\tcc -o engine engine.c\n", "engine.c": "int depth = 2;\n"})
	repo.Branch("dev")
	repo.Commit("Search <b>deeper</b>", map[string]string{"engine.c": "int depth = 3; /* </pre><script>alert(1)</script> */\n"})
	url := gittest.Serve(t, root) + "/engine"

	cl := newCluster(t, clusterOpts{books: bookDir})
	c := cl.dial(t, cl.client)
	spec := testSpec(t, 1000, 0, true)
	remote := func(name, ref string) *arbiterv1.EngineSpec {
		return &arbiterv1.EngineSpec{Name: name, Artifact: &arbiterv1.EngineArtifact{Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE,
			Repository: url, Branch: ref, Build: "make"}}
	}
	spec.EngineA, spec.EngineB = remote("dev", "dev"), remote("base", "main")
	resp, err := c.Jobs.SubmitMatch(context.Background(), &arbiterv1.SubmitMatchRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	j := resp.GetJob()
	a := j.GetMatch().GetEngineA().GetArtifact()
	if len(a.GetSha256()) != 64 || a.GetRepository() != url || a.GetBranch() != "dev" || a.GetMessage() != "Search <b>deeper</b> (Ada Tester)" {
		t.Errorf("engine A's artifact: %v", a)
	}
	page := cl.browser(t).get("/tests/" + j.GetJobId())
	for _, want := range []string{
		`<h2 id="diff-h">Diff</h2>`,
		"1 files, <span class=\"add\">+1</span> <span class=\"del\">-1</span>",
		html.EscapeString("Search <b>deeper</b> (Ada Tester)"),
		`<span class="d-del">-int depth = 2;</span>`,
		`<span class="d-add">&#43;int depth = 3; /* &lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt; */</span>`,
		`<span class="d-file">diff --git a/engine.c b/engine.c</span>`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("test page lacks %q", want)
			if i := strings.Index(page.body, "d-add"); i >= 0 {
				t.Logf("%s", page.body[i:min(len(page.body), i+200)])
			}
		}
	}
	if strings.Contains(page.body, "<script>alert") {
		t.Error("the diff is not escaped")
	}

	// A ref that does not exist: refused, naming it; no test made.
	count := func() int { jobs, _ := cl.c.Core.Jobs(0, nil); return len(jobs) }
	before := count()
	spec.EngineA = remote("dev", "no-such-branch")
	if _, err := c.Jobs.SubmitMatch(context.Background(), &arbiterv1.SubmitMatchRequest{Spec: spec}); err == nil ||
		!strings.Contains(err.Error(), `no branch, tag or commit "no-such-branch"`) {
		t.Errorf("a missing ref: %v", err)
	}
	if n := count(); n != before {
		t.Errorf("a refused test made a job: %d jobs, was %d", n, before)
	}
}
