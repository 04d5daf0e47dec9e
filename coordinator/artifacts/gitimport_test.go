package artifacts

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/srctree"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/gittest"
)

func remoteEngine(name, url, ref string) *arbiterv1.EngineSpec {
	return &arbiterv1.EngineSpec{Name: name, Artifact: &arbiterv1.EngineArtifact{Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE,
		Repository: url, Branch: ref, Build: "make", Bench: 42}}
}

// TestImportGit fetches two branches of a repository served over HTTP on
// loopback, stores each tree once, and shows the diff between them;
// unreachable repositories, missing refs and refused URLs store nothing.
func TestImportGit(t *testing.T) {
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "engine")
	mainCommit := repo.Commit("Engine: depth 2", map[string]string{"Makefile": "all:\n\tcc -o engine engine.c\n", "engine.c": "int depth = 2;\n"})
	repo.Branch("dev")
	devCommit := repo.Commit("Search one ply <deeper>", map[string]string{"engine.c": "int depth = 3;\n"})
	repo.Branch("big")
	repo.Commit("A big table", map[string]string{"table.c": strings.Repeat("0123456789abcdef,\n", 20000)})
	base := gittest.Serve(t, root)
	url := base + "/engine"

	f := newFixture(t, "")
	ctx := context.Background()
	dev, mainEngine := remoteEngine("dev", url, "dev"), remoteEngine("base", url, "main")
	if err := f.arts.ImportEngines(ctx, alice, dev, mainEngine); err != nil {
		t.Fatal(err)
	}
	a, err := f.arts.Resolve(dev.GetArtifact().GetSha256())
	if err != nil {
		t.Fatal(err)
	}
	if a.Commit != devCommit || a.Message != "Search one ply <deeper> (Ada Tester)" || a.Repository != url || a.Branch != "dev" ||
		a.Uploader != "alice" || a.Build != "make" || a.Bench != 42 || arbiterv1.ArtifactKind(a.Kind) != arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE {
		t.Errorf("dev artifact: %+v", a)
	}
	// The stored bytes are the commit's tree, unpacked as workers do.
	file, _, err := f.arts.Open(worker, a.SHA256, 0)
	if err != nil {
		t.Fatal(err)
	}
	unpacked := t.TempDir()
	if err := srctree.Unpack(file, unpacked, 1<<20); err != nil {
		t.Fatal(err)
	}
	file.Close()
	if b, _ := os.ReadFile(filepath.Join(unpacked, "engine.c")); string(b) != "int depth = 3;\n" {
		t.Errorf("dev tree: engine.c %q", b)
	}
	m, _ := f.arts.Resolve(mainEngine.GetArtifact().GetSha256())
	if m == nil || m.Commit != mainCommit || m.SHA256 == a.SHA256 {
		t.Errorf("main artifact: %+v", m)
	}
	// The same ref again: the same bytes, stored once.
	again := remoteEngine("dev2", url, devCommit)
	if err := f.arts.ImportEngines(ctx, bob, again); err != nil || again.GetArtifact().GetSha256() != a.SHA256 {
		t.Errorf("dev by its commit id: %v, %s", err, again.GetArtifact().GetSha256())
	}
	if list, _ := f.arts.List(0, 0); len(list) != 2 {
		t.Errorf("%d artifacts stored, want 2", len(list))
	}

	diff, truncated, err := f.arts.Diff(ctx, url, mainCommit, devCommit)
	if err != nil || truncated || !strings.Contains(diff, "-int depth = 2;\n+int depth = 3;\n") || !strings.Contains(diff, "engine.c | 2 +-") {
		t.Errorf("diff main..dev: %v, truncated %v:\n%s", err, truncated, diff)
	}
	bigEngine := remoteEngine("big", url, "big")
	if err := f.arts.ImportEngines(ctx, alice, bigEngine); err != nil {
		t.Fatal(err)
	}
	big, _ := f.arts.Resolve(bigEngine.GetArtifact().GetSha256())
	diff, truncated, err = f.arts.Diff(ctx, url, mainCommit, big.Commit)
	if err != nil || !truncated || len(diff) != MaxDiffBytes {
		t.Errorf("diff main..big: %v, truncated %v, %d bytes (cap %d)", err, truncated, len(diff), MaxDiffBytes)
	}
	if _, _, err := f.arts.Diff(ctx, url, "--output=/tmp/x", devCommit); err == nil {
		t.Error("diff of an option: no error")
	}

	// Bad input: a clear error, nothing stored, no mirror left behind.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String() + "/engine"
	closed.Close()
	stored, _ := f.arts.List(0, 0)
	for _, c := range []struct {
		name, url, ref, want string
		code                 apierr.Code
	}{
		{"unreachable", deadURL, "main", "cannot fetch the repository", apierr.FailedPrecondition},
		{"no such repository", base + "/nothing", "main", "cannot fetch the repository", apierr.FailedPrecondition},
		{"no such ref", url, "feature/none", `the repository has no branch, tag or commit "feature/none"`, apierr.NotFound},
		{"option as ref", url, "--upload-pack=touch /tmp/pwned", "not a branch, tag or commit name", apierr.InvalidArgument},
		{"password", "https://ada:hunter2@127.0.0.1/engine", "main", "password in the URL", apierr.InvalidArgument},
		{"file", "file://" + repo.Dir, "main", "--git-allow-file", apierr.InvalidArgument},
		{"ext", "ext::sh -c id", "main", "not a URL", apierr.InvalidArgument},
	} {
		e := remoteEngine("bad", c.url, c.ref)
		err := f.arts.ImportEngines(ctx, alice, e)
		ae, _ := apierr.As(err)
		if err == nil || ae == nil || ae.Code != c.code || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `engine "bad"`) {
			t.Errorf("%s: %v (code %v); want %v with %q naming the engine", c.name, err, codeOf(ae), c.code, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the password is in the error: %v", c.name, err)
		}
		if e.GetArtifact().GetSha256() != "" {
			t.Errorf("%s: a hash was set", c.name)
		}
	}
	if list, _ := f.arts.List(0, 0); len(list) != len(stored) {
		t.Errorf("bad input stored artifacts: %d, was %d", len(list), len(stored))
	}
	mirrors, _ := os.ReadDir(f.arts.gitDir())
	if len(mirrors) != 1 {
		t.Errorf("%d mirrors, want the one of the repository that was read", len(mirrors))
	}
	// A worker credential does not fetch.
	if err := f.arts.ImportEngines(ctx, worker, remoteEngine("w", url, "main")); err == nil {
		t.Error("a worker's import: no error")
	}
	// Without the import, the job names a repository and no hash: Fill
	// says what went wrong.
	if err := f.arts.Fill("engine_a", remoteEngine("x", url, "main").GetArtifact()); err == nil || !strings.Contains(err.Error(), "was not fetched") {
		t.Errorf("Fill of an unfetched git engine: %v", err)
	}
}

