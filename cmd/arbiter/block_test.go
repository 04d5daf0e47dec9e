package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// TestStatusBlock runs an SPRT test on a real cluster and prints its
// result block in both layouts, with figures equal to status --json's.
func TestStatusBlock(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "block-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	with := func(args ...string) []string { return append(args, "--coordinator", cl.Addr(), "--token", cl.Token()) }
	out, stderr, err := runArbiter(t, "", with("submit", "sprt", "--engine", "name=a,builtin,option.Hash=2", "--engine", "name=b,builtin", "--each", "nodes=200",
		"--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=50", "--games", "4", "--batch-pairs", "1", "--wait", "--json")...)
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	var job struct {
		ID   string `json:"job_id"`
		Test struct {
			Games  int    `json:"games"`
			Wins   int    `json:"wins"`
			Losses int    `json:"losses"`
			Draws  int    `json:"draws"`
			Penta  [5]int `json:"pentanomial"`
		} `json:"test"`
	}
	if err := json.Unmarshal([]byte(out), &job); err != nil || job.ID == "" {
		t.Fatalf("submit --json: %v: %s", err, out)
	}
	block, stderr, err := runArbiter(t, "", with("status", job.ID, "--block")...)
	if err != nil {
		t.Fatalf("status --block: %v\n%s", err, stderr)
	}
	games := regexp.MustCompile(`Games \| N: (\d+) W: (\d+) L: (\d+) D: (\d+)\n`).FindStringSubmatch(block)
	if games == nil || games[1] != "4" {
		t.Fatalf("status --block: no Games line of 4 games:\n%s", block)
	}
	for _, re := range []string{`^Elo   \| -?\d+\.\d\d \+- \d+\.\d\d \(95%\)\n`, `\nSPRT  \| nodes=200 Threads=1 Hash=2MB\n`,
		`\nLLR   \| -?\d+\.\d\d \(-2\.94, 2\.94\) \[0\.00, 50\.00\]\n`, `\nPenta \| \[\d+, \d+, \d+, \d+, \d+\]\n`,
		// Two pairs cannot reach a bound of ±2.94: the cap ends the SPRT
		// undecided, and its block adds the anytime-valid interval.
		`\nAny   \| \[-?\d+\.\d\d, -?\d+\.\d\d\] \(95% anytime-valid; game cap reached\)\n$`} {
		if !regexp.MustCompile(re).MatchString(block) {
			t.Errorf("status --block lacks %s:\n%s", re, block)
		}
	}
	want := "W: " + itoa(job.Test.Wins) + " L: " + itoa(job.Test.Losses) + " D: " + itoa(job.Test.Draws)
	p := job.Test.Penta
	want += "\nPenta | [" + itoa(p[0]) + ", " + itoa(p[1]) + ", " + itoa(p[2]) + ", " + itoa(p[3]) + ", " + itoa(p[4]) + "]"
	if !strings.Contains(block, want) {
		t.Errorf("status --block: want %q (as --json) in\n%s", want, block)
	}
	fish, _, err := runArbiter(t, "", with("status", job.ID, "--block", "--style", "fishtest")...)
	if err != nil || !regexp.MustCompile(`^LLR: -?\d+\.\d\d \(-2\.94,2\.94\) <0\.00,50\.00>\nTotal: 4 W: \d+ L: \d+ D: \d+\nPtnml\(0-2\): \d+, \d+, \d+, \d+, \d+\nAnytime-valid ELO \(95%\): \[-?\d+\.\d\d, -?\d+\.\d\d\] \(game cap reached\)\n$`).MatchString(fish) {
		t.Errorf("status --block --style fishtest: %v\n%s", err, fish)
	}
	for _, bad := range [][]string{{"status", "--block"}, {"status", job.ID, "--block", "--style", "cutechess"}, {"status", job.ID, "--block", "--json"}} {
		if _, _, err := runArbiter(t, "", with(bad...)...); err == nil {
			t.Errorf("%v: no error", bad)
		} else if !strings.Contains(err.Error(), "block") && !strings.Contains(err.Error(), "style") {
			t.Errorf("%v: %v (names neither --block nor --style)", bad, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
