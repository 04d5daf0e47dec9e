package main

import (
	"strings"
	"testing"
)

// TestCountAfter reads the counts out of the reference programs' output
// as they print it, and refuses output without one.
func TestCountAfter(t *testing.T) {
	perftCPU := "CPU mode (threads: 1, TT: off)\n\nPerft(06): 8031647685, time: 4.1 seconds, nps: 1958938459\n"
	if n, err := countAfter([]byte(perftCPU), "Perft(06): ", ","); err != nil || n != 8031647685 {
		t.Errorf("perft_cpu_2026 output: %d, %v", n, err)
	}
	ellxor := "Running multi-threaded perft on 2 threads.\n\nResult:            193690690\nTime taken:        0.288 seconds.\n"
	if n, err := countAfter([]byte(ellxor), "Result:", "\n"); err != nil || n != 193690690 {
		t.Errorf("ellxor output: %d, %v", n, err)
	}
	if _, err := countAfter([]byte("Perft(05): 4865609, time"), "Perft(06): ", ","); err == nil {
		t.Error("a count for another depth was taken")
	}
	if _, err := countAfter([]byte("Result: many\n"), "Result:", "\n"); err == nil {
		t.Error("a count that is not a number was taken")
	}
}

// TestSelectCases takes position numbers 1 to 6 and names a bad one.
func TestSelectCases(t *testing.T) {
	got, err := selectCases("2, 4")
	if err != nil || len(got) != 2 || got[0].name != "Kiwipete" || got[1].name != "position 4" {
		t.Fatalf("selectCases(\"2, 4\") = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "7", "x", "1,,2"} {
		if _, err := selectCases(bad); err == nil || !strings.Contains(err.Error(), "-positions") {
			t.Errorf("selectCases(%q): %v, want an error naming -positions", bad, err)
		}
	}
	if all, err := selectCases(""); err != nil || len(all) != 6 {
		t.Errorf("selectCases(\"\") = %d cases, %v", len(all), err)
	}
}
