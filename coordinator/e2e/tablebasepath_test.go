//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestClientCannotPointTheEmbeddedEngineAtTablebases: SyzygyPath names a
// directory on the coordinator (checked at submit) and on every worker, so
// a client's test that sets it is refused at submit, in any spelling, even
// for a directory that holds tables (the refusal is the coordinator's:
// the client command opens the directory as a table set and passes it
// on); the control, the same client's test with the other Syzygy
// options, is accepted. A real coordinator and the real client command.
func TestClientCannotPointTheEmbeddedEngineAtTablebases(t *testing.T) {
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	client := newCredential(t, addr, "client")
	tables := t.TempDir()
	if err := os.WriteFile(filepath.Join(tables, "KQvK.rtbw"), []byte("not a table"), 0o600); err != nil {
		t.Fatal(err)
	}
	submitWith := func(engine string) (string, int) {
		return cli(t, "submit", "match", "--coordinator", addr, "--token", client, "--engine", engine, "--engine", "name=base,builtin",
			"--each", "nodes=500", "--openings", "file="+book+",order=random,seed=5", "--games", "2")
	}
	for _, opt := range []string{"SyzygyPath=" + tables, "syzygypath=" + tables, "SYZYGYPATH=" + tables} {
		out, code := submitWith("name=tb,builtin,option." + opt)
		if code == 0 || !strings.Contains(out, "names a file on the workers, which is not a client's to name") {
			t.Errorf("option.%s: exit %d, %s; want refused at submit", opt, code, out)
		}
	}
	out, code := submitWith("name=tb,builtin,option.SyzygyProbeLimit=5,option.Syzygy50MoveRule=false")
	if code != 0 {
		t.Fatalf("control: the other Syzygy options refused: exit %d: %s", code, out)
	}
	cli(t, "cancel", jobID(out), "--coordinator", addr, "--token", client)
}
