//go:build unix

package e2e

// Limits of the coordinator's git fetches, end to end: a coordinator
// process fetching from real git servers on loopback (git http-backend),
// a worker process building what it stored. A 300 MB repository is
// refused while it streams, by the byte limit (admin) or by a client's
// disk quota; a server that accepts and never answers is given up after
// --git-stall; nothing of either stays on the coordinator's disk. The
// control: a small repository, spelled three ways, is fetched into one
// mirror and its engine plays a match.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/gitsource"
	"github.com/arbiter-chess/arbiter/testing/gittest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

func TestGitFetchLimits(t *testing.T) {
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range []string{"Makefile", "tinyuci.c"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	root := t.TempDir()
	gittest.NewRepo(t, root, "tinyuci").Commit("tinyuci", files)
	// Served as forges serve a repository: with and without ".git".
	if err := os.Symlink("tinyuci", filepath.Join(root, "tinyuci.git")); err != nil {
		t.Fatal(err)
	}
	const bigBytes = 300 << 20
	started := time.Now()
	big := gittest.NewRepo(t, root, "big")
	big.Commit("tinyuci", files)
	big.CommitRandom("300 MB of weights", "weights.bin", bigBytes)
	t.Logf("made the 300 MB repository in %v", time.Since(started).Round(time.Millisecond))
	// 100 MB/s: a fast link (loopback's gigabytes a second would bring
	// the whole repository between two looks at the mirror).
	gitURL, sent := gittest.ServeCounting(t, root, 100<<20)
	silentURL := gittest.ServeSilent(t)
	built := filepath.Join(t.TempDir(), "engine")
	if out, err := exec.Command("make", "-s", "-C", src, "EXE="+built).CombinedOutput(); err != nil {
		t.Fatalf("make: %v: %s", err, out)
	}
	bench := benchOf(t, built)

	// The stall is long enough for a loaded machine's git to start
	// sending; the silent server waits it out.
	const maxBytes, diskQuota, stall = 50 << 20, 30 << 20, 8 * time.Second
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--git-allow", "127.0.0.1", "--git-max-bytes", strconv.Itoa(maxBytes),
		"--max-disk-bytes-per-identity", strconv.Itoa(diskQuota), "--git-stall", stall.String())
	client := []string{"--coordinator", addr, "--token", newCredential(t, addr, "client")}
	mirrors := filepath.Join(data, "artifacts", "git")
	submitGit := func(who []string, repo string) (string, int, time.Duration) {
		t.Helper()
		args := append([]string{"submit", "match"}, who...)
		args = append(args, "--engine", "name=dev,source=git:"+repo+"@main,build=make EXE=engine,bench="+bench,
			"--engine", "name=base,builtin", "--each", "nodes=500", "--openings", "file="+book+",order=random,seed=5", "--games", "2")
		start := time.Now()
		out, code := cli(t, args...)
		return out, code, time.Since(start)
	}
	refused := func(what string, who []string, repo string, within time.Duration, want ...string) {
		t.Helper()
		before := sent()
		out, code, took := submitGit(who, repo)
		if code == 0 {
			t.Fatalf("%s: accepted:\n%s", what, out)
		}
		for _, w := range append(want, gitsource.Redact(repo)) {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the refusal lacks %q:\n%s", what, w, out)
			}
		}
		if took > within {
			t.Errorf("%s: refused after %v, want within %v", what, took.Round(time.Millisecond), within)
		}
		if n := countDirs(t, mirrors); n != 0 {
			t.Errorf("%s: %d mirrors left on disk", what, n)
		}
		if leftovers, _ := filepath.Glob(filepath.Join(data, "artifacts", "partial", "*")); len(leftovers) != 0 {
			t.Errorf("%s: partial files left: %v", what, leftovers)
		}
		t.Logf("%s: refused after %v, the server sent %d MB of %d:\n%s", what, took.Round(time.Millisecond),
			(sent()-before)>>20, bigBytes>>20, strings.TrimSpace(out))
	}

	// The 300 MB repository: stopped at the byte limit (the admin has no
	// disk quota), then at the client's disk quota, while it streams.
	for _, c := range []struct {
		who     []string
		limit   int64
		wantErr string
	}{{clientArgs(addr), maxBytes, "--git-max-bytes"}, {client, diskQuota, "--max-disk-bytes-per-identity"}} {
		before := sent()
		refused("300 MB repository, limit "+c.wantErr, c.who, gitURL+"/big", 2*time.Minute, "too large", c.wantErr)
		if got := sent() - before; got > c.limit+64<<20 {
			t.Errorf("the server sent %d bytes for a fetch limited to %d: not stopped while streaming", got, c.limit)
		}
	}
	// A server that accepts and never answers.
	refused("silent server", clientArgs(addr), silentURL+"/engine", stall+20*time.Second, "does not answer", "--git-stall")

	// Control: the small repository, in three spellings, one mirror; the
	// client's engine from it plays its match.
	startWorkerIn(t, addr, "w1")
	var id string
	for _, spelling := range []string{gitURL + "/tinyuci", gitURL + "/tinyuci.git", gitURL + "/tinyuci/"} {
		out, code, took := submitGit(client, spelling)
		if code != 0 {
			t.Fatalf("submit with %s: exit %d:\n%s", spelling, code, out)
		}
		id = jobID(out)
		t.Logf("%s: fetched and submitted in %v as %s", spelling, took.Round(time.Millisecond), id)
		if n := countDirs(t, mirrors); n != 1 {
			t.Fatalf("after %s: %d mirrors, want 1", spelling, n)
		}
	}
	waitFor(t, dial(t, addr, token), id, 4*time.Minute, "the match of the fetched engine", done)
}

func countDirs(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			n++
		}
	}
	return n
}

// TestGitSilentServerAtDefaults: with the coordinator's default flags, a
// submit naming a server that accepts and never answers is refused after
// the documented --git-stall (30 s), naming the flag, well before
// --git-timeout (2 min); no mirror stays.
func TestGitSilentServerAtDefaults(t *testing.T) {
	silentURL := gittest.ServeSilent(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--git-allow", "127.0.0.1")
	args := append([]string{"submit", "match"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=dev,source=git:"+silentURL+"/engine@main,build=make", "--engine", "name=base,builtin",
		"--each", "nodes=500", "--openings", "file="+book, "--games", "2")
	start := time.Now()
	out, code := cli(t, args...)
	took := time.Since(start)
	if code == 0 || !strings.Contains(out, "--git-stall") || !strings.Contains(out, silentURL) {
		t.Fatalf("exit %d after %v:\n%s", code, took, out)
	}
	if took < 30*time.Second || took > 30*time.Second+30*time.Second {
		t.Fatalf("refused after %v, want about 30 s (--git-stall's default)", took)
	}
	if n := countDirs(t, filepath.Join(data, "artifacts", "git")); n != 0 {
		t.Fatalf("%d mirrors left", n)
	}
	t.Logf("refused after %v:\n%s", took.Round(time.Millisecond), strings.TrimSpace(out))
}