func codeOf(e *apierr.Error) any {
	if e == nil {
		return nil
	}
	return e.Code
}

// TestGitDestinationPolicy: a fetch goes where a submitter's URL says,
// so loopback, private and link-local destinations are refused unless
// the operator allows them (--git-allow), whether the URL names the
// address or a name that resolves to it; nothing is made for a refused
// repository. Allowed, a name is fetched through the address that was
// checked (git is pinned to it).
func TestGitDestinationPolicy(t *testing.T) {
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "engine")
	repo.Commit("Engine", map[string]string{"Makefile": "all:\n\tcc -o engine engine.c\n", "engine.c": "int depth = 2;\n"})
	base := gittest.Serve(t, root) // http://127.0.0.1:PORT/git
	port := strings.TrimPrefix(strings.Split(strings.TrimPrefix(base, "http://"), "/")[0], "127.0.0.1:")
	// A name of this machine that is not "localhost" and resolves to
	// loopback (the host name, through /etc/hosts), as a rebinding DNS
	// would answer.
	name, _ := os.Hostname()
	addrs, _ := net.LookupHost(name)
	loopName := len(addrs) > 0 && net.ParseIP(addrs[0]).IsLoopback() && !strings.EqualFold(name, "localhost")

	ctx := context.Background()
	strict := newFixtureGit(t, "", GitConfig{})
	cases := []struct{ url, want string }{
		{base + "/engine", "host 127.0.0.1 is a loopback address, refused (the operator allows such destinations with --git-allow)"},
		{"http://localhost:" + port + "/git/engine", "host localhost is this machine, refused"},
		{"https://10.1.2.3/engine.git", "host 10.1.2.3 is a private address, refused"},
		{"ssh://169.254.169.254/engine.git", "host 169.254.169.254 is a link-local address, refused"},
		{"git@[::1]:engine.git", "host ::1 is a loopback address, refused"},
		{"git://0.0.0.0/engine.git", "host 0.0.0.0 is an unspecified address, refused"},
	}
	if loopName {
		cases = append(cases, struct{ url, want string }{"http://" + name + ":" + port + "/git/engine",
			"host " + name + " resolves to " + addrs[0] + ", which is a loopback address, refused"})
	}
	for _, c := range cases {
		e := remoteEngine("dev", c.url, "main")
		err := strict.arts.ImportEngines(ctx, alice, e)
		ae, _ := apierr.As(err)
		if err == nil || ae == nil || ae.Code != apierr.InvalidArgument || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "source=git:"+c.url) {
			t.Errorf("%s: %v; want InvalidArgument with %q naming the URL", c.url, err, c.want)
		}
	}
	if mirrors, _ := os.ReadDir(strict.arts.gitDir()); len(mirrors) != 0 {
		t.Errorf("%d mirrors made for refused repositories", len(mirrors))
	}
	if list, _ := strict.arts.List(0, 0); len(list) != 0 {
		t.Errorf("refused repositories stored %d artifacts", len(list))
	}
	if _, err := New(ctx, Config{Store: strict.st, Dir: t.TempDir(), Git: GitConfig{Allow: []string{"10.0.0.0/33"}}}); err == nil ||
		!strings.Contains(err.Error(), "--git-allow 10.0.0.0/33: not a CIDR") {
		t.Errorf("a bad --git-allow: %v", err)
	}

	// Allowed by address: a name that resolves there is fetched, pinned
	// to the address checked.
	allowed := newFixtureGit(t, "", GitConfig{Allow: []string{"127.0.0.0/8"}})
	if err := allowed.arts.ImportEngines(ctx, alice, remoteEngine("dev", base+"/engine", "main")); err != nil {
		t.Errorf("allowed address: %v", err)
	}
	if !loopName {
		t.Logf("host name %s does not resolve to loopback: the name's case is not run", name)
		return
	}
	named := "http://" + name + ":" + port + "/git/engine"
	pin, fetchURL, err := allowed.arts.pinDestination(ctx, named)
	if err != nil || pin == nil || pin.resolve != name+":"+port+":"+addrs[0] || fetchURL != named {
		t.Errorf("pin of %s: %+v %s %v", named, pin, fetchURL, err)
	}
	if err := allowed.arts.ImportEngines(ctx, alice, remoteEngine("dev", named, "main")); err != nil {
		t.Errorf("allowed name, pinned: %v", err)
	}
}
