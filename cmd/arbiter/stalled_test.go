package main

import (
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// TestNeverStartingTestFails: a test whose engine starts on no connected
// worker (a program no worker has) ends failed, with the reason, once the
// coordinator's start timeout has passed; submit --wait (a real process)
// returns with exit status 1 and says why. Before, the test stayed
// running and --wait never returned.
func TestNeverStartingTestFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	t.Setenv(auth.EnvToken, "")
	const timeout = 2 * time.Second
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "stalled-admin", StartTimeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	start := time.Now()
	p := startArbiterProcess(t, nil, append([]string{"submit", "match", "--engine", "name=ghost,cmd=/nonexistent/ghost-engine",
		"--engine", "name=b,builtin", "--each", "nodes=100", "--openings", "file=../../books/uho-200.epd", "--games", "2", "--wait"}, client...)...)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatalf("submit --wait did not return within a minute (start timeout %v):\n%s", timeout, p.log())
	}
	took := time.Since(start)
	if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.log(), "no connected worker could start it within 2s") ||
		!strings.Contains(p.log(), "ghost-engine") {
		t.Fatalf("submit --wait: exit %d after %v; want 1 naming the timeout and the engine:\n%s", code, took, p.log())
	}
	t.Logf("submit --wait returned after %v", took.Round(time.Millisecond))
	list, _, err := runArbiter(t, "", append([]string{"status"}, client...)...)
	if err != nil || !strings.Contains(list, "failed") {
		t.Errorf("status: %v\n%s", err, list)
	}
}

// TestTestWithoutWorkersFails: with no worker connected at all, a test
// ends failed after the start timeout, naming that.
func TestTestWithoutWorkersFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a coordinator")
	}
	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, HashMB: 1,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "stalled-admin", StartTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	_, _, err = runArbiter(t, "", append([]string{"submit", "sprt", "--engine", "name=a,builtin", "--engine", "name=b,builtin",
		"--each", "nodes=100", "--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=5", "--wait"}, client...)...)
	if exitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), "no connected worker could start it within 1s: no worker connected") {
		t.Fatalf("submit sprt --wait without workers: exit %d, %v", exitCode(err), err)
	}
}

// TestStalledDatagenFails: a dataset goes through the same start timeout
// as tests: with no worker connected, and with a worker whose every try
// of the engine fails (a program it does not have), submit datagen --wait
// returns with exit status 1 naming the timeout and the reason.
func TestStalledDatagenFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	t.Setenv(auth.EnvToken, "")
	for _, c := range []struct {
		name    string
		workers int
		engine  string
		want    string
	}{
		{"no worker", 0, "name=dev,builtin", "no connected worker could start it within 2s: no worker connected"},
		{"engine missing", 1, "name=ghost,cmd=/nonexistent/ghost-engine", "ghost-engine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := localcluster.Start(localcluster.Config{Workers: c.workers, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
				Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "stalled-admin", StartTimeout: 2 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Stop()
			client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
			_, _, err = runArbiter(t, "", append([]string{"submit", "datagen", "--engine", c.engine, "--positions", "100",
				"--each", "nodes=300", "--batch-games", "2", "--wait"}, client...)...)
			if exitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), "no connected worker could start it within 2s") ||
				!strings.Contains(err.Error(), c.want) {
				t.Fatalf("submit datagen --wait: exit %d, %v; want 1 naming the timeout and %q", exitCode(err), err, c.want)
			}
			t.Logf("%v", err)
		})
	}
}
