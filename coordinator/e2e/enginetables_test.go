//go:build unix

package e2e

// The embedded engine probing the worker's Syzygy tables in search
// (syzygy=N on its --engine): real coordinator and worker processes.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
	"github.com/arbiter-chess/arbiter/testing/tbtest"
)

// TestEngineProbesTheWorkersTables: a test of engine "tb" (syzygy=4)
// against the same engine without, from KQ v KR with the rook hanging, at
// depth 3 a move. A worker without tables is not given the test (the job
// says why); a worker with --syzygy plays it, and the tables decide the
// games: "tb" converts KQ v K as White (mate), "plain" cannot within 50
// moves against it (draw): pentanomial [0 0 0 1 0]. The control, the
// same test with "tb" without syzygy=, draws both games: [0 0 1 0 0].
func TestEngineProbesTheWorkersTables(t *testing.T) {
	tables := tbtest.Dir(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--replay-fraction", "0")
	book := filepath.Join(t.TempDir(), "kqkr.epd")
	if err := os.WriteFile(book, []byte("8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	submit := func(tb string) string {
		args := append([]string{"submit", "match"}, clientArgs(addr)...)
		out, code := cli(t, append(args, "--engine", tb, "--engine", "name=plain,builtin", "--openings", "file="+book,
			"--each", "depth=3", "--games", "2")...)
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, out)
		}
		return jobID(out)
	}
	conn := dial(t, addr, token)
	probing := submit("name=tb,builtin,syzygy=4")
	startWorker(t, addr, "--name", "notables")
	j := waitFor(t, conn, probing, time.Minute, "the test blocked on a worker without tables", func(j *arbiterv1.Job) bool {
		return strings.Contains(j.GetProgress().GetBlocked(), "Syzygy tables")
	})
	t.Logf("blocked: %s", j.GetProgress().GetBlocked())
	if g := j.GetMatchProgress().GetGames(); g != 0 {
		t.Fatalf("%d games played by a worker without tables", g)
	}

	startWorker(t, addr, "--name", "tables", "--syzygy", tables)
	pentanomial := func(id string) []uint64 {
		j := waitFor(t, conn, id, 3*time.Minute, "the test done", func(j *arbiterv1.Job) bool {
			return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE
		})
		p := j.GetMatchProgress().GetPentanomial()
		return []uint64{p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw()}
	}
	if got := pentanomial(probing); !slices.Equal(got, []uint64{0, 0, 0, 1, 0}) {
		t.Errorf("tb (syzygy=4) vs plain: pentanomial %v, want [0 0 0 1 0] (a mate as White, a draw as Black)", got)
	}
	if got := pentanomial(submit("name=tb,builtin")); !slices.Equal(got, []uint64{0, 0, 1, 0, 0}) {
		t.Errorf("control, tb without syzygy= vs plain: pentanomial %v, want [0 0 1 0 0] (two fifty-move draws)", got)
	}
}
