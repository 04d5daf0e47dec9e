package benchparse

import (
	"fmt"
	"testing"
)

// FuzzParsers: any bench output is read by each framework's parser
// without a panic, and Stockfish's summary and Ethereal's one-line form,
// with any ASCII lines before them, are read exactly by the parsers that
// read them (TestParsers: which ones those are).
func FuzzParsers(f *testing.F) {
	f.Add("info string NNUE\n\nTotal time (ms) : 2345\nNodes searched  : 3528235\nNodes/second    : 1504577\n", uint32(3528235), uint32(1504577))
	f.Add("Bench: 4105232 nodes 1868233 nps\n", uint32(1), uint32(2))
	f.Add("Nodes searched : 12 \u00e9\nNodes/second : 3\n", uint32(0), uint32(0))
	f.Add("nodes 99999999999999999999999 nps 1\nTotal time (ms) : nan\n", uint32(7), uint32(8))
	f.Fuzz(func(t *testing.T, out string, nodes, nps uint32) {
		OpenBench(out)
		OpenBenchOld(out)
		Fishtest(out)

		prefix := ""
		for i := 0; i < len(out); i++ {
			// ASCII lines that no parser reads as a count: a parser
			// scanning from the end stops at the summary's lines.
			if c := out[i]; c < 0x80 && (c < '0' || c > '9') {
				prefix += string(c)
			}
		}
		sf := fmt.Sprintf("%s\n===========================\nTotal time (ms) : 1000\nNodes searched  : %d\nNodes/second    : %d\n", prefix, nodes, nps)
		if n, ms, ok := Fishtest(sf); ok && (n != int64(nodes) || ms != 1000) {
			t.Fatalf("Fishtest(%q) = %d %v", sf, n, ms)
		}
		if n, s, ok := OpenBench(sf); !ok || n != int64(nodes) || s != int64(nps) {
			t.Fatalf("OpenBench(%q) = %d %d %v", sf, n, s, ok)
		}
		eth := fmt.Sprintf("%s\nBench: %d nodes %d nps\n", prefix, nodes, nps)
		if n, s, ok := OpenBenchOld(eth); !ok || n != int64(nodes) || s != int64(nps) {
			t.Fatalf("OpenBenchOld(%q) = %d %d %v", eth, n, s, ok)
		}
	})
}
