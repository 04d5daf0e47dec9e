package main

import (
	"strings"
	"testing"
)

// TestFetchAndHookFlagsRefused: the bounds of git fetches, webhook
// deliveries and the disk quota are refused out of range, exit 2 naming
// the flag, before the coordinator starts.
func TestFetchAndHookFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--git-max-bytes", "0"}, "--git-max-bytes 0"},
		{[]string{"--git-stall", "0s"}, "--git-stall 0s"},
		{[]string{"--git-timeout", "-1s"}, "--git-timeout -1s"},
		{[]string{"--hook-concurrency-per-owner", "0"}, "--hook-concurrency-per-owner 0"},
		{[]string{"--hook-concurrency", "2", "--hook-concurrency-per-owner", "3"}, "--hook-concurrency 2"},
		{[]string{"--max-disk-bytes-per-identity", "-1"}, "--max-disk-bytes-per-identity -1"},
	} {
		args := append([]string{"coordinator", "--token", "T", "--listen", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)
		_, _, err := runArbiter(t, "", args...)
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}
}
