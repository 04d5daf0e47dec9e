package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// `datagen pull` of a dataset of several shards, into a file and a pipe
// (not a terminal): stderr carries no line per shard, stdout the one
// summary; with --each-shard (the control, and what scripts that follow a
// pull ask for) a line per shard.
func TestDatagenPullProgressIsOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: plays a dataset's games")
	}
	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "pull-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	out, stderr, err := runArbiter(t, "", append([]string{"submit", "datagen", "--json", "--engine", "name=dev,builtin", "--positions", "300",
		"--each", "nodes=200", "--random-plies", "8-9", "--batch-games", "1", "--filters", "none"}, client...)...)
	var job struct {
		ID string `json:"job_id"`
	}
	if err != nil || json.Unmarshal([]byte(out), &job) != nil || job.ID == "" {
		t.Fatalf("submit datagen: %v\n%s%s", err, out, stderr)
	}
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		out, _, err := runArbiter(t, "", append([]string{"status", job.ID, "--json"}, client...)...)
		if err == nil && strings.Contains(out, `"state":"done"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dataset did not finish within 4 minutes: %v %s", err, out)
		}
	}
	dir := t.TempDir()
	shardLine := regexp.MustCompile(`(?m)^shard \d+/(\d+): \d+ records$`)
	out, stderr, err = runArbiter(t, "", append([]string{"datagen", "pull", job.ID, "--out", filepath.Join(dir, "a.txt")}, client...)...)
	if err != nil || !strings.Contains(out, ": 300 records, ") || strings.Count(out, "\n") != 1 {
		t.Fatalf("pull: %v\nstdout %q\nstderr %q", err, out, stderr)
	}
	if strings.Contains(stderr, "shard ") {
		t.Errorf("pull off a terminal printed shard lines:\n%s", stderr)
	}
	out, stderr, err = runArbiter(t, "", append([]string{"datagen", "pull", job.ID, "--each-shard", "--out", filepath.Join(dir, "b.txt")}, client...)...)
	lines := shardLine.FindAllStringSubmatch(stderr, -1)
	if err != nil || len(lines) < 2 || lines[0][1] != lines[len(lines)-1][1] {
		t.Errorf("pull --each-shard: %v, want a line per shard of two or more:\n%s%s", err, out, stderr)
	}
}
