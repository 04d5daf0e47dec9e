//go:build unix

package e2e

// Nets end to end: a coordinator and two worker processes on loopback
// whose working directories hold neither engine nor net. A net trained by
// `arbiter train` on a few positions is uploaded on its own (twice: stored
// once), then a test of an uploaded NNUE engine (a copy of the arbiter
// binary, run as "arbiter uci" with UseNNUE) names it: the workers fetch
// both, the engine loads the net before the first game, and the test plays
// to its end. Refusals: a net hash the coordinator does not know (at
// submit, nothing stored), a foreign net and a truncated one (the engine
// rejects them before the first game, builtin and uploaded), bytes that
// rot on the coordinator's disk (hash mismatch); and `net rm` while a
// running test uses the net.

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// trainNet writes a net of the embedded engine's architecture, trained by
// `arbiter train` on a handful of positions (seed picks the weights).
func trainNet(t *testing.T, seed int) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data.txt")
	lines := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 20 | 0.5\n" +
		"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 | 35 | 0.5\n" +
		"4k3/8/8/8/8/8/8/4K2Q w - - 0 1 | 1200 | 1.0\n" +
		"4k3/8/8/8/8/8/8/4K2R w - - 0 1 | 600 | 1.0\n" +
		"4k2q/8/8/8/8/8/8/4K3 w - - 0 1 | -1200 | 0.0\n" +
		"4k2r/8/8/8/8/8/8/4K3 w - - 0 1 | -600 | 0.0\n"
	if err := os.WriteFile(data, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	net := filepath.Join(dir, "net.nnue")
	out, code := cli(t, "train", "--data", data, "--out", net, "--epochs", "1", "--batch", "2", "--val", "0", "--seed", fmt.Sprint(seed))
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, out)
	}
	return net
}

var shaLine = regexp.MustCompile(`sha256:\s+([0-9a-f]{64})`)

// uploadNet runs `arbiter net upload` and returns the net's hash and what
// the command printed.
func uploadNet(t *testing.T, addr, file string, extra ...string) (string, string) {
	t.Helper()
	out, code := cli(t, append(append([]string{"net", "upload", file}, extra...), clientArgs(addr)...)...)
	m := shaLine.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("net upload %s: exit %d: %s", file, code, out)
	}
	return m[1], out
}

