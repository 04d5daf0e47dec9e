package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// TestHookCommands adds, lists and removes webhooks through the JSON API
// of a real coordinator, and lists deliveries; bad input is refused with
// the API's message and stores nothing.
func TestHookCommands(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	t.Setenv(envAPI, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, HashMB: 1, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "hook-admin", HTTP: "127.0.0.1:0", API: httpapi.ForCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	with := func(args ...string) []string {
		return append(args, "--api", "http://"+cl.Server.HTTPAddr(), "--token", cl.Token())
	}
	out, stderr, err := runArbiter(t, "", with("hook", "add", "https://example.org/arbiter", "--events", "finished,blocked", "--format", "discord", "--farm")...)
	if err != nil {
		t.Fatalf("hook add: %v %s", err, stderr)
	}
	m := regexp.MustCompile(`^hook (h[0-9a-f]{12}): https://example.org/arbiter on finished,blocked \(discord, farm\)\nsecret: ([0-9a-f]{64})\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("hook add printed:\n%s", out)
	}
	id := m[1]
	out, _, err = runArbiter(t, "", with("hook", "list")...)
	if err != nil || !strings.Contains(out, id+"  https://example.org/arbiter  finished,blocked  discord  farm") || strings.Contains(out, m[2]) {
		t.Errorf("hook list: %v\n%s", err, out)
	}
	out, _, err = runArbiter(t, "", with("hook", "deliveries", id)...)
	if err != nil || out != "No deliveries.\n" {
		t.Errorf("hook deliveries: %v %q", err, out)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"hook", "add", "http://10.0.0.1/x"}, "private address"},
		{[]string{"hook", "add", "gopher://example.org/"}, "http:// or https://"},
		{[]string{"hook", "add", "https://example.org/", "--events", "started"}, `"started" is not an event`},
		{[]string{"hook", "add", "https://example.org/", "--format", "teams"}, "want json, discord or slack"},
		{[]string{"hook", "rm", "h000000000000"}, "no such webhook"},
		{[]string{"hook", "deliveries", "h000000000000"}, "no such webhook"},
	} {
		if _, _, err := runArbiter(t, "", with(bad.args...)...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v; want %q", bad.args, err, bad.want)
		}
	}
	if _, _, err := runArbiter(t, "", "hook", "list", "--api", "http://"+cl.Server.HTTPAddr(), "--token", "wrong"); err == nil ||
		!strings.Contains(err.Error(), "unknown or revoked credential") {
		t.Errorf("hook list with a wrong token: %v", err)
	}
	if out, _, err := runArbiter(t, "", with("hook", "rm", id)...); err != nil || out != "hook "+id+" removed\n" {
		t.Errorf("hook rm: %v %q", err, out)
	}
	if out, _, err := runArbiter(t, "", with("hook", "list")...); err != nil || out != "No webhooks.\n" {
		t.Errorf("hook list after rm: %v %q", err, out)
	}
}
