package main

import (
	"bytes"
	"testing"

	"github.com/arbiter-chess/arbiter/base/benchparse"
)

// TestBenchParsers: `arbiter bench` is read by the current and the older
// OpenBench client and by Fishtest, with their own expressions.
func TestBenchParsers(t *testing.T) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"bench", "--depth", "3"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	ob, nps, ok := benchparse.OpenBench(text)
	if !ok || ob <= 0 || nps <= 0 {
		t.Errorf("OpenBench read %d nodes, %d nps, %v from\n%s", ob, nps, ok, text)
	}
	old, oldNPS, ok := benchparse.OpenBenchOld(text)
	if !ok || old != ob || oldNPS != nps {
		t.Errorf("older OpenBench read %d nodes, %d nps, %v from\n%s", old, oldNPS, ok, text)
	}
	fish, _, ok := benchparse.Fishtest(text)
	if !ok || fish != ob {
		t.Errorf("Fishtest read %d nodes, %v from\n%s", fish, ok, text)
	}
}
