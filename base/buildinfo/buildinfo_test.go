package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/arbiter-chess/arbiter", Version: ""},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "1af7f55c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a"},
			{Key: "vcs.time", Value: "2026-11-30T09:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	in := FromBuildInfo(bi)
	if in.Version != "(devel)" || in.Revision != "1af7f55c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a" || !in.Modified || in.Time != "2026-11-30T09:00:00Z" {
		t.Fatalf("%+v", in)
	}
	if got, want := in.Short(), "(devel) 1af7f55c2d3e+modified"; got != want {
		t.Errorf("Short() = %q, want %q", got, want)
	}
	for _, want := range []string{"arbiter (devel)\n", "revision: 1af7f55c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a\n", "modified: true\n", "go:       go1.26.0\n"} {
		if !strings.Contains(in.String(), want) {
			t.Errorf("String() lacks %q:\n%s", want, in.String())
		}
	}
	clean := FromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}})
	if clean.Short() != "v1.2.3" || !strings.Contains(clean.String(), "revision: unknown") {
		t.Errorf("without VCS: %q\n%s", clean.Short(), clean.String())
	}
}

// A binary built as make build builds it reports the commit git reports
// (in a clone; the Go toolchain stamps nothing in a git worktree, whose
// .git is a file, and the binary then says the revision is unknown).
func TestBuiltBinaryCarriesRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "revision: " + strings.TrimSpace(string(head))
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		want = "revision: unknown"
	}
	bin := filepath.Join(t.TempDir(), "arbiter")
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "../../cmd/arbiter")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("arbiter --version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), want) {
		t.Errorf("arbiter --version lacks %q:\n%s", want, out)
	}
}
