//go:build unix

package e2e

// Stopping safely, through the real binary: an SPRT stopped by hand shows
// the anytime-valid interval in status and --json (and keeps it across a
// coordinator SIGKILL), and a --stop precision= test ends at the first
// committed batch whose interval is narrow enough, also across a kill.

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// engTwin is the default engine with a slightly different pruning margin:
// close in strength, so an SPRT on narrow bounds does not decide in a few
// batches, yet its games differ from the default's.
const engTwin = "name=twin,builtin,option.RFPMargin=90"

// submitTwins submits a test of kind (sprt or match) between the default
// engine and its twin at 1000 nodes, two pairs a batch, and returns what
// the CLI printed.
func submitTwins(t *testing.T, addr, kind string, extra ...string) string {
	t.Helper()
	args := append([]string{"submit", kind}, clientArgs(addr)...)
	args = append(args, "--engine", engDefault, "--engine", engTwin, "--each", "nodes=1000",
		"--openings", "file="+book+",order=random,seed=9", "--batch-pairs", "2")
	out, code := cli(t, append(args, extra...)...)
	if code != 0 {
		t.Fatalf("submit %s %v: exit %d: %s", kind, extra, code, out)
	}
	return out
}

// storeBatchPentas is a test's batches' pentanomials in the order they were
// committed (the store's row order), read from the store file directly.
func storeBatchPentas(t *testing.T, data, id string) []sprt.Pentanomial {
	t.Helper()
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT penta FROM batches WHERE job_id=? ORDER BY rowid", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sprt.Pentanomial
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		var p sprt.Pentanomial
		for i, f := range strings.Split(s, ",") {
			if p[i], err = strconv.ParseInt(f, 10, 64); err != nil {
				t.Fatalf("batch penta %q: %v", s, err)
			}
		}
		out = append(out, p)
	}
	return out
}

// anytimeOfStore is the anytime interval the coordinator should show for
// pentanomial penta, computed here from the store's counts.
func anytimeOfStore(t *testing.T, penta sprt.Pentanomial) sprt.AnytimeElo {
	t.Helper()
	a, err := sprt.AnytimeInterval(sprt.Results{Pentanomial: &penta}, sprt.DefaultAnytimeLevel)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// statusJSON is the part of `status ID --json` these tests read.
type statusJSON struct {
	State string `json:"state"`
	Test  struct {
		Games         uint64      `json:"games"`
		Pentanomial   [5]int64    `json:"pentanomial"`
		EloCI95       [2]*float64 `json:"elo_ci95"`
		StoppedByHand bool        `json:"stopped_by_hand"`
		Anytime       *struct {
			Level float64     `json:"level"`
			Elo   [2]*float64 `json:"elo"`
		} `json:"anytime"`
		StopPrecision      float64 `json:"stop_precision"`
		StoppedByPrecision bool    `json:"stopped_by_precision"`
	} `json:"test"`
}

func readStatusJSON(t *testing.T, addr, id string) statusJSON {
	t.Helper()
	out, code := cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, out)
	}
	var s statusJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if s.Test.Anytime == nil || s.Test.Anytime.Elo[0] == nil || s.Test.Anytime.Elo[1] == nil {
		t.Fatalf("status --json: no anytime interval in\n%s", out)
	}
	return s
}

// anytimeLine matches status's "Anytime:" line.
var anytimeLine = regexp.MustCompile(`Anytime: +Elo (-?[0-9.]+) ± ([0-9.]+) \(95%\), anytime-valid \[(-?[0-9.]+), (-?[0-9.]+)\] \(95%\)`)

// checkShown checks that status (text and --json) shows the interval the
// store's counts give, and that it holds the fixed-games interval.
func checkShown(t *testing.T, addr, data, id string) statusJSON {
	t.Helper()
	var penta sprt.Pentanomial
	for _, b := range storeBatchPentas(t, data, id) {
		for i := range penta {
			penta[i] += b[i]
		}
	}
	want := anytimeOfStore(t, penta)
	s := readStatusJSON(t, addr, id)
	if sprt.Pentanomial(s.Test.Pentanomial) != penta {
		t.Fatalf("status pentanomial %v, store %v", s.Test.Pentanomial, penta)
	}
	got := [2]float64{*s.Test.Anytime.Elo[0], *s.Test.Anytime.Elo[1]}
	if math.Abs(got[0]-want.Elo[0]) > 1e-9 || math.Abs(got[1]-want.Elo[1]) > 1e-9 || s.Test.Anytime.Level != 0.95 {
		t.Fatalf("--json anytime %v at level %g; the store's counts give %v", got, s.Test.Anytime.Level, want.Elo)
	}
	if lo, hi := s.Test.EloCI95[0], s.Test.EloCI95[1]; lo == nil || hi == nil || *lo < got[0] || *hi > got[1] {
		t.Fatalf("the fixed-games interval %v is not inside the anytime one %v", s.Test.EloCI95, got)
	}
	out, code := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	m := anytimeLine.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("status: exit %d, no anytime line in\n%s", code, out)
	}
	if m[3] != fmt.Sprintf("%.2f", want.Elo[0]) || m[4] != fmt.Sprintf("%.2f", want.Elo[1]) {
		t.Fatalf("status shows anytime [%s, %s]; the store's counts give [%.2f, %.2f]", m[3], m[4], want.Elo[0], want.Elo[1])
	}
	t.Logf("%d pairs %v: fixed Elo %s ± %s (95%%), anytime-valid [%s, %s]", penta.Pairs(), penta, m[1], m[2], m[3], m[4])
	return s
}