func TestNetsOnTheFarm(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	net := trainNet(t, 1)
	sha, out := uploadNet(t, addr, net, "--engine", "arbiter")
	if !strings.Contains(out, "name:        nn-"+sha[:12]+".nnue") || !strings.Contains(out, "uploader:    admin") {
		t.Fatalf("first upload:\n%s", out)
	}
	// The same bytes again, under another name: stored once.
	sha2, out := uploadNet(t, addr, net, "--name", "again.nnue")
	if sha2 != sha || !strings.Contains(out, "already stored") || !strings.Contains(out, "nn-"+sha[:12]+".nnue") {
		t.Fatalf("second upload of the same net (%s):\n%s", sha2, out)
	}
	if objs, _ := filepath.Glob(filepath.Join(data, "artifacts", "objects", "*")); len(objs) != 1 {
		t.Fatalf("objects stored: %v", objs)
	}
	if out, code := cli(t, append([]string{"net", "list"}, clientArgs(addr)...)...); code != 0 || !strings.Contains(out, "1 nets, 197440 bytes stored") {
		t.Fatalf("net list: exit %d:\n%s", code, out)
	}

	// A net the coordinator does not have: refused at submit, nothing stored.
	args := append([]string{"submit", "match"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=nnue,builtin,net=0123456789abcdef", "--engine", "name=classic,builtin",
		"--each", "nodes=500", "--openings", "file="+book+",order=random,seed=5", "--games", "4")
	if out, code := cli(t, args...); code == 0 || !strings.Contains(out, "engine_a: net: artifact \"0123456789abcdef\": not stored on this coordinator") {
		t.Fatalf("unknown net: exit %d: %s", code, out)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "coordinator.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tests int
	if err := db.QueryRow("SELECT COUNT(*) FROM tests").Scan(&tests); err != nil || tests != 0 {
		t.Fatalf("%d tests stored after the refusal (%v)", tests, err)
	}

	startWorkerIn(t, addr, "w1")
	startWorkerIn(t, addr, "w2")
	// An uploaded NNUE engine with the net uploaded separately; neither is
	// on the workers.
	dev := filepath.Join(t.TempDir(), "dev-engine")
	copyFile(t, bin, dev)
	args = append([]string{"submit", "match"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=dev,upload="+dev+",args=uci,option.UseNNUE=true,net="+sha[:12], "--engine", "name=classic,builtin",
		"--each", "nodes=500", "--openings", "file="+book+",order=random,seed=5", "--games", "4", "--batch-pairs", "1", "--wait")
	out, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("test of the uploaded NNUE engine: exit %d:\n%s", code, out)
	}
	i := strings.Index(out, "Test:")
	id := strings.Fields(out[i:])[1]
	t.Logf("test of the uploaded NNUE engine:\n%s", out[i:])
	j := getJob(t, dial(t, addr, token), id)
	if !done(j) || j.GetMatchProgress().GetGames() != 4 {
		t.Fatalf("%v, %d games", j.GetState(), j.GetMatchProgress().GetGames())
	}
	if n := j.GetMatch().GetEngineA().GetNet(); n.GetSha256() != sha || n.GetSize() != 197440 {
		t.Fatalf("the test's net: %v", n)
	}
	loaded := 0
	for _, c := range j.GetArtifactChecks() {
		if c.GetEngine() == "dev net" && c.GetState() == arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED && c.GetDetail() == "the engine loaded it" {
			loaded++
		}
	}
	if loaded == 0 || !strings.Contains(out, "Net:        dev "+sha[:12]+" nn-"+sha[:12]+".nnue (197440 bytes) via EvalFile") {
		t.Fatalf("no worker loaded the net, or status does not show it (%v):\n%s", j.GetArtifactChecks(), out)
	}
	// status --json names each side's net.
	js, code := cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	if code != 0 || !strings.Contains(js, `"net":{"sha256":"`+sha+`","name":"nn-`+sha[:12]+`.nnue","size":197440,"option":"EvalFile"}`) {
		t.Fatalf("status --json: exit %d: %s", code, js)
	}

	// Refusals before the first game: nothing counted, the reason in status.
	status := func(id string) string {
		t.Helper()
		out, code := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
		if code != 0 {
			t.Fatalf("status: %d %s", code, out)
		}
		return out
	}
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.nnue")
	r := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 197440)
	for i := range junk {
		junk[i] = byte(r.IntN(256))
	}
	if err := os.WriteFile(foreign, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(trainNet(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.nnue")
	if err := os.WriteFile(truncated, whole[:100000], 0o644); err != nil {
		t.Fatal(err)
	}
	// A net whose bytes rot on the coordinator's disk after the upload.
	rotSHA, _ := uploadNet(t, addr, trainNet(t, 3))
	obj := filepath.Join(data, "artifacts", "objects", rotSHA)
	f, err := os.OpenFile(obj, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("rot"), 1000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct{ name, engine, want string }{
		{"foreign net, builtin", "name=dev,builtin,net=" + foreign, "not a net of this architecture"},
		{"truncated net, uploaded engine", "name=dev,upload=" + dev + ",args=uci,option.UseNNUE=true,net=" + truncated, "truncated or not a net"},
		{"hash mismatch", "name=dev,builtin,net=" + rotSHA[:12], "hash mismatch, discarded"},
	} {
		args := append([]string{"submit", "match"}, clientArgs(addr)...)
		args = append(args, "--engine", c.engine, "--engine", "name=classic,builtin", "--each", "nodes=500",
			"--openings", "file="+book+",order=random,seed=5", "--games", "4")
		out, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("%s: submit: exit %d: %s", c.name, code, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		id := lines[len(lines)-1]
		j := waitRefused(t, addr, id, "dev net", 2)
		if g := j.GetMatchProgress().GetGames(); g != 0 {
			t.Errorf("%s: %d games counted", c.name, g)
		}
		st := status(id)
		if !strings.Contains(st, "REFUSED") || !strings.Contains(st, c.want) {
			t.Errorf("%s: status does not show the refusal (%q):\n%s", c.name, c.want, st)
		}
		t.Logf("%s: status:\n%s", c.name, lastLines(st, 6))
		cli(t, append([]string{"cancel", id}, clientArgs(addr)...)...)
	}

	// rm: refused while a running test uses the net, done once it ends.
	args = append([]string{"submit", "match"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=nnue,builtin,net="+sha[:12], "--engine", "name=classic,builtin", "--each", "nodes=500",
		"--openings", "file="+book+",order=random,seed=5", "--games", "200")
	out, code = cli(t, args...)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	running := lines[len(lines)-1]
	out, code = cli(t, append([]string{"net", "rm", sha[:12]}, clientArgs(addr)...)...)
	if code == 0 || !strings.Contains(out, "used by running tests or tunes "+running) {
		t.Fatalf("net rm while %s runs: exit %d: %s", running, code, out)
	}
	cli(t, append([]string{"cancel", running}, clientArgs(addr)...)...)
	out, code = cli(t, append([]string{"net", "rm", sha[:12]}, clientArgs(addr)...)...)
	if code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("net rm after the test: exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "artifacts", "objects", sha)); !os.IsNotExist(err) {
		t.Fatalf("the removed net's file: %v", err)
	}
}
