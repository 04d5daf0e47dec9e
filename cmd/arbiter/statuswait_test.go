package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestStatusWaitByKind: status JOB --wait follows a job through the Wait
// its family registers: a perft job is waited for and printed as submit
// perft --wait prints it, in text and JSON, and a match as submit match
// --wait prints it, exit 0. A tune (the SPSA kind registers no Wait) is
// refused with exit status 2 and a message naming the job, its kind and
// the kinds that can be waited for, read from the registry
// (kinds/kindtest's TestFakeKindInEveryRegistry shows a kind that
// registers a Wait joining them). The perft job and the match are the
// control: the same command on the same farm succeeds for a kind with a
// Wait.
func TestStatusWaitByKind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	t.Setenv(auth.EnvToken, "")
	farm := farmtest.Start(t, 1)
	conn := []string{"--coordinator", farm.Addr(), "--token", farm.Token()}
	run := func(args ...string) (string, int) {
		t.Helper()
		out, _, err := runArbiter(t, "", append(args, conn...)...)
		if err != nil {
			return err.Error(), exitCode(err)
		}
		return out, 0
	}

	out, code := run("submit", "perft", "--depth", "3")
	if code != 0 {
		t.Fatalf("submit perft: exit %d: %s", code, out)
	}
	perftID := strings.TrimSpace(out)
	out, code = run("status", perftID, "--wait")
	if code != 0 || !strings.Contains(out, "Nodes: 8902\n") || !strings.Contains(out, "Units: ") {
		t.Errorf("status %s --wait: exit %d:\n%s", perftID, code, out)
	}
	out, code = run("status", perftID, "--wait", "--json")
	var js struct {
		JobID string      `json:"job_id"`
		Nodes json.Number `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || js.JobID != perftID || js.Nodes != "8902" {
		t.Errorf("status %s --wait --json: exit %d (%v): %s", perftID, code, err, out)
	}

	out, code = run("submit", "match", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=100",
		"--openings", "file=../../books/uho-200.epd", "--games", "2", "--batch-pairs", "1")
	if code != 0 {
		t.Fatalf("submit match: exit %d: %s", code, out)
	}
	testID := strings.TrimSpace(out)
	out, code = run("status", testID, "--wait")
	if code != 0 || !strings.Contains(out, "Test:       "+testID+" (match)") || !strings.Contains(out, "State:      done") {
		t.Errorf("status %s --wait: exit %d:\n%s", testID, code, out)
	}

	out, code = run("submit", "spsa", "--engine", "name=dev,builtin,option.UseNNUE=false", "--params", "from-engine:RFPMargin",
		"--pairs", "2", "--batch-pairs", "1", "--each", "nodes=100", "--openings", "file=../../books/uho-200.epd")
	if code != 0 {
		t.Fatalf("submit spsa: exit %d: %s", code, out)
	}
	tuneID := strings.TrimSpace(out)
	out, code = run("status", tuneID, "--wait")
	if want := "--wait: job " + tuneID + " (kind spsa) cannot be waited for; the kinds that can: match, perft, sprt"; code != 2 || out != want {
		t.Errorf("status %s --wait: exit %d %q; want exit 2 %q", tuneID, code, out, want)
	}
}
