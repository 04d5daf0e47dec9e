package uci_test

// UCI conformance: these tests drive the real `arbiter uci` binary as a
// subprocess through pipes, as a GUI or match runner does.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

var arbiterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arbiter-uci-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	arbiterBin = filepath.Join(dir, "arbiter")
	build := exec.Command("go", "build", "-o", arbiterBin, "./cmd/arbiter")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building arbiter:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// session is one running `arbiter uci` process.
type session struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func start(t *testing.T) *session {
	t.Helper()
	cmd := exec.Command(arbiterBin, "uci")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cmd: cmd, in: in, lines: make(chan string, 4096)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Errorf("engine did not exit after stdin closed")
		}
	})
	return s
}

func (s *session) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			s.t.Fatalf("send %q: %v", l, err)
		}
	}
}

// expect reads lines until one starts with prefix and returns it with the
// lines before it.
func (s *session) expect(prefix string, timeout time.Duration) (string, []string) {
	s.t.Helper()
	var before []string
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("engine exited while waiting for %q (got %q)", prefix, before)
			}
			if strings.HasPrefix(l, prefix) {
				return l, before
			}
			before = append(before, l)
		case <-deadline:
			s.t.Fatalf("no %q within %v (got %q)", prefix, timeout, before)
		}
	}
}

func TestHandshake(t *testing.T) {
	t0 := time.Now()
	s := start(t)
	s.send("uci")
	_, lines := s.expect("uciok", 5*time.Second)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("uciok after %v: the engine must start in milliseconds", d)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		"id name Arbiter",
		"option name Hash type spin default 16 min 1 max",
		"option name Threads type spin default 1 min 1 max",
		"option name Move Overhead type spin",
		"option name UCI_Chess960 type check default false",
		"option name Clear Hash type button",
		"option name Ponder type check",
		"option name PawnValueMG type spin default 82 min 40 max 200",
		"option name RFPMargin type spin",
		"option name SyzygyPath type string default <empty>",
		"option name SyzygyProbeDepth type spin default 1 min 1 max 100",
		"option name Syzygy50MoveRule type check default true",
		"option name SyzygyProbeLimit type spin default 7 min 0 max 7",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("uci output lacks %q", want)
		}
	}
	s.send("isready")
	s.expect("readyok", 5*time.Second)
}

// TestFullGame plays a whole game against itself with `go nodes`, applying
// each bestmove, until the rules end it.
func TestFullGame(t *testing.T) {
	s := start(t)
	s.send("uci", "setoption name Hash value 8", "ucinewgame", "isready")
	s.expect("readyok", 5*time.Second)
	pos := engine.StartPosition()
	var moves []string
	seen := map[string]int{}
	for ply := 0; ply < 400; ply++ {
		if pos.LegalMoveCount() == 0 || pos.InsufficientMaterial() || pos.HalfmoveClock() >= 100 || seen[pos.IdentityFEN()] >= 3 {
			break
		}
		cmd := "position startpos"
		if len(moves) > 0 {
			cmd += " moves " + strings.Join(moves, " ")
		}
		s.send(cmd, "go nodes 3000")
		line, infos := s.expect("bestmove", 10*time.Second)
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("bad bestmove line %q", line)
		}
		m, err := pos.ParseUCIMove(f[1])
		if err != nil {
			t.Fatalf("ply %d, %s: bestmove %q: %v", ply, pos.FEN(), f[1], err)
		}
		if len(infos) == 0 || !strings.Contains(infos[len(infos)-1], " pv ") {
			t.Errorf("ply %d: no info line with a pv before bestmove: %q", ply, infos)
		} else if pv := strings.SplitN(infos[len(infos)-1], " pv ", 2)[1]; strings.Fields(pv)[0] != f[1] {
			// fastchess warns "Bestmove does not match beginning of last PV".
			t.Errorf("ply %d: bestmove %s does not begin the last pv %q", ply, f[1], pv)
		}
		pos.MakeMove(m)
		moves = append(moves, f[1])
		seen[pos.IdentityFEN()]++
	}
	if pos.LegalMoveCount() > 0 && !pos.InsufficientMaterial() && pos.HalfmoveClock() < 100 && seen[pos.IdentityFEN()] < 3 {
		t.Errorf("game did not end by the rules in 400 plies: %s", pos.FEN())
	}
	t.Logf("game over after %d plies: %s", len(moves), pos.FEN())
}

func TestStopMidSearch(t *testing.T) {
	s := start(t)
	s.send("uci", "position startpos moves e2e4", "go infinite")
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	s.send("stop")
	line, _ := s.expect("bestmove", 3*time.Second)
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Errorf("bestmove %v after stop", d)
	}
	p := engine.StartPosition()
	p.MakeMove(must(p.ParseUCIMove("e2e4")))
	if _, err := p.ParseUCIMove(strings.Fields(line)[1]); err != nil {
		t.Errorf("%q: %v", line, err)
	}
}

