package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestStatusWaitByKind: status JOB --wait follows a job through the Wait
// its family registers and prints it as the kind's submit --wait does: a
// perft job in text and JSON, a match and a tune, exit 0. Every built-in
// job kind registers one (the --wait help line lists them from the
// registry); a job of a kind without one is refused with exit status 2,
// naming the kinds that can (kinds/kindtest's TestFakeKindInEveryRegistry,
// where a fake kind registers a Wait and a job of a kind without one is
// refused).
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
	if code != 0 || !strings.Contains(out, tuneID) || !strings.Contains(out, "2 of 2 updates applied") {
		t.Errorf("status %s --wait: exit %d:\n%s", tuneID, code, out)
	}
	out, code = run("status", "--help")
	if want := "with a JOB of kind datagen, epd, match, perft, sprt, spsa: wait"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("status --help lacks %q:\n%s", want, out)
	}
}
