package test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The page's template from the kind (templates/test.html), rendered by
// coordinator/web's layout (web.Render) with the data renderPage fills in.

// TestTestPageShowsArtifacts: a test of uploaded engines names each
// artifact (hash, build, commit, bench) and what every worker did with it,
// with a refusal's log, escaped.
func TestTestPageShowsArtifacts(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	job := &arbiterv1.Job{JobId: "s1", Kind: "sprt", Match: &arbiterv1.MatchSpec{
		EngineA: &arbiterv1.EngineSpec{Name: "dev", Artifact: &arbiterv1.EngineArtifact{Sha256: sha,
			Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE, Build: "make EXE=engine", Name: "src", Commit: "66e82babd679aa", Message: "Search deeper", Bench: 11517}},
		EngineB: &arbiterv1.EngineSpec{Name: "base", Command: "/usr/games/stockfish"}},
		MatchProgress: &arbiterv1.MatchProgress{}, Progress: &arbiterv1.JobProgress{},
		ArtifactChecks: []*arbiterv1.ArtifactCheck{
			{WorkerName: "w1", Engine: "dev", Sha256: sha, State: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, Bench: 11517},
			{WorkerName: "w2", Engine: "dev", Sha256: sha, State: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILD_FAILED,
				Detail: "make exited 2", Log: "main.c:1: error: <script>"},
		}}
	var buf bytes.Buffer
	if err := web.Render(&buf, "test", "test", &pageData{Job: job, State: "running"}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{
		"dev " + sha + ", source tree &#34;src&#34; built by &#34;make EXE=engine&#34; into engine, commit 66e82babd679 &#34;Search deeper&#34;, bench 11517",
		"<td>w1</td><td>dev</td><td>verified</td><td class=\"num\">11517</td>",
		"<td>w2</td><td>dev</td><td>REFUSED (build failed)</td>",
		"make exited 2", "main.c:1: error: &lt;script&gt;",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(html, "Artifact B") {
		t.Error("engine B has no artifact, yet the page shows one")
	}
}

// TestTestPageShowsNets: each side's net (hash, name, size, option) and
// what every worker did with it.
func TestTestPageShowsNets(t *testing.T) {
	sha := strings.Repeat("cd", 32)
	job := &arbiterv1.Job{JobId: "s2", Kind: "match", Match: &arbiterv1.MatchSpec{
		EngineA: &arbiterv1.EngineSpec{Name: "nnue", Command: "embedded", Protocol: "builtin",
			Net: &arbiterv1.EngineNet{Sha256: sha, Name: "nn-cdcdcdcdcdcd.nnue", Size: 197440}},
		EngineB: &arbiterv1.EngineSpec{Name: "classic", Command: "embedded", Protocol: "builtin"}},
		MatchProgress: &arbiterv1.MatchProgress{}, Progress: &arbiterv1.JobProgress{},
		ArtifactChecks: []*arbiterv1.ArtifactCheck{
			{WorkerName: "w1", Engine: "nnue net", Sha256: sha, State: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED,
				Detail: `engine "nnue" rejects net cdcdcdcdcdcd: truncated or not a net`},
		}}
	var buf bytes.Buffer
	if err := web.Render(&buf, "test", "test", &pageData{Job: job, State: "running"}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{
		"<dt>Net A</dt><dd><code>cdcdcdcdcdcd nn-cdcdcdcdcdcd.nnue (197440 bytes) via EvalFile</code></dd>",
		"Uploaded engines and nets on the workers",
		"<td>w1</td><td>nnue net</td><td>REFUSED</td>",
		"rejects net cdcdcdcdcdcd: truncated or not a net",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(html, "Net B") {
		t.Error("engine B has no net, yet the page shows one")
	}
}
