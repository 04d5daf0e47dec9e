//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// suiteOut is submit perft --wait --json of a suite job.
type suiteOut struct {
	JobID string               `json:"job_id"`
	Nodes json.Number          `json:"nodes"`
	Suite *jobreport.SuiteJSON `json:"suite"`
}

// runSuite runs the binary and returns its standard output; a failure
// (with both outputs) fails the test.
func runSuite(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("arbiter %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// chess960Counts is perft(depth) of Chess960 start positions first..end-1,
// counted here.
func chess960Counts(t *testing.T, first, end, depth int) []uint64 {
	t.Helper()
	var out []uint64
	for n := first; n < end; n++ {
		fen, err := engine.Chess960StartFEN(n)
		if err != nil {
			t.Fatal(err)
		}
		p, err := engine.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		p.SetChess960(true)
		out = append(out, engine.Perft(&p, depth))
	}
	return out
}

// TestPerftSuiteEPDTwoWorkers: an EPD of Chess960 start positions 0..9 is
// one job on two real workers; each position's count equals `arbiter
// perft` of it run locally, and the printed table's checksum is that of
// the same table made from the local counts; the job's web page lists
// the positions by number.
func TestPerftSuiteEPDTwoWorkers(t *testing.T) {
	addr, httpAddr := proctest.FreeAddr(t), proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--http", httpAddr)
	startWorker(t, addr)
	startWorker(t, addr)
	var epd strings.Builder
	fmt.Fprintln(&epd, "# Chess960 start positions 0..9")
	var fens []string
	for n := 0; n < 10; n++ {
		fen, _ := engine.Chess960StartFEN(n)
		fens = append(fens, fen)
		fmt.Fprintln(&epd, fen)
	}
	file := filepath.Join(t.TempDir(), "sp.epd")
	if err := os.WriteFile(file, []byte(epd.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var res suiteOut
	out := runSuite(t, append([]string{"submit", "perft", "--epd", file, "--depth", "3", "--wait", "--json"}, clientArgs(addr)...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Suite == nil {
		t.Fatalf("json %q: %v", out, err)
	}
	if len(res.Suite.Positions) != 10 {
		t.Fatalf("%d positions, want 10: %s", len(res.Suite.Positions), out)
	}
	var total uint64
	var want []jobreport.SuitePosition
	for i, p := range res.Suite.Positions {
		local := runSuite(t, "perft", "--fen", fens[i], "--depth", "3", "--chess960", "--json")
		var lj struct {
			Nodes json.Number `json:"nodes"`
		}
		if err := json.Unmarshal([]byte(local), &lj); err != nil {
			t.Fatalf("local perft %q: %v", local, err)
		}
		if p.Number != uint32(i+1) || p.Nodes != lj.Nodes {
			t.Errorf("position %d (%s): number %d, cluster %s, local arbiter perft %s", i+1, p.FEN, p.Number, p.Nodes, lj.Nodes)
		}
		n, _ := lj.Nodes.Int64()
		total += uint64(n)
		want = append(want, jobreport.SuitePosition{Number: uint32(i + 1), FEN: p.FEN, Nodes: lj.Nodes})
	}
	if res.Nodes.String() != fmt.Sprint(total) {
		t.Errorf("total %s, want the sum %d", res.Nodes, total)
	}
	if _, sum := jobreport.SuiteTable(want); sum != res.Suite.SHA256 {
		t.Errorf("sha256 %s, the local counts' table %s", res.Suite.SHA256, sum)
	}
	page := signInWeb(t, httpAddr, url.Values{"token": {token}}).get(t, "/perft/"+res.JobID)
	for _, p := range res.Suite.Positions {
		row := fmt.Sprintf(`<tr data-number="%d"><td class="num">%d</td><td><code class="fen">%s</code></td><td class="num" data-value="%s">`, p.Number, p.Number, p.FEN, p.Nodes)
		if !strings.Contains(page, row) {
			t.Errorf("the job's page lacks the row %s", row)
		}
	}
	if !strings.Contains(page, `id="suite"`) || strings.Contains(page, `id="divide"`) {
		t.Errorf("the job's page shows no suite, or a divide")
	}
	t.Logf("10 positions at depth 3: total %s, sha256 %s", res.Nodes, res.Suite.SHA256)
}

// TestPerftSuiteChess960All: --chess960-all at depths 1 and 2 is one job
// of 960 positions numbered 0..959 whose counts equal a local count of
// each (518, the standard position: 20 and 400); the Markdown table
// printed by --wait carries the same checksum as the local table.
func TestPerftSuiteChess960All(t *testing.T) {
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	startWorker(t, addr)
	startWorker(t, addr)
	for _, depth := range []int{1, 2} {
		local := chess960Counts(t, 0, 960, depth)
		out := runSuite(t, append([]string{"submit", "perft", "--chess960-all", "--depth", fmt.Sprint(depth), "--wait"}, clientArgs(addr)...)...)
		var want []jobreport.SuitePosition
		var total uint64
		for n, c := range local {
			fen, _ := engine.Chess960StartFEN(n)
			p, _ := engine.ParseFEN(fen)
			p.SetChess960(true)
			want = append(want, jobreport.SuitePosition{Number: uint32(n), FEN: p.FEN(), Nodes: json.Number(fmt.Sprint(c))})
			total += c
		}
		lines, sum := jobreport.SuiteTable(want)
		for _, l := range append(lines, fmt.Sprintf("Total:     %d\n", total), "sha256:    "+sum+" ") {
			if !strings.Contains(out, l) {
				t.Fatalf("depth %d: output lacks %q:\n%.3000s", depth, l, out)
			}
		}
		if std := []uint64{20, 400}[depth-1]; local[518] != std {
			t.Errorf("SP 518 at depth %d: %d, want %d", depth, local[518], std)
		}
		t.Logf("depth %d: 960 positions, total %d, sha256 %s", depth, total, sum)
	}
}

// TestPerftSuiteCoordinatorKilled: a suite job submitted before any
// worker is kept through a SIGKILLed coordinator: on restart, with
// workers, status JOB --wait finishes it with every count right.
func TestPerftSuiteCoordinatorKilled(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	c1 := coordinator(t, addr, data)
	id := strings.TrimSpace(runSuite(t, append([]string{"submit", "perft", "--chess960-all", "--depth", "3"}, clientArgs(addr)...)...))
	c1.kill(t)
	coordinator(t, addr, data)
	startWorker(t, addr)
	startWorker(t, addr)
	conn := dial(t, addr, token)
	waitFor(t, conn, id, 120*time.Second, "suite done", func(j *arbiterv1.Job) bool {
		return j.GetState() == arbiterv1.JobState_JOB_STATE_DONE
	})
	var res suiteOut
	out := runSuite(t, append([]string{"status", id, "--wait", "--json"}, clientArgs(addr)...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Suite == nil || len(res.Suite.Positions) != 960 {
		t.Fatalf("status --wait --json %.500q: %v", out, err)
	}
	local := chess960Counts(t, 0, 960, 3)
	for n, p := range res.Suite.Positions {
		if p.Number != uint32(n) || p.Nodes.String() != fmt.Sprint(local[n]) {
			t.Fatalf("SP %d after the restart: number %d, %s nodes, want %d", n, p.Number, p.Nodes, local[n])
		}
	}
	t.Logf("960 positions at depth 3 after a SIGKILL: total %s, sha256 %s", res.Nodes, res.Suite.SHA256)
}

// TestPerftSuiteCrossChecked: a suite of Chess960 start positions 0..9 at
// depth 3 with every unit cross-checked by Debian's Stockfish
// (UCI_Chess960) on two workers of their own identities: each unit is
// checked and agrees, and the counts equal the local ones. The control:
// the job reports as many units checked as it has units, so a sample
// that skipped the suite's units would fail.
func TestPerftSuiteCrossChecked(t *testing.T) {
	if _, err := os.Stat(stockfishBin); err != nil {
		t.Skip("no " + stockfishBin + " (apt-get install stockfish)")
	}
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir(), "--lease-duration", "10s")
	sf := "name=stockfish,cmd=" + stockfishBin
	startWorker(t, addr, "--name", "h1", "--verify-engine", sf)
	startWorker(t, addr, "--name", "h2", "--verify-engine", sf)
	var epd strings.Builder
	for n := 0; n < 10; n++ {
		fen, _ := engine.Chess960StartFEN(n)
		fmt.Fprintln(&epd, fen)
	}
	file := filepath.Join(t.TempDir(), "sp.epd")
	if err := os.WriteFile(file, []byte(epd.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(runSuite(t, append([]string{"submit", "perft", "--epd", file, "--depth", "3",
		"--cross-check", "stockfish", "--cross-check-fraction", "1"}, clientArgs(addr)...)...))
	waitFor(t, dial(t, addr, token), id, 120*time.Second, "job done", done)
	var res struct {
		Perft struct {
			Units      uint64                    `json:"units"`
			CrossCheck *jobreport.CrossCheckJSON `json:"cross_check"`
			Suite      *jobreport.SuiteJSON      `json:"suite"`
		} `json:"perft"`
	}
	out := runSuite(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Perft.CrossCheck == nil || res.Perft.Suite == nil {
		t.Fatalf("status --json %.800q: %v", out, err)
	}
	cc := res.Perft.CrossCheck
	if cc.UnitsChecked != res.Perft.Units || cc.UnitsAgreed != res.Perft.Units || len(cc.Mismatches) != 0 {
		t.Fatalf("cross-check of %d units: %+v", res.Perft.Units, cc)
	}
	local := chess960Counts(t, 0, 10, 3)
	for i, p := range res.Perft.Suite.Positions {
		if p.Nodes.String() != fmt.Sprint(local[i]) {
			t.Errorf("position %d: %s, local %d", p.Number, p.Nodes, local[i])
		}
	}
	t.Logf("%d units, all cross-checked by stockfish and agreed (%v); sha256 %s", res.Perft.Units, cc.RunsByWorker, res.Perft.Suite.SHA256)
}
