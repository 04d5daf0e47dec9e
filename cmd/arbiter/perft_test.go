package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestPerftHashReport: with --hash, arbiter perft reports the run's use of
// the table (probes, hits, hit rate, stores) in text and in --json; without
// a table it reports none.
func TestPerftHashReport(t *testing.T) {
	out, _, err := runArbiter(t, "", "perft", "--depth", "5", "--hash", "4", "--threads", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Nodes json.Number `json:"nodes"`
		Hash  *struct {
			Probes  uint64  `json:"probes"`
			Hits    uint64  `json:"hits"`
			Stores  uint64  `json:"stores"`
			HitRate float64 `json:"hit_rate"`
		} `json:"hash"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if j.Nodes != "4865609" || j.Hash == nil || j.Hash.Probes == 0 || j.Hash.Stores == 0 || j.Hash.Hits > j.Hash.Probes ||
		j.Hash.HitRate != float64(j.Hash.Hits)/float64(j.Hash.Probes) {
		t.Errorf("perft 5 --hash 4 --json: %s", out)
	}
	out, _, err = runArbiter(t, "", "perft", "--depth", "5", "--hash", "4", "--threads", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Hash:  4 MB, [1-9]\d* probes, \d+ hits \(\d+\.\d%\), [1-9]\d* stores$`).MatchString(out) {
		t.Errorf("perft 5 --hash 4: %s", out)
	}
	out, _, err = runArbiter(t, "", "perft", "--depth", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, `"hash"`) {
		t.Errorf("perft without --hash reports a table: %s", out)
	}
}
