package main

import (
	"strings"
	"testing"
)

// TestAdmissionFlags: bad admission settings are refused before anything
// starts, naming the flag and what is wrong (exit status 2). Control:
// good ones start a coordinator.
func TestAdmissionFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trusted-proxy", "bogus"}, `--trusted-proxy "bogus": want a CIDR`},
		{[]string{"--max-request-bytes-per-identity", "1000"}, "--max-request-bytes-per-identity 1000: must be at least"},
		{[]string{"--max-request-bytes", "1000"}, "--max-request-bytes 1000: must be at least --max-request-bytes-per-identity"},
		{[]string{"--hash-workers", "100"}, "--hash-workers 100: must be between 1 and 64"},
		{[]string{"--hash-queue", "-1"}, "--hash-queue -1"},
	} {
		args := append([]string{"coordinator", "--token", "T", "--listen", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)
		_, _, err := runArbiter(t, "", args...)
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}
	p := startArbiterProcess(t, nil, "coordinator", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", t.TempDir(),
		"--token", "T", "--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "127.0.0.1", "--max-request-bytes", "256000000",
		"--max-request-bytes-per-identity", "40000000", "--hash-workers", "1", "--hash-queue", "4")
	p.waitLine(t, "arbiter coordinator: pages on ")
}
