package artifactclient

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

func TestPackDirIsReproducible(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("engine:\n\tcc -o engine main.c\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src", ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "main.c"), []byte("int main(void){return 0;}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", ".git", "HEAD"), []byte("ref\n"), 0o644)
	a, err := Pack(enginespec.Spec{Name: "e", Source: dir, Build: "make"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// Touching files changes no byte of the pack: the same tree is
	// stored once.
	now := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "Makefile"), now, now)
	b, err := Pack(enginespec.Spec{Name: "e", Source: dir, Build: "make"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.SHA256 != b.SHA256 || a.Request.GetSha256() != a.SHA256 || a.Request.GetSize() != uint64(a.Size) {
		t.Fatalf("packs differ: %s %s", a.SHA256, b.SHA256)
	}
	if _, err := Pack(enginespec.Spec{Name: "e", Upload: dir}); err == nil {
		t.Fatal("a directory packed as a program")
	}
}

func TestPackGitRecordsTheCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.c"), []byte("int main(void){return 0;}\n"), 0o644)
	run("add", ".")
	run("commit", "-qm", "First version\n\nBench: 1234")
	run("checkout", "-qb", "patch")
	os.WriteFile(filepath.Join(repo, "a.c"), []byte("int main(void){return 1;}\n"), 0o644)
	run("commit", "-qam", "Return one")
	p, err := Pack(enginespec.Spec{Name: "base", Source: "git:" + repo + "@main", Build: "make"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := p.Request
	if len(r.GetCommit()) != 40 || r.GetMessage() != "First version" || r.GetBranch() != "main" || r.GetRepository() == "" {
		t.Fatalf("recorded %+v", r)
	}
	q, err := Pack(enginespec.Spec{Name: "patch", Source: "git:" + repo + "@patch", Build: "make"})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if q.SHA256 == p.SHA256 || q.Request.GetMessage() != "Return one" {
		t.Fatalf("patch pack %s %q", q.SHA256, q.Request.GetMessage())
	}
	for _, bad := range []string{"git:" + repo + "@-x", "git:" + repo + "@nosuchref"} {
		if _, err := Pack(enginespec.Spec{Name: "x", Source: bad, Build: "make"}); err == nil {
			t.Fatalf("%s packed", bad)
		}
	}
}
