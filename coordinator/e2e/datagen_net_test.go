//go:build unix

package e2e

// DATAGEN with a net (issue 44): `submit datagen --engine
// name=dev,builtin,net=FILE|SHA|default` plays the dataset's games with
// that net, which the worker downloads and checks by its hash as it does
// a test's.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kdatagen "github.com/arbiter-chess/arbiter/kinds/datagen"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestDatagenWithNet: on a coordinator process and a worker process, the
// same dataset (same seed, nodes, positions) of the embedded engine is
// made three times: with its own net twice (the control: the same data,
// so that a difference means something) and with a net trained here and
// uploaded by net=FILE, whose data differ. The job carries the net's
// full hash, and net=SHA gives the data of net=FILE. A net hash the coordinator
// does not have is refused at submit, naming it.
func TestDatagenWithNet(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	conn := dial(t, addr, token)
	startWorkerIn(t, addr, "w1") // with a data dir, where nets are kept
	netFile := trainNet(t, 1)

	args := []string{"--positions", "60", "--each", "nodes=300", "--random-plies", "8-9", "--random-seed", "5", "--batch-games", "2"}
	pull := func(id string) []byte {
		t.Helper()
		waitDataset(t, conn, id, 3*time.Minute)
		out := filepath.Join(t.TempDir(), id+".txt")
		if o, code := cli(t, append([]string{"datagen", "pull", id, "--format", "text", "--out", out}, clientArgs(addr)...)...); code != 0 {
			t.Fatalf("pull %s: exit %d: %s", id, code, o)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	own := pull(submitDatagen(t, addr, append(args, "--engine", "name=dev,builtin")...))
	again := pull(submitDatagen(t, addr, append(args, "--engine", "name=dev,builtin")...))
	if !bytes.Equal(own, again) {
		t.Fatalf("the control: the same dataset twice differs (%d and %d bytes): the comparison below would mean nothing", len(own), len(again))
	}
	netID := submitDatagen(t, addr, append(args, "--engine", "name=dev,builtin,net="+netFile)...)
	withNet := pull(netID)
	if bytes.Equal(own, withNet) {
		t.Fatalf("the dataset with the uploaded net is the embedded net's (%d bytes): the net was not played", len(own))
	}
	j := getJobQuiet(conn, netID)
	sha := kdatagen.DatagenOf(j).GetSpec().GetEngine().GetNet().GetSha256()
	if len(sha) != 64 {
		t.Fatalf("the job's engine names no full net hash: %v", kdatagen.DatagenOf(j).GetSpec().GetEngine())
	}
	t.Logf("own net: %d bytes of records; net %s: %d bytes", len(own), sha[:12], len(withNet))

	// By hash: the same net stored, the same data as by file.
	if byHash := pull(submitDatagen(t, addr, append(args, "--engine", "name=dev,builtin,net="+sha[:12])...)); !bytes.Equal(byHash, withNet) {
		t.Fatalf("net=%s gave other data than net=FILE of the same net", sha[:12])
	}

	// net rm: refused while a running dataset plays the net, done once it
	// is cancelled.
	big := submitDatagen(t, addr, "--positions", "1000000", "--each", "nodes=300", "--engine", "name=dev,builtin,net="+sha[:12])
	out, code := cli(t, append([]string{"net", "rm", sha[:12]}, clientArgs(addr)...)...)
	if code == 0 || !strings.Contains(out, big) {
		t.Fatalf("net rm while dataset %s runs: exit %d: %s", big, code, out)
	}
	cli(t, append([]string{"cancel", big}, clientArgs(addr)...)...)
	if out, code = cli(t, append([]string{"net", "rm", sha[:12]}, clientArgs(addr)...)...); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("net rm after the dataset: exit %d: %s", code, out)
	}

	// A net the coordinator does not have: refused at submit, naming it.
	out, code = cli(t, append(append([]string{"submit", "datagen"}, clientArgs(addr)...),
		append(args, "--engine", "name=dev,builtin,net=0123456789abcdef")...)...)
	if code == 0 || !strings.Contains(out, `engine: net: artifact "0123456789abcdef": not stored on this coordinator`) {
		t.Fatalf("unknown net: exit %d: %s", code, out)
	}
}
