//go:build linux

package main

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every mode relays real searches of a real engine to the end: a reader
// that lost a line or a wake-up would hang here (the test's timeout).
func TestEveryModeRelays(t *testing.T) {
	const sf = "/usr/games/stockfish"
	if _, err := os.Stat(sf); err != nil {
		t.Skip("needs Debian's stockfish")
	}
	report := regexp.MustCompile(`^mode=\w+ quiet=\S+ batch=(true|false) workers=2 searches=12 .*CPU .*, \d+\.\d\d ms per 137 searches, \d+\.\d\d voluntary thread switches per search$`)
	for mode := range starters {
		for _, quiet := range []time.Duration{0, 2 * time.Millisecond} {
			got, err := measure(config{mode: mode, engine: sf, workers: 2, searches: 6, nodes: 2000, quiet: quiet})
			if err != nil {
				t.Fatalf("%s, quiet %v: %v", mode, quiet, err)
			}
			if !report.MatchString(got) {
				t.Errorf("%s, quiet %v: report %q", mode, quiet, got)
			}
		}
	}
	// Last, as it switches this whole process to SCHED_BATCH.
	got, err := measure(config{mode: "engineproc", engine: sf, workers: 2, searches: 6, nodes: 2000, quiet: 2 * time.Millisecond, batch: true})
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOSYS) {
			t.Skipf("this sandbox refuses scheduling policies: %v", err)
		}
		t.Fatalf("-batch: %v", err)
	}
	if !report.MatchString(got) || !strings.Contains(got, "batch=true") {
		t.Errorf("-batch: report %q", got)
	}
}

func TestBadConfigIsRefused(t *testing.T) {
	for _, c := range []config{
		{mode: "engineproc", engine: "x", workers: 0, searches: 1, nodes: 1},
		{mode: "engineproc", engine: "x", workers: 1, searches: 1, nodes: 1, quiet: -1},
		{mode: "select", engine: "x", workers: 1, searches: 1, nodes: 1},
	} {
		if _, err := measure(c); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}
