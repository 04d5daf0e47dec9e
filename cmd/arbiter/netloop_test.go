package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/local/netloop"
)

// netLoopArgs is a tiny loop: 2 generations of 2,000 positions at 300
// nodes, 2 epochs, an SPRT with wide bounds capped at 24 games.
func netLoopArgs(dir string) []string {
	return []string{"net", "loop", "--dir", dir, "--engine", "name=dev,builtin", "--generations", "2", "--positions", "2000",
		"--each", "nodes=300", "--train", "epochs=2,batch=256", "--sprt", "elo0=-50,elo1=50", "--games-cap", "24",
		"--concurrency", "2", "--threads", "2"}
}

func netLoopStatusJSON(t *testing.T, dir string) netloop.Status {
	t.Helper()
	stdout, stderr, code := runMain(t, "net", "loop", "--dir", dir, "--status", "--json")
	if code != 0 {
		t.Fatalf("--status --json: exit %d: %s", code, stderr)
	}
	var st netloop.Status
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("--status --json: %v\n%s", err, stdout)
	}
	return st
}

// stepFiles reads every step's attempts counter and done marker.
func stepFiles(t *testing.T, dir string) (attempts map[string]string, done map[string][]byte) {
	t.Helper()
	attempts, done = map[string]string{}, map[string][]byte{}
	ents, _ := os.ReadDir(filepath.Join(dir, "steps"))
	for _, e := range ents {
		p := filepath.Join(dir, "steps", e.Name())
		if b, err := os.ReadFile(filepath.Join(p, "attempts")); err == nil {
			attempts[e.Name()] = strings.TrimSpace(string(b))
		}
		if b, err := os.ReadFile(filepath.Join(p, "done.json")); err == nil {
			done[e.Name()] = b
		}
	}
	return attempts, done
}