func must(m engine.Move, err error) engine.Move {
	if err != nil {
		panic(err)
	}
	return m
}

func TestIsReadyWhileSearching(t *testing.T) {
	s := start(t)
	s.send("uci", "position startpos", "go infinite")
	time.Sleep(100 * time.Millisecond)
	s.send("isready")
	_, before := s.expect("readyok", 2*time.Second)
	for _, l := range before {
		if strings.HasPrefix(l, "bestmove") {
			t.Fatalf("bestmove before readyok during go infinite")
		}
	}
	s.send("stop")
	s.expect("bestmove", 3*time.Second)
	// go depth that finishes by itself, then ponder + ponderhit.
	s.send("go depth 5")
	s.expect("bestmove", 10*time.Second)
	s.send("position startpos moves e2e4", "go ponder wtime 2000 btime 2000")
	time.Sleep(100 * time.Millisecond)
	s.send("isready")
	_, before = s.expect("readyok", 2*time.Second)
	for _, l := range before {
		if strings.HasPrefix(l, "bestmove") {
			t.Fatalf("bestmove while pondering")
		}
	}
	s.send("ponderhit")
	s.expect("bestmove", 3*time.Second)
}

func TestPerft(t *testing.T) {
	s := start(t)
	s.send("uci", "position startpos", "go perft 3")
	line, before := s.expect("Nodes searched:", 10*time.Second)
	if line != "Nodes searched: 8902" {
		t.Errorf("got %q", line)
	}
	var divide []string
	for _, l := range before {
		if strings.Contains(l, ": ") && !strings.HasPrefix(l, "id ") && !strings.HasPrefix(l, "option") {
			divide = append(divide, l)
		}
	}
	if len(divide) != 20 || before[len(before)-1] != "" {
		t.Errorf("divide: %d lines, last %q", len(divide), before[len(before)-1])
	}
	for _, l := range divide {
		if l == "e2e4: 600" {
			return
		}
	}
	t.Errorf("no 'e2e4: 600' line in %q", divide)
}

func TestBadCommands(t *testing.T) {
	s := start(t)
	s.send("uci")
	s.expect("uciok", 5*time.Second)
	bad := []string{
		"xyzzy",
		"position",
		"position fen not a fen",
		"position fen 8/8/8/8/8/8/8/8 w - - 0 1",
		"position startpos moves e2e5",
		"position startpos garbage",
		"go depth",
		"go depth x",
		"go wtime -",
		"go perft 0",
		"go searchmoves e2e5",
		"setoption",
		"setoption name",
		"setoption name NoSuchOption value 1",
		"setoption name Hash value 0",
		"setoption name Hash value lots",
		"setoption name Threads value 100000",
		"setoption name UCI_Chess960 value maybe",
		"bench -1",
		"go wtime 99999999999999999999 btime 1",
		"\x00\xff",
	}
	for _, b := range bad {
		s.send(b)
	}
	s.send("isready")
	_, before := s.expect("readyok", 5*time.Second)
	errs := 0
	for _, l := range before {
		if strings.HasPrefix(l, "info string error") {
			errs++
		}
		if strings.Contains(l, "internal failure") {
			t.Errorf("panic recovered: %s", l)
		}
	}
	if errs < len(bad)-1 {
		t.Errorf("%d error lines for %d bad commands: %q", errs, len(bad), before)
	}
	// Still works, and the position was not damaged by the bad ones.
	s.send("position startpos moves e2e4", "go depth 3")
	line, _ := s.expect("bestmove", 10*time.Second)
	p := engine.StartPosition()
	p.MakeMove(must(p.ParseUCIMove("e2e4")))
	if _, err := p.ParseUCIMove(strings.Fields(line)[1]); err != nil {
		t.Errorf("after bad commands: %q: %v", line, err)
	}
}

func TestChess960AndTime(t *testing.T) {
	s := start(t)
	s.send("uci", "setoption name UCI_Chess960 value true", "setoption name Move Overhead value 30",
		"position fen bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", "go wtime 500 btime 500 winc 10 binc 10")
	t0 := time.Now()
	line, _ := s.expect("bestmove", 5*time.Second)
	if d := time.Since(t0); d > 400*time.Millisecond {
		t.Errorf("500ms on the clock: bestmove after %v", d)
	}
	p, _ := engine.ParseFEN("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
	p.SetChess960(true)
	if _, err := p.ParseUCIMove(strings.Fields(line)[1]); err != nil {
		t.Errorf("%q: %v", line, err)
	}
	s.send("go movetime 200")
	t0 = time.Now()
	s.expect("bestmove", 3*time.Second)
	if d := time.Since(t0); d > 600*time.Millisecond {
		t.Errorf("movetime 200: bestmove after %v", d)
	}
	s.send("quit")
}
