package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestTunePageShowsArtifact: a tune of an uploaded engine names its
// artifact as a test's page does; a tune of the embedded engine names none.
func TestTunePageShowsArtifact(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.Repeat("cd", 32)
	render := func(e *arbiterv1.EngineSpec) string {
		t.Helper()
		job := &arbiterv1.Job{JobId: "t1", Kind: "spsa", Spsa: &arbiterv1.SpsaSpec{Engine: e},
			SpsaProgress: &arbiterv1.SpsaProgress{}, Progress: &arbiterv1.JobProgress{}}
		var buf bytes.Buffer
		v := &view{Title: "tune", Now: time.Now(), Page: &tuneData{Job: job, State: "running"}}
		if err := pages["tune"].ExecuteTemplate(&buf, "layout", v); err != nil {
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
