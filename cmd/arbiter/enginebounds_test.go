package main

import (
	"strings"
	"testing"
)

// TestWorkerEngineBoundsRefused: a worker's bounds on installed engines'
// Hash and Threads that mean nothing are refused before it starts, exit
// 2, naming the flag or entry key and what it takes.
func TestWorkerEngineBoundsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine-max-hash", "0"}, "--engine-max-hash 0: want MB in 1..1073741824"},
		{[]string{"--engine-max-hash", "-5"}, "--engine-max-hash -5: want MB in 1..1073741824"},
		{[]string{"--engine-max-threads", "-1"}, "--engine-max-threads -1: want 0 (the worker's --threads) to 4096"},
		{[]string{"--engine-max-threads", "5000"}, "--engine-max-threads 5000: want 0 (the worker's --threads) to 4096"},
		{[]string{"--engine-allow", "name=sf,cmd=/bin/true,maxhash=lots"}, `maxhash="lots": want a whole number in 1..1073741824`},
		{[]string{"--engine-allow", "name=sf,cmd=/bin/true,maxthreads=0"}, `maxthreads="0": want a whole number`},
	} {
		args := append([]string{"worker", "--coordinator", "127.0.0.1:1", "--token", "x"}, c.args...)
		_, _, err := runArbiter(t, "", args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: exit %d, %v; want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}
}
