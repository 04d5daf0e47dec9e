package main

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// TestEveryClientCommandExitStatus: each client command ends with the
// status docs/cluster.md gives (0 ok, 1 a failure found, 2 bad input, 3
// the coordinator unreachable or refusing the credential) against a live
// coordinator (in this process, with a worker that plays the builtin
// engine and runs a broken move generator as the verify engine "broken")
// and against an absent one (a closed port).
func TestEveryClientCommandExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	t.Setenv(auth.EnvToken, "")
	broken, err := verifyproto.ParseLocalEngine("name=broken,cmd=" + brokenPerftBinary(t) + ",args=-bug ep")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		VerifyEngines: []verifyproto.LocalEngine{broken},
		Server:        localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "exit-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	dir := t.TempDir()
	live := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	wrong := []string{"--coordinator", cl.Addr(), "--token", "not-a-credential"}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	absentAddr := lis.Addr().String()
	lis.Close()
	absent := []string{"--coordinator", absentAddr, "--token", "t"}

	book := "file=../../books/uho-200.epd"
	test := func(kind string, extra ...string) []string {
		return append([]string{"submit", kind, "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=100",
			"--openings", book, "--games", "2", "--batch-pairs", "1"}, extra...)
	}
	run := func(args []string, conn []string) (string, int) {
		t.Helper()
		out, _, err := runArbiter(t, "", append(append([]string{}, args...), conn...)...)
		if err != nil {
			return err.Error(), exitCode(err)
		}
		return out, 0
	}
	// Jobs the commands below act on.
	perftOut, code := run([]string{"submit", "perft", "--depth", "3", "--wait", "--json"}, live)
	if code != 0 {
		t.Fatalf("submit perft --wait: %d %s", code, perftOut)
	}
	perftID := regexp.MustCompile(`"job_id":"([^"]+)"`).FindStringSubmatch(perftOut)[1]
	testOut, code := run(test("match", "--wait", "--json"), live)
	if code != 0 {
		t.Fatalf("submit match --wait: %d %s", code, testOut)
	}
	testID := regexp.MustCompile(`"job_id":"([^"]+)"`).FindStringSubmatch(testOut)[1]
	// A running job is cancelled with exit 0: a perft job long enough to
	// be running still, cancelled at once (left running, it would take
	// the workers from every command below on a loaded machine).
	longOut, code := run([]string{"submit", "perft", "--depth", "8", "--split-ply", "3"}, live)
	if code != 0 {
		t.Fatalf("submit perft: %d %s", code, longOut)
	}
	longID := strings.TrimSpace(longOut)
	if out, code := run([]string{"cancel", longID}, live); code != 0 {
		t.Fatalf("cancel of a running job: exit %d, want 0: %s", code, out)
	}

	cases := []struct {
		args []string
		conn []string
		want int
	}{
		{[]string{"status"}, live, 0},
		{[]string{"status", perftID}, live, 0},
		{[]string{"status", "p000000000000"}, live, 2},
		{[]string{"status"}, wrong, 3},
		{[]string{"submit", "perft", "--depth", "3"}, live, 0},
		{[]string{"submit", "perft", "--depth", "3", "--split-ply", "9"}, live, 2},
		{[]string{"submit", "perft", "--depth", "3"}, wrong, 3},
		{[]string{"perft", "--depth", "3"}, live, 0},
		{[]string{"perft", "--depth", "3", "--split-ply", "9"}, live, 2}, // no such flag: cobra refuses it
		{[]string{"perft", "--depth", "3"}, wrong, 3},
		{test("sprt", "--sprt", "elo0=0,elo1=50"), live, 0},
		{test("sprt", "--sprt", "elo0=0,elo1=50", "--batch-pairs", "100000"), live, 2},
		{test("sprt", "--sprt", "elo0=0,elo1=50"), wrong, 3},
		{test("match"), live, 0},
		{test("match", "--batch-pairs", "100000"), live, 2},
		{[]string{"pgn", testID}, live, 0},
		{[]string{"pgn", "s000000000000"}, live, 2},
		{[]string{"pgn", testID}, wrong, 3},
		{[]string{"cancel", perftID}, live, 2}, // finished: nothing to cancel
		{[]string{"cancel", longID}, live, 2},  // cancelled above: nothing to cancel
		{[]string{"cancel", "p000000000000"}, live, 2},
		{[]string{"cancel"}, live, 2},
		{[]string{"cancel", perftID}, wrong, 3},
		{[]string{"verify", "--engine", "name=broken", "--fen", "8/2p5/8/KP5r/8/8/8/4k3 b - - 0 1", "--depth", "3"}, live, 1},
		{[]string{"verify", "--engine", "name=broken", "--depth", "2"}, live, 0},
		{[]string{"verify", "--engine", "name=broken", "--depth", "0"}, live, 2},
		{[]string{"verify", "--engine", "name=broken", "--depth", "2"}, wrong, 3},
		{[]string{"token", "create", "--name", "alice", "--role", "client"}, live, 0},
		{[]string{"token", "create", "--name", "alice", "--role", "client"}, live, 2}, // names are never reused
		{[]string{"token", "list"}, live, 0},
		{[]string{"token", "list"}, wrong, 3},
		{[]string{"token", "revoke", "alice"}, live, 0},
		{[]string{"token", "revoke", "nobody"}, live, 2},
		{[]string{"backup", "--to", filepath.Join(dir, "copy.db")}, live, 0},
		{[]string{"backup", "--to", filepath.Join(dir, "copy.db")}, live, 2}, // exists
		{[]string{"backup", "--to", filepath.Join(dir, "other.db")}, wrong, 3},
	}
	for _, c := range cases {
		out, got := run(c.args, c.conn)
		if got != c.want {
			t.Errorf("%v (%s): exit %d, want %d: %.300s", c.args, connName(c.conn, live, wrong), got, c.want, out)
		}
		if got == 3 && !strings.Contains(out, "coordinator "+cl.Addr()) {
			t.Errorf("%v: a refusal that does not name the coordinator: %s", c.args, out)
		}
	}
	// Every command against an absent coordinator: 3, naming it.
	seen := map[string]bool{}
	for _, c := range cases {
		key := strings.Join(c.args[:min(2, len(c.args))], " ")
		if c.want != 0 || seen[key] {
			continue
		}
		seen[key] = true
		args := c.args
		if args[0] == "backup" {
			args = []string{"backup", "--to", filepath.Join(dir, "absent.db")}
		}
		out, got := run(args, absent)
		if want := "coordinator " + absentAddr + " unreachable: connection refused"; got != 3 || out != want {
			t.Errorf("%v against a closed port: exit %d, %q; want 3, %q", args, got, out, want)
		}
	}
	if len(seen) < 10 {
		t.Errorf("only %d commands checked against an absent coordinator", len(seen))
	}
}

