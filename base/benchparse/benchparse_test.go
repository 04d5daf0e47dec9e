package benchparse

import "testing"

func TestParsers(t *testing.T) {
	// Stockfish's summary (three lines, no "nodes nps" line).
	sf := "info string NNUE evaluation using nn-ad9b42354671.nnue enabled\n\n===========================\nTotal time (ms) : 2345\nNodes searched  : 3528235\nNodes/second    : 1504577\n"
	if n, nps, ok := OpenBench(sf); !ok || n != 3528235 || nps != 1504577 {
		t.Errorf("OpenBench(Stockfish) = %d %d %v", n, nps, ok)
	}
	if n, ms, ok := Fishtest(sf); !ok || n != 3528235 || ms != 2345 {
		t.Errorf("Fishtest(Stockfish) = %d %v %v", n, ms, ok)
	}
	// The older OpenBench client stops at the "Nodes/second" line: it reads
	// nothing of Stockfish's summary.
	if _, _, ok := OpenBenchOld(sf); ok {
		t.Error("OpenBenchOld read Stockfish's summary")
	}
	// Ethereal's form serves the older client.
	eth := "Bench: 4105232 nodes 1868233 nps\n"
	if n, nps, ok := OpenBenchOld(eth); !ok || n != 4105232 || nps != 1868233 {
		t.Errorf("OpenBenchOld(Ethereal) = %d %d %v", n, nps, ok)
	}
	if n, nps, ok := OpenBench(eth); !ok || n != 4105232 || nps != 1868233 {
		t.Errorf("OpenBench(Ethereal) = %d %d %v", n, nps, ok)
	}
	if _, _, ok := OpenBench("Nodes searched : 12 \u00e9\nNodes/second : 3\n"); ok {
		t.Error("non-ASCII output read (Python's decode('ascii') raises)")
	}
}
