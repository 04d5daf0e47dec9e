//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestDatagenViriformat: a dataset submitted with --format viriformat to
// a coordinator process and played by a worker process is pulled in every
// format (checkDataset: the viriformat file, read by the reader written
// from the format's definition, holds exactly the text's records, in
// order). --filters none: the positions of a game are consecutive, so
// the file is mostly whole games. `datagen pull --format viri --out DIR`
// writes DIR/JOB.vf, the same bytes again.
func TestDatagenViriformat(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	startWorker(t, addr, "--name", "w1")
	const n = 600
	id := submitDatagen(t, addr, "--positions", fmt.Sprint(n), "--each", "nodes=300", "--random-plies", "8-9",
		"--random-seed", "3", "--batch-games", "2", "--filters", "none", "--format", "viriformat")
	waitDataset(t, dial(t, addr, token), id, 4*time.Minute)
	checkDataset(t, addr, data, id, n, false)

	dir := t.TempDir()
	pull := func(out string, extra ...string) string {
		t.Helper()
		args := append([]string{"datagen", "pull", id, "--format", "viri", "--out", out}, append(extra, clientArgs(addr)...)...)
		text, code := cli(t, args...)
		if code != 0 || !strings.Contains(text, fmt.Sprintf(": %d records, ", n)) || !strings.Contains(text, "viriformat") {
			t.Fatalf("pull --format viri %s: exit %d:\n%s", strings.Join(extra, " "), code, lastLines(text, 5))
		}
		return text
	}
	pull(dir)
	progress := pull(filepath.Join(dir, "again.vf"), "--each-shard")
	a, errA := os.ReadFile(filepath.Join(dir, id+".vf"))
	b, errB := os.ReadFile(filepath.Join(dir, "again.vf"))
	if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two pulls differ or are missing: %v %v, %d and %d bytes", errA, errB, len(a), len(b))
	}
	t.Logf("viriformat, --filters none: %d bytes for %d positions, %.2f bytes a position", len(a), n, float64(len(a))/n)
	checkViriResume(t, pull, id, a, progress)

	// A shuffle would tear games apart: refused, naming the flag.
	args := append([]string{"datagen", "pull", id, "--format", "viriformat", "--shuffle", "--out", filepath.Join(dir, "s.vf")}, clientArgs(addr)...)
	if text, code := cli(t, args...); code != 2 || !strings.Contains(text, "--shuffle") {
		t.Fatalf("pull --shuffle of viriformat: exit %d:\n%s", code, lastLines(text, 5))
	}
}

// checkViriResume: a pull interrupted after its second shard, with a torn
// third shard behind it, goes on with --resume to the same bytes as the
// whole pull. The state it goes on from is the one the pull writes after
// a shard (FILE.pull): shards done, bytes and records written; the bytes
// are where the second shard's last viriformat game ends (a viriformat
// game never spans two shards, as an Arbiter game's records are in one
// shard), found with the reader from the record count the pull printed
// after that shard.
func checkViriResume(t *testing.T, pull func(string, ...string) string, id string, full []byte, progress string) {
	t.Helper()
	var shards, records int
	for _, line := range strings.Split(progress, "\n") {
		if k, err := fmt.Sscanf(line, "shard 2/%d: %d records", &shards, &records); k == 2 && err == nil {
			break
		}
	}
	if shards < 3 || records == 0 {
		t.Fatalf("the pull printed no second shard of three or more:\n%s", lastLines(progress, 8))
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.vf")
	if err := os.WriteFile(whole, full, 0o644); err != nil {
		t.Fatal(err)
	}
	end, seen := -1, 0
	err := datagen.ReadViriFile(whole, func(g datagen.ViriGame) error {
		seen += len(g.Positions)
		if seen == records && end < 0 {
			end = int(g.Offset) + datagen.ViriBoardSize + (len(g.Positions)+1)*datagen.ViriMoveSize
		}
		return nil
	})
	if err != nil || end <= 0 || end+37 > len(full) {
		t.Fatalf("no viriformat game ends at record %d of %d bytes: %v (end %d)", records, len(full), err, end)
	}
	out := filepath.Join(dir, "resumed.vf")
	torn := append(bytes.Clone(full[:end]), full[end:end+37]...)
	state := fmt.Sprintf(`{"job":%q,"format":"viriformat","next_shard":2,"bytes":%d,"records":%d,"games":0}`, id, end, records)
	if os.WriteFile(out, torn, 0o644) != nil || os.WriteFile(out+".pull", []byte(state), 0o644) != nil {
		t.Fatal("cannot write the interrupted pull")
	}
	pull(out, "--resume")
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, full) {
		t.Fatalf("the resumed pull: %v, %d bytes, not the whole pull's %d", err, len(got), len(full))
	}
	if _, err := os.Stat(out + ".pull"); !os.IsNotExist(err) {
		t.Fatalf("the pull state stays after the resumed pull: %v", err)
	}
}