func connName(conn, live, wrong []string) string {
	switch {
	case conn[3] == live[3]:
		return "live"
	case conn[3] == wrong[3]:
		return "wrong credential"
	}
	return "absent"
}

// Waiting on a job that ends other than done is a failure found: exit
// status 1 from submit perft --wait and submit sprt --wait when the job
// is cancelled under them.
func TestWaitOnCancelledJobExitsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	t.Setenv(auth.EnvToken, "")
	// No worker: the jobs wait until they are cancelled.
	cl, err := localcluster.Start(localcluster.Config{HashMB: 1, Server: localcluster.ServerConfig{UnitDuration: time.Second, Token: "cancel-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	conn := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	idRE := regexp.MustCompile(`^(?:job|test) ([ps][0-9a-f]+)`)
	for _, submit := range [][]string{
		{"submit", "perft", "--depth", "6", "--wait"},
		{"submit", "sprt", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=100",
			"--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=5", "--wait"},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, append(submit, conn...)...)...)
		cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		id := ""
		var lines []string
		for id == "" && sc.Scan() {
			lines = append(lines, sc.Text())
			if m := idRE.FindStringSubmatch(sc.Text()); m != nil {
				id = m[1]
			}
		}
		if id == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%v printed no job id:\n%s", submit, strings.Join(lines, "\n"))
		}
		if out, _, err := runArbiter(t, "", append([]string{"cancel", id}, conn...)...); err != nil {
			t.Fatalf("cancel %s: %v %s", id, err, out)
		}
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v still waiting 30s after its job was cancelled", submit)
		}
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 1 || !strings.Contains(strings.Join(lines, "\n"), id) {
			t.Errorf("%v after cancel: %v, want exit status 1:\n%s", submit, err, strings.Join(lines, "\n"))
		}
	}
}
