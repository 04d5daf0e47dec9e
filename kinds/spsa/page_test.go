package spsa

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The page's template from the kind (templates/tune.html), rendered by
// coordinator/web's layout (web.Render) with the data renderPage fills in.

// TestTunePageShowsArtifact: a tune of an uploaded engine names its
// artifact as a test's page does; a tune of the embedded engine names none.
func TestTunePageShowsArtifact(t *testing.T) {
	sha := strings.Repeat("cd", 32)
	render := func(e *arbiterv1.EngineSpec) string {
		t.Helper()
		job := &arbiterv1.Job{JobId: "t1", Kind: "spsa", Spsa: &arbiterv1.SpsaSpec{Engine: e},
			SpsaProgress: &arbiterv1.SpsaProgress{}, Progress: &arbiterv1.JobProgress{}}
		var buf bytes.Buffer
		if err := web.Render(&buf, "tune", "tune", &pageData{Job: job, State: "running"}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	html := render(&arbiterv1.EngineSpec{Name: "dev", Args: []string{"uci"}, Artifact: &arbiterv1.EngineArtifact{Sha256: sha,
		Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY, Name: "dev-engine", Platform: "linux/amd64"}})
	if want := "<dt>Artifact</dt><dd><code>dev " + sha + ", binary &#34;dev-engine&#34; for linux/amd64"; !strings.Contains(html, want) {
		t.Errorf("the page lacks %q", want)
	}
	if html := render(&arbiterv1.EngineSpec{Name: "dev", Command: "embedded"}); strings.Contains(html, "<dt>Artifact</dt>") {
		t.Error("a tune of the embedded engine shows an artifact")
	}
}
