package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// farmJobs counts the farm's jobs by kind.
func farmJobs(t *testing.T, farm *farmtest.Farm) map[string]int {
	t.Helper()
	c := farm.Client(t)
	resp, err := c.Jobs.ListJobs(context.Background(), &arbiterv1.ListJobsRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, j := range resp.GetJobs() {
		n[j.GetKind()]++
	}
	return n
}

// killAtJob runs the binary with args until the step of kind has written
// its farm job's id in its directory, SIGKILLs it and returns the id and
// what the process printed.
func killAtJob(t *testing.T, dir, kind string, args []string) (string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
	logf, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "steps", kind+"-*", "job"))
		if len(files) == 1 {
			b, _ := os.ReadFile(files[0])
			if id := strings.TrimSpace(string(b)); id != "" {
				if err := cmd.Process.Kill(); err != nil { // SIGKILL
					t.Fatal(err)
				}
				cmd.Wait()
				out, _ := os.ReadFile(logf.Name())
				return id, string(out)
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("no %s job after 3 minutes:\n%s", kind, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNetLoopFarmReattachesAfterSIGKILL: `net loop --coordinator` against
// a farm (a coordinator with two workers serving gRPC on loopback) is
// SIGKILLed once its datagen job is submitted and again once its SPRT job
// is; each rerun re-attaches to the job its step's directory names (it
// says so) and the farm ends with one DATAGEN job and one SPRT test, not more.
// The loop ends done, with the 3000 positions pulled from the farm.
func TestNetLoopFarmReattachesAfterSIGKILL(t *testing.T) {
	farm := farmtest.Start(t, 2, func(c *localcluster.Config) { c.UploadedEngines = true })
	dir := filepath.Join(t.TempDir(), "loop")
	loop := []string{"--dir", dir, "--engine", "name=dev,builtin", "--generations", "1", "--positions", "3000",
		"--each", "nodes=300", "--train", "epochs=2,batch=256", "--sprt", "elo0=-50,elo1=50", "--games-cap", "24"}
	args := append([]string{"net", "loop", "--coordinator", farm.Addr(), "--token", farm.Token()}, loop...)

	dgJob, _ := killAtJob(t, dir, "datagen", args)
	sprtJob, second := killAtJob(t, dir, "sprt", args)
	if !strings.Contains(second, "datagen: re-attached to job "+dgJob) || strings.Contains(second, "datagen: submitted") {
		t.Errorf("the second run did not re-attach to the datagen job %s:\n%s", dgJob, second)
	}
	t.Logf("second run, killed at SPRT job %s:\n%s", sprtJob, second)
	stdout, stderr, code := runMain(t, args...)
	if code != 0 {
		t.Fatalf("the loop after two kills: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("after the kills at jobs %s and %s:\n%s%s", dgJob, sprtJob, stderr, stdout)
	if !strings.Contains(stderr, "sprt: re-attached to job "+sprtJob) {
		t.Errorf("the last run did not re-attach to the SPRT job %s:\n%s", sprtJob, stderr)
	}
	if n := farmJobs(t, farm); n["datagen"] != 1 || n["sprt"] != 1 || len(n) != 2 {
		t.Errorf("the farm's jobs: %v; want one datagen and one sprt", n)
	}
	got := netLoopStatusJSON(t, dir)
	if !got.Done || got.Generations[0].SPRT.State != "done" {
		t.Fatalf("status: %+v", got)
	}
	if d := got.Generations[0].Datagen.Result; d.Positions != 3000 {
		t.Errorf("the data pulled from the farm: %d positions, want 3000", d.Positions)
	}
}

// TestNetLoopFarmBadInput: an unreachable coordinator and a refused
// credential are named before any step runs and before the loop's
// directory is made.
func TestNetLoopFarmBadInput(t *testing.T) {
	farm := farmtest.Start(t, 0)
	dir := filepath.Join(t.TempDir(), "loop")
	loop := []string{"--dir", dir, "--engine", "name=dev,builtin", "--positions", "100", "--each", "nodes=100"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--coordinator", "127.0.0.1:1", "--token", "x"}, "coordinator 127.0.0.1:1 unreachable"},
		{[]string{"--coordinator", farm.Addr(), "--token", "wrong"}, "coordinator " + farm.Addr() + " refused the credential"},
	} {
		_, stderr, code := runMain(t, append(append([]string{"net", "loop"}, c.args...), loop...)...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "generation 1:") {
			t.Errorf("%v: exit %d, want %q before any step:\n%s", c.args, code, c.want, stderr)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the refused loop made its directory %s", dir)
	}
}
