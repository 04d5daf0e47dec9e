//go:build linux

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientCannotSizeAllowedEnginesBeyondBounds: a client names the
// worker's allowed Stockfish with Hash at Stockfish's maximum (32 TB) or
// Threads at 1024: the worker, bounded by its operator to 64 MB and 1
// thread (--engine-max-hash, --engine-max-threads), starts no engine for
// it and is excluded from the test with the reason, the bound and the
// setting that raises it; no game is counted. The control: the same
// engine within the bounds plays its games on that worker.
func TestClientCannotSizeAllowedEnginesBeyondBounds(t *testing.T) {
	addr, client, w := stockfishWorker(t, "--name", "bounded", "--engine-max-hash", "64", "--engine-max-threads", "1")

	for _, c := range []struct{ name, engine, want string }{
		{"hash", "name=big,cmd=stockfish,option.Hash=33554432",
			"option Hash=33554432 MB is not allowed on this worker: above its operator's bound of 64 MB (--engine-max-hash, or maxhash= in --engine-allow)"},
		{"threads", "name=many,cmd=stockfish,option.Threads=1024",
			"option Threads=1024 is not allowed on this worker: above its operator's bound of 1 (--engine-max-threads, or maxthreads= in --engine-allow)"},
	} {
		refusedByWorker(t, addr, client, c.name, c.engine, c.want)
	}
	if kids := childrenOf(w.cmd.Process.Pid); len(kids) > 0 {
		t.Errorf("the worker has engine processes after the refusals: %v", kids)
	}

	// The control: within the bounds, the same engine plays on that worker.
	id := clientSubmit(t, addr, client, "name=sf,cmd=stockfish,option.Hash=64,option.Threads=1", "name=base,builtin")
	j := waitFor(t, dial(t, addr, token), id, 2*time.Minute, "the bounded engine's test", done)
	if g := j.GetMatchProgress().GetGames(); g != 2 {
		t.Fatalf("engine within the bounds: %d games", g)
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []string {
	return processes("stat", func(child, stat string) string {
		// pid (comm) state ppid ...: comm may hold blanks, so read after ')'.
		f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			return child
		}
		return ""
	})
}
