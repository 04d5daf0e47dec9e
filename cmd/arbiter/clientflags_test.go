package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
)

// clientCommands are the client commands with the arguments they need to
// reach the point of calling the coordinator.
var clientCommands = [][]string{
	{"status"},
	{"status", "p000000000000"},
	{"cancel", "p000000000000"},
	{"pgn", "s000000000000"},
	{"submit", "perft", "--depth", "3"},
	{"submit", "match", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=100",
		"--openings", "file=../../books/uho-200.epd", "--games", "2"},
	{"perft", "--depth", "3"},
	{"verify", "--engine", "name=sf", "--depth", "2"},
}

// TestClientExitStatusAbsentCoordinator: every client command says which
// coordinator it could not reach and why, and exits 3.
func TestClientExitStatusAbsentCoordinator(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	for _, args := range clientCommands {
		args = append(args, "--coordinator", addr, "--token", "t")
		start := time.Now()
		_, _, err := runArbiter(t, "", args...)
		want := "coordinator " + addr + " unreachable: connection refused"
		if exitCode(err) != 3 || err.Error() != want {
			t.Errorf("%v: exit %d, %v; want 3 and %q", args, exitCode(err), err, want)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("%v: took %v to give up", args, el)
		}
	}
	// Bad client flags are bad input.
	for _, args := range [][]string{
		{"status", "--coordinator", addr},                                     // no credential
		{"status", "--coordinator", "host:99999", "--token", "t"},             // bad port
		{"status", "--coordinator", addr, "--token-file", "/nonexistent/tok"}, // unreadable file
		{"status", "--coordinator", addr, "--token", "t", "--ca", "/nonexistent/ca.pem"},
		{"status", "--coordinator", addr, "--token", "t", "--server-name", "coord.example"}, // without TLS
	} {
		if _, _, err := runArbiter(t, "", args...); exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}

// TestClientAgainstCoordinator: a live coordinator's answers become exit
// statuses (0 ok, 2 refused input, 3 refused credential), with the
// coordinator's message and no gRPC prefix; the credential comes from
// --token, else --token-file, else $ARBITER_TOKEN.
func TestClientAgainstCoordinator(t *testing.T) {
	const token = "cli-secret"
	t.Setenv(auth.EnvToken, "")
	srv, err := localcluster.Serve(localcluster.ServerConfig{Listen: "127.0.0.1:0", Data: t.TempDir(), Token: token,
		LeaseDuration: 30 * time.Second, UnitDuration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	addr := srv.Addr()
	dir := t.TempDir()
	goodFile, badFile := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	os.WriteFile(goodFile, []byte(token+"\n"), 0o600)
	os.WriteFile(badFile, []byte("wrong\n"), 0o600)

	run := func(env string, args ...string) (string, error) {
		t.Helper()
		t.Setenv(auth.EnvToken, env)
		out, _, err := runArbiter(t, "", append(args, "--coordinator", addr)...)
		return out, err
	}
	cases := []struct {
		env  string
		args []string
		exit int
		msg  string // the error's text, or a part of stdout when exit is 0
	}{
		{"", []string{"status", "--token", token}, 0, "No jobs."},
		{token, []string{"status"}, 0, "No jobs."},
		{"wrong", []string{"status", "--token-file", goodFile}, 0, "No jobs."},
		{token, []string{"status", "--token-file", badFile}, 3, "coordinator " + addr + " refused the credential: missing, unknown or revoked credential (send \"authorization: Bearer <token>\")"},
		{token, []string{"status", "--token", "wrong", "--token-file", goodFile}, 3, "coordinator " + addr + " refused the credential: missing, unknown or revoked credential (send \"authorization: Bearer <token>\")"},
		{token, []string{"status", "p000000000000"}, 2, `status: unknown job "p000000000000"`},
		{token, []string{"cancel", "p000000000000"}, 2, `cancel: unknown job "p000000000000"`},
		{token, []string{"submit", "perft", "--depth", "2", "--split-ply", "9"}, 2, "submit: "},
	}
	for _, c := range cases {
		out, err := run(c.env, c.args...)
		if exitCode(err) != c.exit {
			t.Errorf("%v: exit %d (%v), want %d", c.args, exitCode(err), err, c.exit)
			continue
		}
		switch {
		case c.exit == 0 && !strings.Contains(out, c.msg):
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.msg, out)
		case c.exit != 0 && !strings.HasPrefix(err.Error(), c.msg):
			t.Errorf("%v: error %q, want %q", c.args, err, c.msg)
		case c.exit != 0 && strings.Contains(err.Error(), "rpc error"):
			t.Errorf("%v: error shows the gRPC prefix: %q", c.args, err)
		}
	}
}
