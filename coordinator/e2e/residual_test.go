//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// Workers judged by their results (coordinator/gamepair/residual.go), with
// real processes: a coordinator, worker processes of their own identities,
// and an engine that plays as well as the baseline everywhere but on one
// worker, where it plays random moves.

// skewEnv is the variable the skewed engine looks at: set on one worker
// process only.
const skewEnv = "ARBITER_TEST_SKEW"

// skewEngine writes an engine that runs this binary's UCI engine, or the
// random mover (badengine) where skewEnv is set, and returns its path.
func skewEngine(t *testing.T) string {
	t.Helper()
	return switchedEngine(t, skewEnv)
}

// switchedEngine writes an engine script that runs this binary's UCI
// engine, or badengine with badArgs where variable env is set (on one
// worker process only), and returns its path.
func switchedEngine(t *testing.T, env string, badArgs ...string) string {
	t.Helper()
	bad, err := badEngineBinary(t)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dev-engine.sh")
	script := fmt.Sprintf("#!/bin/sh\nif [ -n \"$%s\" ]; then exec %q %s; fi\nexec %q uci\n", env, bad, strings.Join(badArgs, " "), bin)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// startWorkerEnv is startWorker with extra environment.
func startWorkerEnv(t *testing.T, addr string, env []string, extra ...string) *proc {
	t.Helper()
	return startWorkerWith(t, addr, workerToken(t, addr), env, extra...)
}

// startWorkerWith starts a worker process with credential tok and extra
// environment.
func startWorkerWith(t *testing.T, addr, tok string, env []string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"worker", "--coordinator", addr, "--token", tok, "--threads", "1", "--hash", "16", "--log-level", "info"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: &out}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("--- worker output:\n%s", lastLines(out.String(), 30))
		}
	})
	return p
}

// residualMatch submits the match the residual tests play: dev (the
// engine script) at 600 nodes against the builtin engine at 450 (node
// odds, so that pairs are won, drawn and lost), batches of two pairs,
// more games than the tests wait for.
func residualMatch(t *testing.T, addr, engine string) string {
	t.Helper()
	return submitTestEngines(t, addr, "name=dev,cmd="+engine, "name=base,builtin,nodes=450", "--each", "nodes=600", "--games", "4000",
		"--batch-pairs", "2", "--openings", "file="+book+",order=random,seed=11")
}

func workerRow(j *arbiterv1.Job, name string) *arbiterv1.WorkerIncidents {
	for _, w := range j.GetMatchProgress().GetWorkers() {
		if w.GetName() == name {
			return w
		}
	}
	return nil
}

// A worker whose engine plays far weaker there (random moves) is excluded
// from the test by its residual while the test runs; the honest ones are
// not, and the test page's figures (status) show every worker's residual.
func TestSkewedWorkerExcludedByResidual(t *testing.T) {
	if testing.Short() {
		t.Skip("plays games on three worker processes")
	}
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	engine := skewEngine(t)
	for _, name := range []string{"honest-1", "honest-2"} {
		startWorker(t, addr, "--name", name, "--engine-allow", engine)
	}
	startWorkerEnv(t, addr, []string{skewEnv + "=1"}, "--name", "skewed", "--engine-allow", engine)
	id := residualMatch(t, addr, engine)
	conn := dial(t, addr, token)
	j := waitFor(t, conn, id, 8*time.Minute, "the skewed worker excluded", func(j *arbiterv1.Job) bool {
		w := workerRow(j, "skewed")
		return w != nil && w.GetExcluded()
	})
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("the test ended before the exclusion: %v", j.GetState())
	}
	w := workerRow(j, "skewed")
	if !strings.Contains(w.GetReason(), "results lie far") {
		t.Fatalf("skewed worker excluded for another reason: %s", w.GetReason())
	}
	for _, name := range []string{"honest-1", "honest-2"} {
		h := workerRow(j, name)
		if h == nil || h.GetExcluded() {
			t.Fatalf("honest worker %s: %v", name, h)
		}
		if h.GetHasResidual() && h.GetResidual() > gamepair.DefaultResidualLimit {
			t.Fatalf("honest worker %s residual %v", name, h.GetResidual())
		}
	}
	t.Logf("skewed worker excluded after %d games of the test: %s", j.GetMatchProgress().GetGames(), w.GetReason())
	// The status report shows the residual column.
	out, code := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	if code != 0 || !strings.Contains(out, "RESIDUAL") || !strings.Contains(out, "results lie far") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	// The skewed worker gets no more batches: its games stay as they are.
	games := w.GetGames()
	time.Sleep(3 * time.Second)
	if w2 := workerRow(getJob(t, conn, id), "skewed"); w2.GetGames() > games+4 {
		t.Fatalf("the excluded worker played on: %d games, then %d", games, w2.GetGames())
	}
	if out, code := cli(t, append([]string{"cancel", id}, clientArgs(addr)...)...); code != 0 {
		t.Fatalf("cancel: %s", out)
	}
}

// Honest workers are not excluded: the same match without the skew, each
// run until every worker has a residual over at least residualPairs game
// pairs of its own. ARBITER_E2E_RESIDUAL_RUNS sets the number of runs (1
// by default; the issue asks for 20, run by hand: docs/sprt-cluster.md
// has the figures and the false-positive rate of the limit).
func TestHonestWorkersNotExcluded(t *testing.T) {
	if testing.Short() {
		t.Skip("plays games on three worker processes")
	}
	runs := 1
	if v, err := strconv.Atoi(os.Getenv("ARBITER_E2E_RESIDUAL_RUNS")); err == nil && v > 0 {
		runs = v
	}
	const residualPairs = 30
	engine := skewEngine(t)
	for run := 1; run <= runs; run++ {
		t.Run(fmt.Sprintf("run-%d", run), func(t *testing.T) {
			addr := proctest.FreeAddr(t)
			coordinator(t, addr, t.TempDir())
			names := []string{"honest-1", "honest-2", "honest-3"}
			for _, name := range names {
				startWorker(t, addr, "--name", name, "--engine-allow", engine)
			}
			id := residualMatch(t, addr, engine)
			conn := dial(t, addr, token)
			var maxZ float64
			j := waitFor(t, conn, id, 10*time.Minute, "every worker judged", func(j *arbiterv1.Job) bool {
				for _, w := range j.GetMatchProgress().GetWorkers() {
					if w.GetExcluded() {
						t.Fatalf("honest worker %s excluded: %s", w.GetName(), w.GetReason())
					}
				}
				for _, name := range names {
					w := workerRow(j, name)
					if w == nil || !w.GetHasResidual() || w.GetGames() < 2*residualPairs {
						return false
					}
				}
				return true
			})
			for _, w := range j.GetMatchProgress().GetWorkers() {
				maxZ = max(maxZ, w.GetResidual())
			}
			t.Logf("run %d: %d games, largest residual %.2f, none excluded", run, j.GetMatchProgress().GetGames(), maxZ)
			cli(t, append([]string{"cancel", id}, clientArgs(addr)...)...)
		})
	}
}
