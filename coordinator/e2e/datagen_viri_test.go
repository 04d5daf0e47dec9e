package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDatagenViriformat: a dataset submitted with --format viriformat to
// a coordinator process and played by a worker process is pulled in every
// format (checkDataset: the viriformat file, read by the reader written
// from the format's definition, holds exactly the text's records, in
// order). --filters none: the positions of a game are consecutive, so
// the file is mostly whole games. `datagen pull --format viri --out DIR`
// writes DIR/JOB.vf, the same bytes again.
func TestDatagenViriformat(t *testing.T) {
	addr, data := freeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	startWorker(t, addr, "--name", "w1")
	const n = 600
	id := submitDatagen(t, addr, "--positions", fmt.Sprint(n), "--each", "nodes=300", "--random-plies", "8-9",
		"--random-seed", "3", "--batch-games", "2", "--filters", "none", "--format", "viriformat")
	waitDataset(t, dial(t, addr, token), id, 4*time.Minute)
	checkDataset(t, addr, data, id, n, false)

	dir := t.TempDir()
	pull := func(out string) {
		t.Helper()
		args := append([]string{"datagen", "pull", id, "--format", "viri", "--out", out}, clientArgs(addr)...)
		if text, code := cli(t, args...); code != 0 || !strings.Contains(text, fmt.Sprintf(": %d records, ", n)) || !strings.Contains(text, "viriformat") {
			t.Fatalf("pull --format viri: exit %d:\n%s", code, lastLines(text, 5))
		}
	}
	pull(dir)
	pull(filepath.Join(dir, "again.vf"))
	a, errA := os.ReadFile(filepath.Join(dir, id+".vf"))
	b, errB := os.ReadFile(filepath.Join(dir, "again.vf"))
	if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two pulls differ or are missing: %v %v, %d and %d bytes", errA, errB, len(a), len(b))
	}
	t.Logf("viriformat, --filters none: %d bytes for %d positions, %.2f bytes a position", len(a), n, float64(len(a))/n)

	// A shuffle would tear games apart: refused, naming the flag.
	args := append([]string{"datagen", "pull", id, "--format", "viriformat", "--shuffle", "--out", filepath.Join(dir, "s.vf")}, clientArgs(addr)...)
	if text, code := cli(t, args...); code != 2 || !strings.Contains(text, "--shuffle") {
		t.Fatalf("pull --shuffle of viriformat: exit %d:\n%s", code, lastLines(text, 5))
	}
}
