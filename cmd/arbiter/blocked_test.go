package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// startArbiter starts this test binary as the arbiter command (see
// TestHelperArbiterMain) with its stderr on a pipe; the process is killed
// at the end of the test.
func startArbiter(t *testing.T, args ...string) io.Reader {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return stderr
}

// waitForLine reads r until a line contains want, failing after limit.
func waitForLine(t *testing.T, r io.Reader, want string, limit time.Duration) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	deadline := time.After(limit)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended without %q:\n%s", want, strings.Join(seen, "\n"))
			}
			if strings.Contains(l, want) {
				return l
			}
			seen = append(seen, l)
		case <-deadline:
			t.Fatalf("no %q within %v:\n%s", want, limit, strings.Join(seen, "\n"))
		}
	}
}

// A job that cannot progress says so, with the reason, in submit --wait's
// output within seconds and in status (the list and the job): no worker
// at all, verification with one worker identity, and no worker offering
// the builtin engine a test needs.
func TestBlockedJobsSayWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clusters")
	}
	t.Setenv(auth.EnvToken, "")
	cases := []struct {
		name    string
		cfg     localcluster.Config
		submit  []string
		because string
	}{
		{"no worker", localcluster.Config{Workers: 0, HashMB: 1},
			[]string{"submit", "perft", "--depth", "5", "--wait"}, "cannot progress: no worker connected"},
		{"one identity", localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000},
			[]string{"submit", "perft", "--depth", "4", "--recheck", "1", "--wait"}, "cannot progress: waiting for a worker of a second identity"},
		{"no capability", localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000},
			[]string{"submit", "sprt", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=100",
				"--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=5", "--wait"},
			"cannot progress: none of the 1 connected workers offers game-pair + builtin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Server = localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "blocked-admin"}
			if c.name == "no capability" {
				c.cfg.Builtin = nil // the worker plays no builtin engine
			} else {
				c.cfg.Builtin = builtin.New
			}
			cl, err := localcluster.Start(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Stop()
			client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
			start := time.Now()
			line := waitForLine(t, startArbiter(t, append(c.submit, client...)...), c.because, 20*time.Second)
			t.Logf("after %v: %s", time.Since(start).Round(time.Millisecond), line)

			list, _, err := runArbiter(t, "", append([]string{"status"}, client...)...)
			if err != nil || !strings.Contains(list, "running (blocked)") || !strings.Contains(list, strings.TrimPrefix(c.because, "cannot progress: ")) {
				t.Errorf("status: %v\n%s", err, list)
			}
			id := strings.Fields(strings.SplitN(list, "\n", 3)[1])[0]
			detail, _, err := runArbiter(t, "", append([]string{"status", id}, client...)...)
			if err != nil || !strings.Contains(detail, "Blocked:    "+strings.TrimPrefix(c.because, "cannot progress: ")) {
				t.Errorf("status %s: %v\n%s", id, err, detail)
			}
		})
	}
}
