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

// Real engines and real processes: Debian's stockfish and fairymax when
// installed, shell scripts for the misbehaviours.

const (
	stockfish = "/usr/games/stockfish"
	fairymax  = "/usr/games/fairymax"
)

func need(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not installed", path)
	}
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "engine.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func startUCI(t *testing.T, path string, args ...string) *UCI {
	t.Helper()
	c, err := Start(engineproc.Config{Path: path, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Quit("quit", time.Second) })
	return NewUCI(c)
}

// Stockfish: the handshake reads its id and typed options, a value is
// checked by type before it is sent, a search ends with a move and a
// ponder move and its info lines are parsed.
func TestUCIWithStockfish(t *testing.T) {
	need(t, stockfish)
	u := startUCI(t, stockfish)
	if err := u.Handshake(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u.ID.Name, "Stockfish") || u.ID.Author == "" {
		t.Fatalf("id %+v", u.ID)
	}
	hash, ok := u.Options.Lookup("hash")
	if !ok || hash.Type != Spin || !hash.HasRange || hash.Min != 1 {
		t.Fatalf("Hash %+v", hash)
	}
	if len(u.Options.Malformed) != 0 {
		t.Fatalf("malformed: %v", u.Options.Malformed)
	}
	if err := u.SetOption("Hash", "0"); err == nil || !strings.Contains(err.Error(), `option "Hash"=0: out of range 1..`) {
		t.Fatalf("Hash=0: %v", err)
	}
	if err := u.SetOption("Threads", "two"); err == nil || !strings.Contains(err.Error(), `option "Threads"="two": want an integer`) {
		t.Fatalf("Threads=two: %v", err)
	}
	if err := u.SetOption("NoSuch", "1"); err == nil || !strings.Contains(err.Error(), `option "NoSuch": the engine has no such option`) {
		t.Fatalf("NoSuch: %v", err)
	}
	// The control: values of the right type are taken, and the engine is
	// still ready after them.
	for _, o := range [][2]string{{"Hash", "8"}, {"Threads", "1"}, {"Ponder", "true"}} {
		if err := u.SetOption(o[0], o[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.IsReady(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := u.NewGame(); err != nil {
		t.Fatal(err)
	}
	u.SetPosition("", []string{"e2e4", "e7e5"})
	if err := u.Go(&Go{Nodes: 20000}); err != nil {
		t.Fatal(err)
	}
	u.BeginSearch(30*time.Second, "stop", time.Second, false)
	var inf Info
	mv, ponder, err := u.ReadBestmove(&inf, nil)
	if err != nil || len(mv) != 4 || len(ponder) < 4 {
		t.Fatalf("bestmove %q ponder %q: %v", mv, ponder, err)
	}
	if inf.Depth < 1 || inf.Nodes < 1000 || !inf.HasScore || len(inf.PV) < 4 || !strings.HasPrefix(string(inf.PV), string(mv)) {
		t.Fatalf("info %+v (pv %q) for %s", inf, inf.PV, mv)
	}
}

// An engine that prints nothing UCI-like is refused within the timeout
// with what it printed and the hint that it may speak xboard; an xboard
// engine given UCI the same way.
func TestUCIHandshakeRefusals(t *testing.T) {
	silent := startUCI(t, script(t, "echo 'Hello, I am a chess program'\nexec sleep 30\n"))
	start := time.Now()
	err := silent.Handshake(500 * time.Millisecond)
	if !errors.Is(err, ErrStartup) || !errors.Is(err, ErrHang) ||
		!strings.Contains(err.Error(), `the first "Hello, I am a chess program", nothing UCI-like: if it is an xboard (CECP) engine, give proto=xboard`) {
		t.Fatalf("silent engine: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the handshake took %v", d)
	}
	crash := startUCI(t, script(t, "read line\nexit 3\n"))
	if err := crash.Handshake(10 * time.Second); !errors.Is(err, ErrCrash) || !strings.Contains(err.Error(), "exited with status 3") {
		t.Fatalf("crashing engine: %v", err)
	}
}

// A malformed option line is kept as an error naming it; the engine's
// other options are usable and setting the malformed one says why not.
func TestUCIMalformedOptionKept(t *testing.T) {
	u := startUCI(t, script(t, `while read -r line; do
  case "$line" in
    uci) echo "id name Sloppy"; echo "option name Hash type spin default 16 min 64 max 1"
         echo "option name Threads type spin default 1 min 1 max 8"; echo "option name"; echo uciok ;;
    isready) echo readyok ;;
    quit) exit 0 ;;
  esac
done
`))
	if err := u.Handshake(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if u.Options.Len() != 1 || len(u.Options.Malformed) != 2 {
		t.Fatalf("%d options, malformed %v", u.Options.Len(), u.Options.Malformed)
	}
	if err := u.SetOption("Threads", "4"); err != nil {
		t.Fatal(err)
	}
	err := u.SetOption("Hash", "32")
	if err == nil || !strings.Contains(err.Error(), `option line "option name Hash type spin default 16 min 64 max 1": spin min 64 is above its max 1`) {
		t.Fatalf("Hash: %v", err)
	}
	if err := u.IsReady(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// A search past its deadline gets stop and the grace; an engine that
// still says nothing is killed and reported hung.
func TestSearchHangs(t *testing.T) {
	u := startUCI(t, script(t, `while read -r line; do
  case "$line" in
    uci) echo uciok ;;
    stop) [ -n "$late" ] && echo "bestmove a2a3" ;;
    go*) [ -n "$once" ] && exec sleep 60; once=1; late=1 ;;
  esac
done
`))
	if err := u.Handshake(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	// The control: an engine that answers stop within the grace is late,
	// not hung.
	u.SetPosition("", nil)
	u.Go(&Go{MoveTime: time.Millisecond})
	u.BeginSearch(100*time.Millisecond, "stop", 10*time.Second, false)
	var inf Info
	if mv, _, err := u.ReadBestmove(&inf, nil); err != nil || string(mv) != "a2a3" {
		t.Fatalf("late engine: %q %v", mv, err)
	}
	u.Go(&Go{MoveTime: time.Millisecond})
	u.BeginSearch(100*time.Millisecond, "stop", 300*time.Millisecond, false)
	if _, _, err := u.ReadBestmove(&inf, nil); !errors.Is(err, ErrHang) || u.Alive() {
		t.Fatalf("hung engine: %v, alive %v", err, u.Alive())
	}
}

// fairymax speaks xboard: features until done=1, its name, its options
// typed, ping/pong.
func TestXboardWithFairymax(t *testing.T) {
	need(t, fairymax)
	c, err := Start(engineproc.Config{Path: fairymax})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Quit("quit", time.Second)
	x := NewXboard(c)
	if err := x.Handshake(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.Feature("myname"), "Fairy-Max") || x.Feature("ping") != "1" || !x.Variant("normal") || x.Variant("fischerandom") {
		t.Fatalf("features %v", x.Features)
	}
	if x.Options.Len() == 0 {
		t.Fatalf("no options (malformed %v)", x.Options.Malformed)
	}
	if err := x.SetOption("NoSuch", "1"); err == nil || !strings.Contains(err.Error(), "no such option") {
		t.Fatalf("NoSuch: %v", err)
	}
	if err := x.Sync(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	// A UCI engine given xboard: refused with the hint.
	need(t, stockfish)
	sf, err := Start(engineproc.Config{Path: stockfish})
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Quit("quit", time.Second)
	if err := NewXboard(sf).Handshake(time.Second); !errors.Is(err, ErrStartup) || !strings.Contains(err.Error(), "give proto=uci") {
		t.Fatalf("stockfish as xboard: %v", err)
	}
}
