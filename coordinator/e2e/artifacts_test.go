//go:build unix

package e2e

// Uploaded engines end to end: a coordinator and two worker processes on
// loopback whose working directories hold no engine; an SPRT between a
// copy of Stockfish (uploaded, then deleted here) and a small C engine
// uploaded as source and built by each worker; the second test finds both
// in the workers' caches. Refusals (a wrong bench, a tree that does not
// build, bytes corrupted on the coordinator) end with nothing counted.

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

const stockfish = "/usr/games/stockfish"

// startWorkerIn starts a worker process in its own working directory (an
// empty one: no engine in it) with its data directory under it.
func startWorkerIn(t *testing.T, addr, name string, extra ...string) (*proc, string) {
	t.Helper()
	return startWorkerAt(t, t.TempDir(), addr, workerToken(t, addr), name, extra...)
}

// startWorkerAt starts a worker process in dir (its data directory under
// it) with the credential tok.
func startWorkerAt(t *testing.T, dir, addr, tok, name string, extra ...string) (*proc, string) {
	t.Helper()
	args := append([]string{"worker", "--coordinator", addr, "--token", tok, "--threads", "1", "--hash", "16",
		"--log-level", "info", "--name", name, "--data", filepath.Join(dir, "data"), "--allow-uploads"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: &out}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, lastLines(out.String(), 40))
		}
	})
	return p, dir
}

// metric reads one sample of the coordinator's /metrics ("name{labels}").
func metric(t *testing.T, httpAddr, sample string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no sample %s in /metrics", sample)
	return 0
}

// benchOf runs a program's bench here, as its author does to give the
// signature.
func benchOf(t *testing.T, exe string) string {
	t.Helper()
	out, err := exec.Command(exe, "bench").CombinedOutput()
	if err != nil {
		t.Fatalf("%s bench: %v: %s", exe, err, out)
	}
	m := regexp.MustCompile(`Nodes searched\s*:\s*(\d+)`).FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		t.Fatalf("%s bench: no node count: %s", exe, out)
	}
	return m[len(m)-1][1]
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestUploadedEnginesSPRT(t *testing.T) {
	if _, err := os.Stat(stockfish); err != nil {
		t.Skip("no " + stockfish)
	}
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	// The signatures, as the engines' authors would give them.
	tinyDir := t.TempDir()
	if out, err := exec.Command("make", "-s", "-C", src, "EXE="+filepath.Join(tinyDir, "engine")).CombinedOutput(); err != nil {
		t.Fatalf("make: %v: %s", err, out)
	}
	tinyBench := benchOf(t, filepath.Join(tinyDir, "engine"))
	sfBench := benchOf(t, stockfish)
	t.Logf("signatures: tinyuci %s, stockfish %s", tinyBench, sfBench)

	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr)
	var workers []*proc
	for _, name := range []string{"w1", "w2"} {
		p, _ := startWorkerIn(t, addr, name)
		workers = append(workers, p)
	}

	sfCopy := filepath.Join(t.TempDir(), "stockfish-copy")
	copyFile(t, stockfish, sfCopy)
	runTest := func(extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"submit", "sprt"}, clientArgs(addr)...)
		args = append(args, "--engine", "name=tiny,source="+src+",build=make EXE=engine,bench="+tinyBench,
			"--engine", "name=sf,upload="+sfCopy+",bench="+sfBench,
			"--each", "nodes=1000", "--openings", "file="+book+",order=random,seed=5",
			"--sprt", "elo0=0,elo1=100,alpha=0.1,beta=0.1,model=logistic", "--batch-pairs", "4", "--wait")
		args = append(args, extra...)
		out, code := cli(t, args...)
		if code != 0 || !strings.Contains(out, "accepted") {
			t.Fatalf("submit sprt --wait: exit %d:\n%s", code, out)
		}
		i := strings.Index(out, "Test:")
		if i < 0 {
			t.Fatalf("no test in:\n%s", out)
		}
		return strings.Fields(out[i:])[1], out
	}
	start0 := time.Now()
	id, out := runTest()
	t.Logf("first SPRT decided in %v:\n%s", time.Since(start0).Round(time.Millisecond), out)
	// The upload is done: the program here is not needed any more.
	if err := os.Remove(sfCopy); err != nil {
		t.Fatal(err)
	}
	conn := dial(t, addr, token)
	j := getJob(t, conn, id)
	if !done(j) {
		t.Fatalf("job %v", j.GetState())
	}
	for _, e := range []*arbiterv1.EngineSpec{j.GetMatch().GetEngineA(), j.GetMatch().GetEngineB()} {
		if a := e.GetArtifact(); len(a.GetSha256()) != 64 || a.GetBench() == 0 || e.GetCommand() != "" {
			t.Fatalf("engine %s: artifact %v, command %q", e.GetName(), a, e.GetCommand())
		}
	}
	verified := map[string]bool{}
	for _, c := range j.GetArtifactChecks() {
		if c.GetState() == arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED {
			verified[c.GetWorkerName()+"/"+c.GetEngine()] = true
		}
	}
	if !verified["w1/tiny"] && !verified["w2/tiny"] || !verified["w1/sf"] && !verified["w2/sf"] {
		t.Fatalf("no worker verified both engines: %v", j.GetArtifactChecks())
	}
	status, code := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	if code != 0 || !strings.Contains(status, "Uploaded engines and nets on the workers") || !strings.Contains(status, "bench matches the signature") {
		t.Fatalf("status: %d %s", code, status)
	}
	t.Logf("status:\n%s", status)
	downloads := metric(t, httpAddr, `arbiter_artifact_downloads_total{kind="new"}`)
	builds := metric(t, httpAddr, `arbiter_artifact_builds_total{outcome="ok"}`)
	if builds < 1 || builds > 2 || downloads < 2 || downloads > 4 {
		t.Fatalf("after the first test: %v downloads, %v builds", downloads, builds)
	}
	// Again, with the program deleted here: the coordinator has it, the
	// workers' caches have the downloads and the builds.
	sfCopy2 := filepath.Join(t.TempDir(), "stockfish-copy")
	copyFile(t, stockfish, sfCopy2)
	sfCopy = sfCopy2
	id2, _ := runTest()
	if d, b := metric(t, httpAddr, `arbiter_artifact_downloads_total{kind="new"}`), metric(t, httpAddr, `arbiter_artifact_builds_total{outcome="ok"}`); d != downloads || b != builds {
		t.Fatalf("the second test downloaded %v and built %v more", d-downloads, b-builds)
	}
	t.Logf("second test %s: no download or build; verified %v", id2, verified)
	for i, w := range workers {
		log := w.out.String()
		t.Logf("worker %d: %d downloads, %d builds logged", i+1, strings.Count(log, "artifact downloaded"), strings.Count(log, "uploaded engine built"))
	}
}

