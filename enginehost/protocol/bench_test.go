package protocol

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

// A bench session sets the net's option first, the others after it in
// name order, waits for readyok, benches and quits; every line the
// engine writes reaches the caller, whose count finds the node count.
func TestBenchSession(t *testing.T) {
	heard := filepath.Join(t.TempDir(), "heard")
	eng := script(t, `while read -r line; do
  echo "$line" >> `+heard+`
  case "$line" in
    uci) echo "id name Netted"; echo uciok ;;
    "setoption name EvalFile value "*) echo "info string loaded ${line#setoption name EvalFile value }" ;;
    isready) echo readyok ;;
    bench) echo "Nodes searched  : 4242" >&2; echo "Total time (ms) : 10" ;;
    quit) exit 0 ;;
  esac
done
`)
	c, err := Start(engineproc.Config{Path: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	s := &BenchSession{NetOption: "EvalFile", Options: map[string]string{"UseNNUE": "true", "EvalFile": "/n/a b.nnue", "Hash": "16"}, Bench: true}
	var lines []string
	var count BenchCount
	ready, err := s.Run(c, 30*time.Second, func(l []byte) { lines = append(lines, string(l)); count.Line(string(l)) })
	if err != nil || !ready {
		t.Fatalf("ready %v: %v", ready, err)
	}
	for _, l := range strings.Split(c.Proc().Stderr(), "\n") {
		count.Line(l)
	}
	got, _ := os.ReadFile(heard)
	want := "uci\nsetoption name EvalFile value /n/a b.nnue\nsetoption name Hash value 16\nsetoption name UseNNUE value true\nisready\nbench\nquit\n"
	if string(got) != want {
		t.Fatalf("the engine heard\n%s\nwant\n%s", got, want)
	}
	if n, err := count.Nodes(); n != 4242 || err != nil {
		t.Fatalf("nodes %d %v", n, err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "info string loaded /n/a b.nnue") {
		t.Fatalf("lines %q", lines)
	}
}

// An engine that dies on the net is not ready; one that prints no count
// has none; one that never ends is hung and killed.
func TestBenchFailures(t *testing.T) {
	dies := script(t, "while read -r line; do case \"$line\" in uci) echo uciok ;; setoption*) exit 7 ;; esac; done\n")
	c, err := Start(engineproc.Config{Path: dies})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	s := &BenchSession{NetOption: "EvalFile", Options: map[string]string{"EvalFile": "x"}}
	if ready, err := s.Run(c, 30*time.Second, func([]byte) {}); ready || !errors.Is(err, ErrCrash) {
		t.Fatalf("dying engine: ready %v, %v", ready, err)
	}
	var count BenchCount
	count.Line("bench done")
	if _, err := count.Nodes(); err == nil {
		t.Fatal("a count from no count")
	}
	// "ENGINE bench" on its command line: a count in its own words, and
	// an engine that never ends.
	for _, c := range []struct {
		body  string
		nodes uint64
		err   error
	}{
		{"echo '1234 nodes 99 nps'; echo 'nodes 77'; exit 0\n", 77, nil},
		{"exec sleep 60\n", 0, ErrHang},
	} {
		conn, err := StartBench(engineproc.Config{Path: script(t, c.body), Args: []string{"bench"}})
		if err != nil {
			t.Fatal(err)
		}
		var count BenchCount
		err = DrainOutput(conn, time.Now().Add(500*time.Millisecond), func(l []byte) { count.Line(string(l)) })
		n, _ := count.Nodes()
		if !errors.Is(err, c.err) || n != c.nodes {
			t.Errorf("%q: %d nodes, %v; want %d, %v", c.body, n, err, c.nodes, c.err)
		}
		conn.Kill()
	}
}
