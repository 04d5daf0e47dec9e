package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
)

// checkNetCommands runs every `arbiter net` command against the
// coordinator at client (a list of --coordinator/--token flags), checking
// the text and, through check (schema, args), the --json outputs.
func checkNetCommands(t *testing.T, client []string, check func(schema string, args ...string) string) {
	t.Helper()
	with := func(args ...string) []string { return append(args, client...) }
	dir := t.TempDir()
	file := filepath.Join(dir, "big.nnue")
	if err := os.WriteFile(file, []byte(strings.Repeat("net!", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := check("net.schema.json", with("net", "upload", file, "--engine", "dev", "--json")...)
	sha := between(out, `"sha256":"`, `"`)
	if len(sha) != 64 || !strings.Contains(out, `"name":"nn-`+sha[:12]+`.nnue","engine":"dev","size":4000,"uploader":"`) {
		t.Fatalf("net upload --json: %s", out)
	}
	// Twice: stored once, its first name kept.
	stdout, stderr, err := runArbiter(t, "", with("net", "upload", file, "--name", "other.nnue")...)
	if err != nil || !strings.Contains(stdout, "name:        nn-"+sha[:12]+".nnue") || !strings.Contains(stderr, "already stored") {
		t.Fatalf("second upload: %v\n%s%s", err, stdout, stderr)
	}
	out = check("nets.schema.json", with("net", "list", "--json")...)
	if strings.Count(out, `"sha256"`) != 1 || !strings.Contains(out, `"bytes_stored":4000`) {
		t.Fatalf("net list --json: %s", out)
	}
	out = check("net-default.schema.json", with("net", "default", "dev", sha[:8], "--json")...)
	if !strings.Contains(out, `"engine":"dev","net":{"sha256":"`+sha) || !strings.Contains(out, `"default_for":["dev"]`) {
		t.Fatalf("net default --json: %s", out)
	}
	if stdout, _, err := runArbiter(t, "", with("net", "list")...); err != nil ||
		!strings.Contains(stdout, sha[:12]+"  nn-"+sha[:12]+".nnue  dev     4000  dev") || !strings.Contains(stdout, "1 nets, 4000 bytes stored") {
		t.Fatalf("net list: %v\n%s", err, stdout)
	}
	check("net.schema.json", with("net", "show", sha[:10], "--json")...)
	if out := check("net-default.schema.json", with("net", "default", "nobody", "--json")...); !strings.Contains(out, `"net":null`) {
		t.Fatalf("net default of an engine without one: %s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"net", "upload", filepath.Join(dir, "missing.nnue")}, "no such file"},
		{[]string{"net", "upload", dir}, "not a net file"},
		{[]string{"net", "show", "0123456789abcdef"}, "not stored on this coordinator"},
		{[]string{"net", "default", "dev", "0123456789abcdef"}, "not stored on this coordinator"},
		{[]string{"net", "default", "dev", sha[:8], "--clear"}, "--clear takes no SHA"},
	} {
		if _, stderr, err := runArbiter(t, "", with(c.args...)...); err == nil || !strings.Contains(err.Error()+stderr, c.want) {
			t.Errorf("%v: %v %s, want %q", c.args, err, stderr, c.want)
		}
	}
	out = check("net-rm.schema.json", with("net", "rm", sha[:12], "--json")...)
	if !strings.Contains(out, `"removed":true`) {
		t.Fatalf("net rm --json: %s", out)
	}
	if out := check("net-default.schema.json", with("net", "default", "dev", "--json")...); !strings.Contains(out, `"net":null`) {
		t.Fatalf("a removed net is still the default: %s", out)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

// TestNetCommands: upload (twice: stored once), list, show, default, rm
// and their refusals against a coordinator on loopback, every --json
// output valid against its schema.
func TestNetCommands(t *testing.T) {
	schemas := loadSchemas(t)
	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, Threads: 1, HashMB: 1,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "net-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	checkNetCommands(t, []string{"--coordinator", cl.Addr(), "--token", cl.Token()}, func(schema string, args ...string) string {
		t.Helper()
		stdout, stderr, err := runArbiter(t, "", args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		validateLines(t, strings.Join(args, " "), schemas[schema], stdout, false)
		return stdout
	})
}
