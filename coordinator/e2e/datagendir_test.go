//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestDatagenDir: with --datagen-dir the shards of datasets live in the
// directory the operator configured, none under DATA/datagen, and a
// coordinator SIGKILLed and restarted with the same flag serves the whole
// dataset from them. A --datagen-dir that is no writable directory is
// refused at start, naming the flag.
func TestDatagenDir(t *testing.T) {
	addr, data, shards := proctest.FreeAddr(t), t.TempDir(), t.TempDir()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for bad, want := range map[string]string{filepath.Join(shards, "none"): "no such directory", file: "not a directory"} {
		out, code := cli(t, "coordinator", "--listen", addr, "--data", data, "--token", token, "--datagen-dir", bad)
		if code != 2 || !strings.Contains(out, "--datagen-dir "+bad+": "+want) {
			t.Errorf("coordinator --datagen-dir %s: exit %d, %q; want exit 2 naming the flag and %q", bad, code, out, want)
		}
	}
	shardFiles := func(dir string) int {
		entries, _ := os.ReadDir(dir)
		n := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".shard") {
				n++
			}
		}
		return n
	}

	coord := coordinator(t, addr, data, "--datagen-dir", shards)
	conn := dial(t, addr, token)
	startWorker(t, addr, "--name", "w1")
	const positions = 300
	id := submitDatagen(t, addr, "--positions", "300", "--each", "nodes=300", "--random-plies", "8-9", "--random-seed", "3",
		"--batch-games", "2")
	waitDataset(t, conn, id, 3*time.Minute)
	stored := shardFiles(shards)
	if stored == 0 || shardFiles(filepath.Join(data, "datagen")) != 0 {
		t.Fatalf("%d shard files in --datagen-dir, %d under DATA/datagen; want them all in --datagen-dir", stored,
			shardFiles(filepath.Join(data, "datagen")))
	}
	coord.kill(t)
	coordinator(t, addr, data, "--datagen-dir", shards)
	checkDataset(t, addr, data, id, positions, false)
	if n := shardFiles(shards); n != stored {
		t.Errorf("after the restart: %d shard files, want the %d stored", n, stored)
	}
	t.Logf("%d shards in --datagen-dir served the dataset across a SIGKILL", stored)
}
