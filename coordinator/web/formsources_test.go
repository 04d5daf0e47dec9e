//go:build unix

package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/gittest"
)

// TestFormGitSources posts the submit form over HTTP (no browser) with
// engines from a git repository served on loopback: the preview shows
// the diff and makes no test; a missing branch, a local path and a
// malformed ref are refused beside the field they are about, making no
// test; a preview of engines from two repositories says what it needs.
// The shortcut fills the form only from a repository a test used.
func TestFormGitSources(t *testing.T) {
	root, deep, _ := tinyRepo(t)
	repoURL := gittest.Serve(t, root) + "/tinyuci"
	cl := newCluster(t, clusterOpts{books: bookDir})
	b := cl.browser(t)
	b.signIn(cl.client)
	jobCount := func() int { jobs, _ := cl.c.Core.Jobs(0, nil); return len(jobs) }
	form := func(refA, repoB string) url.Values {
		return url.Values{"csrf": {b.csrf()}, "kind": {"match"}, "games": {"8"}, "each": {"nodes=1000"}, "book": {"uho-200.epd"},
			"engine_a": {"name=dev,build=make EXE=engine"}, "engine_a_repo": {repoURL}, "engine_a_ref": {refA},
			"engine_b": {"name=base,build=make EXE=engine"}, "engine_b_repo": {repoB}, "engine_b_ref": {"main"}}
	}
	r := b.post("/submit/preview", form("dev", repoURL))
	if r.status != http.StatusOK || !strings.Contains(r.body, `<div id="preview">`) || !strings.Contains(r.body, "&#43;\t\t\t"+html.EscapeString(deep)) {
		t.Fatalf("preview: %d\n%s", r.status, r.body)
	}
	for _, c := range []struct {
		path, refA, repoB, field, want string
	}{
		{"/submit/test", "no-such-branch", repoURL, "engine_a_git", "no branch, tag or commit &#34;no-such-branch&#34;"},
		{"/submit/test", "bad..ref", repoURL, "engine_a_git", "not a branch, tag or commit name"},
		{"/submit/test", "dev", "/home/me/engine", "engine_b_git", "not a URL"},
		{"/submit/preview", "dev", "", "engine_a_git", "give both engines the same repository"},
	} {
		r := b.post(c.path, form(c.refA, c.repoB))
		marker := `id="` + c.field + `-error" role="alert">`
		i := strings.Index(r.body, marker)
		if i < 0 || !strings.Contains(r.body[i:min(len(r.body), i+400)], c.want) {
			t.Errorf("%s with ref %q, engine B %q: no %q beside %s: %d\n%s", c.path, c.refA, c.repoB, c.want, c.field, r.status, r.body)
		}
	}
	if n := jobCount(); n != 0 {
		t.Errorf("previews and refused forms made %d jobs", n)
	}
	// The shortcut knows no repository yet.
	if r := b.get("/submit?repo=" + url.QueryEscape(repoURL) + "&branch=dev"); strings.Contains(r.body, `id="shortcut-form"`) ||
		strings.Contains(r.body, `value="`+repoURL+`"`) {
		t.Errorf("the shortcut offers or fills a repository no test used")
	}
	// Control: the same form with good refs makes the test.
	if r := b.post("/submit/test", form("dev", repoURL)); r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/tests/s") {
		t.Errorf("a good form: %d %s\n%s", r.status, r.location, r.body)
	}
	// Now it does: it fills the form from it, and from nothing else.
	r = b.get("/submit?repo=" + url.QueryEscape(repoURL) + "&branch=dev")
	for _, want := range []string{`<option>` + repoURL + `</option>`, `id="engine_a_repo" name="engine_a_repo" value="` + repoURL + `"`,
		`id="engine_a_ref" name="engine_a_ref" value="dev"`, `id="engine_b_ref" name="engine_b_ref" value="HEAD"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the shortcut's page lacks %q", want)
		}
	}
	if r := b.get("/submit?repo=" + url.QueryEscape("https://example.org/other.git") + "&branch=dev"); strings.Contains(r.body, `value="https://example.org/other.git"`) {
		t.Errorf("the shortcut filled a repository no test used")
	}
}