// waitRefused waits until every one of workers reported a refusal of engine
// in test id, and returns the job.
func waitRefused(t *testing.T, addr, id, engine string, workers int) *arbiterv1.Job {
	t.Helper()
	conn := dial(t, addr, token)
	return waitFor(t, conn, id, 3*time.Minute, "refusals of "+engine, func(j *arbiterv1.Job) bool {
		n := 0
		for _, c := range j.GetArtifactChecks() {
			switch c.GetState() {
			case arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BUILD_FAILED,
				arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_BENCH_MISMATCH:
				if c.GetEngine() == engine {
					n++
				}
			}
		}
		return n >= workers
	})
}

func requireTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"cc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
}

// A wrong bench signature, a tree that does not build and bytes corrupted
// on the coordinator each end in a refusal by every worker, shown by
// status with the reason and the log, and nothing counted.
func TestUploadedEngineRefusals(t *testing.T) {
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	startWorkerIn(t, addr, "w1")
	startWorkerIn(t, addr, "w2")
	submit := func(dev string) string {
		t.Helper()
		args := append([]string{"submit", "match"}, clientArgs(addr)...)
		args = append(args, "--engine", dev, "--engine", "name=base,builtin", "--each", "nodes=500",
			"--openings", "file="+book+",order=random,seed=5", "--games", "8")
		out, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	status := func(id string) string {
		t.Helper()
		out, code := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
		if code != 0 {
			t.Fatalf("status: %d %s", code, out)
		}
		return out
	}
	cases := []struct {
		name, engine, want string
	}{
		{"wrong bench", "name=dev,source=" + src + ",build=make EXE=engine,bench=1", "bench 11517 nodes, the test's signature is 1"},
	}
	broken := t.TempDir()
	os.WriteFile(filepath.Join(broken, "Makefile"), []byte("engine: engine.c\n\tcc -o engine engine.c\n"), 0o644)
	os.WriteFile(filepath.Join(broken, "engine.c"), []byte("int main(void) { return missing_symbol; }\n"), 0o644)
	cases = append(cases, struct{ name, engine, want string }{"no build", "name=dev,source=" + broken + ",build=make", "missing_symbol"})
	// Bytes that rot on the coordinator's disk after the upload.
	rot := filepath.Join(t.TempDir(), "rotten")
	copyFile(t, bin, rot)
	out, code := cli(t, append([]string{"engine", "upload", rot, "--name", "rotten"}, clientArgs(addr)...)...)
	if code != 0 {
		t.Fatalf("upload: %d %s", code, out)
	}
	sha := strings.Fields(strings.SplitN(out, "sha256:", 2)[1])[0]
	obj := filepath.Join(data, "artifacts", "objects", sha)
	f, err := os.OpenFile(obj, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("rot"), 1000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cases = append(cases, struct{ name, engine, want string }{"hash mismatch", "name=dev,artifact=" + sha[:12], "hash mismatch"})
	for _, tc := range cases {
		id := submit(tc.engine)
		j := waitRefused(t, addr, id, "dev", 2)
		if g := j.GetMatchProgress().GetGames(); g != 0 {
			t.Errorf("%s: %d games counted", tc.name, g)
		}
		st := status(id)
		if !strings.Contains(st, "REFUSED") || !strings.Contains(st, tc.want) {
			t.Errorf("%s: status does not show the refusal (%q):\n%s", tc.name, tc.want, st)
		}
		t.Logf("%s: status:\n%s", tc.name, st)
		cli(t, append([]string{"cancel", id}, clientArgs(addr)...)...)
	}
}

// An engine that allocates without bound, and one that starts a process,
// are killed by the workers' limits: each game is an incident of kind
// LIMIT (a loss), and the test goes on to its end.
func TestUploadedEngineLimits(t *testing.T) {
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	startWorkerIn(t, addr, "w1", "--engine-memory-mb", "64")
	for _, flavour := range []string{"HOG", "FORK"} {
		args := append([]string{"submit", "match"}, clientArgs(addr)...)
		args = append(args, "--engine", "name=bad,source="+src+",build=make EXE=engine CFLAGS=-D"+flavour,
			"--engine", "name=good,source="+src+",build=make EXE=engine", "--each", "nodes=500",
			"--openings", "file="+book+",order=random,seed=5", "--games", "4", "--wait")
		out, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", flavour, code, out)
		}
		i := strings.Index(out, "Test:")
		id := strings.Fields(out[i:])[1]
		j := getJob(t, dial(t, addr, token), id)
		mp := j.GetMatchProgress()
		if !done(j) || mp.GetGames() != 4 || mp.GetWins() != 0 {
			t.Fatalf("%s: %v, %d games, %d wins:\n%s", flavour, j.GetState(), mp.GetGames(), mp.GetWins(), out)
		}
		var kills uint64
		for _, w := range mp.GetWorkers() {
			kills += w.GetLimitKills()
		}
		if kills < 4 {
			t.Fatalf("%s: %d limit kills recorded, want one per game:\n%s", flavour, kills, out)
		}
		t.Logf("%s:\n%s", flavour, out[i:])
	}
}

// A worker SIGKILLed in the middle of a source build starts the build over
// when it comes back with the same data directory, leaves nothing half
// built, and the test ends with every game counted.
func TestUploadedEngineWorkerKilledMidBuild(t *testing.T) {
	requireTools(t)
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	dir, tok := t.TempDir(), workerToken(t, addr)
	w, _ := startWorkerAt(t, dir, addr, tok, "w1")
	args := append([]string{"submit", "match"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=tiny,source="+src+",build=sleep 3; make EXE=engine", "--engine", "name=base,builtin",
		"--each", "nodes=500", "--openings", "file="+book+",order=random,seed=5", "--games", "4")
	out, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("submit: %d %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	id := lines[len(lines)-1]
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(w.out.String(), "building uploaded engine") {
		if time.Now().After(deadline) {
			t.Fatal("the build never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.kill(t)
	builds := filepath.Join(dir, "data", "artifacts", "builds")
	if tmps, _ := filepath.Glob(filepath.Join(builds, "*.tmp-*")); len(tmps) != 1 {
		t.Fatalf("half-done builds after the kill: %v, want one", tmps)
	}
	w2, _ := startWorkerAt(t, dir, addr, tok, "w1")
	j := waitFor(t, dial(t, addr, token), id, 3*time.Minute, "the test's end", done)
	if g := j.GetMatchProgress().GetGames(); g != 4 {
		t.Fatalf("%d games", g)
	}
	log := w2.out.String()
	if !strings.Contains(log, "building uploaded engine") || !strings.Contains(log, "uploaded engine built") {
		t.Fatalf("the restarted worker did not build:\n%s", lastLines(log, 20))
	}
	if tmps, _ := filepath.Glob(filepath.Join(builds, "*.tmp-*")); len(tmps) != 0 {
		t.Fatalf("half-done builds left: %v", tmps)
	}
}
