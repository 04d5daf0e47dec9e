package uci

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

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