// TestNetLoopResumesAfterSIGKILL: the real binary runs a loop of two
// generations; a second one, killed with SIGKILL in the middle of
// generation 2's datagen and run again, resumes: the steps done before the
// kill are not run again (their attempt counters stay 1, their done
// markers keep their bytes and timestamps), the killed step runs a second
// time, and the final status has the uninterrupted run's data and nets
// (sha256), datagen and training being seeded.
func TestNetLoopResumesAfterSIGKILL(t *testing.T) {
	base := t.TempDir()
	whole, killed := filepath.Join(base, "whole"), filepath.Join(base, "killed")
	if stdout, stderr, code := runMain(t, netLoopArgs(whole)...); code != 0 {
		t.Fatalf("uninterrupted loop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := netLoopStatusJSON(t, whole)
	if !want.Done || len(want.Generations) != 2 {
		t.Fatalf("uninterrupted loop: %+v", want)
	}

	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, netLoopArgs(killed)...)...)
	cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once generation 1 is done (3 steps: datagen, train, SPRT)
	// and generation 2's datagen has started.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		attempts, done := stepFiles(t, killed)
		if len(done) >= 3 && len(attempts) > len(done) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("generation 2 never started:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	attemptsAtKill, doneAtKill := stepFiles(t, killed)
	var stopped []string
	for k := range attemptsAtKill {
		if doneAtKill[k] == nil {
			stopped = append(stopped, k)
		}
	}
	if len(stopped) != 1 || !strings.HasPrefix(stopped[0], "datagen-") {
		t.Fatalf("at the kill: steps run but not done %v (done %d)\n%s", stopped, len(doneAtKill), errOut.String())
	}
	mid := netLoopStatusJSON(t, killed)
	if mid.Done || mid.Generations[1].Datagen.State != "stopped" || mid.Generations[0].SPRT.State != "done" {
		t.Fatalf("status after the kill: %+v", mid.Generations)
	}

	stdout, stderr, code := runMain(t, netLoopArgs(killed)...)
	if code != 0 {
		t.Fatalf("resumed loop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("resumed:\n%s%s", stderr, stdout)
	if strings.Contains(stderr, "generation 1:") {
		t.Errorf("the resumed run ran a step of generation 1 again:\n%s", stderr)
	}
	attempts, done := stepFiles(t, killed)
	for k, b := range doneAtKill {
		if attempts[k] != "1" || !bytes.Equal(done[k], b) {
			t.Errorf("step %s, done before the kill: attempts %s, done marker changed %v", k, attempts[k], !bytes.Equal(done[k], b))
		}
	}
	if attempts[stopped[0]] != "2" {
		t.Errorf("the killed step %s: attempts %s, want 2", stopped[0], attempts[stopped[0]])
	}
	got := netLoopStatusJSON(t, killed)
	if !got.Done || got.Best != want.Best {
		t.Fatalf("resumed: done %v, best %+v; uninterrupted best %+v", got.Done, got.Best, want.Best)
	}
	for i, g := range got.Generations {
		w := want.Generations[i]
		if g.Datagen.Key != w.Datagen.Key || g.Datagen.Result.DataSHA != w.Datagen.Result.DataSHA ||
			g.Train.Key != w.Train.Key || g.Train.Result.NetSHA != w.Train.Result.NetSHA || g.Shipped != w.Shipped {
			t.Errorf("generation %d: data %s net %s shipped %v; uninterrupted: data %s net %s shipped %v", g.Gen,
				g.Datagen.Result.DataSHA, g.Train.Result.NetSHA, g.Shipped, w.Datagen.Result.DataSHA, w.Train.Result.NetSHA, w.Shipped)
		}
	}
	text, _, _ := runMain(t, "net", "loop", "--dir", killed, "--status")
	t.Logf("--status:\n%s", text)
	if !strings.Contains(text, "generation 2 (from") || !strings.Contains(text, "2 attempts") || !strings.Contains(text, "loop done") {
		t.Errorf("--status:\n%s", text)
	}
}

// TestNetLoopBadInput: bad flags are refused with exit status 2 and a
// message naming the flag, before anything is written.
func TestNetLoopBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "loop")
	args := func(change ...string) []string {
		a := netLoopArgs(dir)
		for i := 0; i+1 < len(change); i += 2 {
			for j := range a {
				if a[j] == change[i] {
					a[j+1] = change[i+1]
				}
			}
		}
		return a
	}
	cases := []struct {
		args []string
		want string
	}{
		{args("--generations", "0"), "--generations 0: must be between 1 and 100"},
		{args("--generations", "1000"), "--generations 1000: must be between 1 and 100"},
		{args("--positions", "0"), "--positions 0: must be between 1"},
		{args("--train", "epochs=2,speed=9"), `--train: unknown key "speed"`},
		{args("--engine", "name=sf,cmd=/usr/games/stockfish"), "not the embedded engine"},
		{args("--each", "depth=3"), "the loop plays at fixed nodes only"},
		{args("--games-cap", "7"), "--games-cap 7: must be even"},
		{[]string{"net", "loop", "--dir", dir, "--status"}, "no loop here"},
	}
	for _, c := range cases {
		_, stderr, code := runMain(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args[4:], code, stderr, c.want)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a refused loop left its directory behind")
	}
	// A directory another loop process runs in is refused with its pid;
	// once that process lets go, the same command runs (the control).
	busy := filepath.Join(t.TempDir(), "busy")
	unlock, err := netloop.Dir(busy).Lock()
	if err != nil {
		t.Fatal(err)
	}
	tiny := []string{"net", "loop", "--dir", busy, "--engine", "name=dev,builtin", "--positions", "50", "--each", "nodes=100",
		"--train", "epochs=1", "--games-cap", "2"}
	if _, stderr, code := runMain(t, tiny...); code != 2 || !strings.Contains(stderr, "another arbiter net loop runs in it (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("a busy directory: exit %d, %s", code, stderr)
	}
	unlock()
	if _, stderr, code := runMain(t, tiny...); code != 0 {
		t.Errorf("the directory let go: exit %d, %s", code, stderr)
	}

	// A directory of another loop is refused, naming the setting.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, _ := netloop.Flags{Dir: dir, Engine: "name=dev,builtin", Generations: 1, Positions: 10, Each: "nodes=300", TrainOn: "new",
		GamesCap: 24, Concurrency: 1, Threads: 1, Seed: 1}.Check()
	if err := netloop.Dir(dir).Open(s, 1, false); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runMain(t, netLoopArgs(dir)...)
	if code != 2 || !strings.Contains(stderr, "belongs to a loop of other settings: --positions: the directory's loop has 10, this run 2000") {
		t.Errorf("another loop's directory: exit %d, %s", code, stderr)
	}
}
