package uci

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/benchparse"
	"github.com/arbiter-chess/arbiter/engine/nnue"
	"github.com/arbiter-chess/arbiter/engine/search"
)

// TestServerInProcess runs the protocol loop in-process (so `go test -race`
// sees the command loop, the search goroutine and the output writer
// together): a search is stopped, pondered, and interleaved with isready.
func TestServerInProcess(t *testing.T) {
	e, err := search.NewEngine(map[string]string{"Threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := NewServer(Wrap(e), outW)
	done := make(chan error, 1)
	go func() { done <- srv.Run(inR); outW.Close() }()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) { io.WriteString(inW, s+"\n") }
	expect := func(prefix string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output closed before %q", prefix)
				}
				if strings.HasPrefix(l, prefix) {
					return
				}
			case <-timeout:
				t.Fatalf("no %q", prefix)
			}
		}
	}
	send("uci")
	expect("uciok")
	for i := 0; i < 3; i++ {
		send("position startpos moves e2e4 e7e5")
		send("go infinite")
		send("isready")
		expect("readyok")
		time.Sleep(20 * time.Millisecond)
		send("stop")
		expect("bestmove")
	}
	send("go ponder wtime 1000 btime 1000 winc 10 binc 10")
	send("isready")
	expect("readyok")
	send("ponderhit")
	expect("bestmove")
	send("go nodes 5000")
	send("setoption name Hash value 8") // refused while searching, or applied after: both fine
	expect("bestmove")
	send("position startpos")
	send("go perft 2")
	expect("Nodes searched: 400")
	send("quit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestBenchCommandParsers: the UCI `bench` command's output is read by the
// current and the older OpenBench client and by Fishtest.
func TestBenchCommandParsers(t *testing.T) {
	e, err := search.NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	srv := NewServer(Wrap(e), &out)
	if err := srv.Run(strings.NewReader("bench 3\nquit\n")); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for name, parse := range map[string]func(string) (int64, int64, bool){
		"OpenBench": benchparse.OpenBench, "OpenBench (older)": benchparse.OpenBenchOld,
	} {
		if n, nps, ok := parse(text); !ok || n <= 0 || nps <= 0 {
			t.Errorf("%s read %d nodes, %d nps, %v from\n%s", name, n, nps, ok, text)
		}
	}
	n, _, ok := benchparse.Fishtest(text)
	if !ok || n <= 0 {
		t.Errorf("Fishtest read %d nodes, %v from\n%s", n, ok, text)
	}
	if m, _, _ := benchparse.OpenBench(text); m != n {
		t.Errorf("OpenBench and Fishtest disagree: %d and %d nodes", m, n)
	}
}

// TestBenchUsesTheLoadedNet: after setoption EvalFile and UseNNUE, bench
// searches with that net (as Stockfish's does), so a worker can check an
// engine's bench signature with the net a test gives it; a net that did
// not load leaves the evaluation as it was.
func TestBenchUsesTheLoadedNet(t *testing.T) {
	data, err := nnue.NewRandom(7).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	net := filepath.Join(t.TempDir(), "net.nnue")
	if err := os.WriteFile(net, data, 0o644); err != nil {
		t.Fatal(err)
	}
	bench := func(setup string) int64 {
		t.Helper()
		e, err := search.NewEngine(nil)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := NewServer(Wrap(e), &out).Run(strings.NewReader(setup + "bench 3\nquit\n")); err != nil {
			t.Fatal(err)
		}
		n, _, ok := benchparse.Fishtest(out.String())
		if !ok {
			t.Fatalf("no node count in\n%s", out.String())
		}
		return n
	}
	classic := bench("")
	withNet := bench("setoption name EvalFile value " + net + "\nsetoption name UseNNUE value true\n")
	want, err := search.BenchWith(3, map[string]string{search.OptEvalFile: net, search.OptUseNNUE: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if withNet != want.Nodes || withNet == classic {
		t.Fatalf("bench with the net: %d nodes, want %d (classic %d)", withNet, want.Nodes, classic)
	}
	if bad := bench("setoption name EvalFile value " + net + ".missing\n"); bad != classic {
		t.Fatalf("bench after a net that did not load: %d nodes, want the classic %d", bad, classic)
	}
}