// An SPRT stopped by hand (arbiter cancel) before a bound: status and
// --json show the anytime interval of its committed counts, and the same
// after the coordinator is SIGKILLed and restarted. The control: a match
// that ran its games shows the interval too, without the stopped-by-hand
// mark, so the mark is the stop's and not the display's.
func TestSPRTStoppedByHandShowsAnytimeInterval(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co := coordinator(t, addr, data)
	startWorker(t, addr, "--name", "w1")
	startWorker(t, addr, "--name", "w2")
	id := jobID(submitTwins(t, addr, "sprt", "--sprt", "elo0=0,elo1=2"))
	conn := dial(t, addr, token)
	waitFor(t, conn, id, 3*time.Minute, "4 batches", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetBatchesDone() >= 4 })
	if out, code := cli(t, append([]string{"cancel", id}, clientArgs(addr)...)...); code != 0 {
		t.Fatalf("cancel: exit %d: %s", code, out)
	}
	s := checkShown(t, addr, data, id)
	if !s.Test.StoppedByHand || s.State != "cancelled" {
		t.Fatalf("state %q, stopped_by_hand %v", s.State, s.Test.StoppedByHand)
	}
	before := *s.Test.Anytime.Elo[0]

	co.kill(t)
	coordinator(t, addr, data)
	s = checkShown(t, addr, data, id)
	if *s.Test.Anytime.Elo[0] != before || !s.Test.StoppedByHand {
		t.Fatalf("after a restart: anytime low %v (was %v), stopped_by_hand %v", *s.Test.Anytime.Elo[0], before, s.Test.StoppedByHand)
	}

	// The control.
	startWorker(t, addr, "--name", "w3")
	out := submitTwins(t, addr, "match", "--games", "8", "--wait")
	i := strings.Index(out, "Test:")
	if i < 0 {
		t.Fatalf("submit match --wait: no test in %s", out)
	}
	s = checkShown(t, addr, data, strings.Fields(out[i:])[1])
	if s.Test.StoppedByHand || s.State != "done" || s.Test.Games != 8 {
		t.Fatalf("control match: state %q, %d games, stopped_by_hand %v", s.State, s.Test.Games, s.Test.StoppedByHand)
	}
}

// A match with --stop precision= and no game cap ends at the first
// committed batch whose anytime interval is narrower than the precision,
// though the coordinator is SIGKILLed and restarted while it runs: the
// rule is decided on committed counts, in the commit of the batch.
func TestPrecisionStopEndsAtTheFirstNarrowBatch(t *testing.T) {
	const precision = 250.0
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co := coordinator(t, addr, data)
	startWorker(t, addr, "--name", "w1")
	startWorker(t, addr, "--name", "w2")
	id := jobID(submitTwins(t, addr, "match", "--stop", fmt.Sprintf("precision=%g", precision)))
	conn := dial(t, addr, token)
	waitFor(t, conn, id, 3*time.Minute, "2 batches", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetBatchesDone() >= 2 })
	co.kill(t)
	coordinator(t, addr, data)
	conn = dial(t, addr, token)
	waitFor(t, conn, id, 5*time.Minute, "done", done)

	batches := storeBatchPentas(t, data, id)
	var penta sprt.Pentanomial
	first := -1
	for k, b := range batches {
		for i := range penta {
			penta[i] += b[i]
		}
		if first < 0 && anytimeOfStore(t, penta).Width() < precision {
			first = k
		}
	}
	if first != len(batches)-1 {
		t.Fatalf("the interval got narrower than %g Elo at batch %d of %d committed: the test did not stop there", precision, first+1, len(batches))
	}
	s := checkShown(t, addr, data, id)
	if !s.Test.StoppedByPrecision || s.Test.StopPrecision != precision || s.State != "done" {
		t.Fatalf("state %q, stop_precision %g, stopped_by_precision %v", s.State, s.Test.StopPrecision, s.Test.StoppedByPrecision)
	}
	out, _ := cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	if !strings.Contains(out, fmt.Sprintf("Stop:       precision=%g Elo (reached: the test stopped there)", precision)) {
		t.Fatalf("status does not say the precision stop ended the test:\n%s", out)
	}
	t.Logf("stopped after %d batches (%d pairs), width %.1f < %g", len(batches), penta.Pairs(), anytimeOfStore(t, penta).Width(), precision)
}
