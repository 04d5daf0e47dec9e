package uci_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/engine/syzygy/syzygytest"
)

const kqkr = "8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1" // White wins

var tbHitsField = regexp.MustCompile(` tbhits (\d+) `)

// TestSyzygyPathUCI drives `arbiter uci` (TestHandshake checks the
// options are listed as Stockfish lists them): a path that does not exist
// is refused with an
// error naming the option and the path (and the engine searches on
// without tables: tbhits 0, the control); the real directory is
// announced and a search of a KQvKR reports tbhits and a winning move.
func TestSyzygyPathUCI(t *testing.T) {
	dir := syzygytest.Dir(t, "KQvKR.rtbz")
	s := start(t)
	s.send("uci")
	s.expect("uciok", 5*time.Second)
	search := func() (bestmove string, tbhits int) {
		t.Helper()
		s.send("position fen "+kqkr, "go depth 6")
		line, before := s.expect("bestmove", 30*time.Second)
		for _, l := range before {
			if m := tbHitsField.FindStringSubmatch(l); m != nil {
				tbhits, _ = strconv.Atoi(m[1])
			} else if strings.HasPrefix(l, "info depth") {
				t.Errorf("info line without tbhits: %q", l)
			}
		}
		return strings.Fields(line)[1], tbhits
	}

	s.send("setoption name SyzygyPath value /no/such/tables", "isready")
	line, _ := s.expect("info string", 5*time.Second)
	if want := `info string error: option "SyzygyPath": directory "/no/such/tables" does not exist`; line != want {
		t.Errorf("bad path: %q, want %q", line, want)
	}
	s.expect("readyok", 5*time.Second)
	if _, hits := search(); hits != 0 {
		t.Errorf("without tables: tbhits %d, want 0", hits)
	}

	s.send("setoption name SyzygyPath value "+dir, "isready")
	line, _ = s.expect("info string", 5*time.Second)
	if !strings.HasPrefix(line, "info string Found ") || !strings.Contains(line, "up to 5-man") {
		t.Errorf("after SyzygyPath: %q, want the tables found", line)
	}
	s.expect("readyok", 5*time.Second)
	move, hits := search()
	if hits == 0 {
		t.Error("with tables: tbhits 0")
	}
	// A damaged table (KQvKR cut to a third, in a directory of its own):
	// the engine still answers and says which file failed.
	damaged := t.TempDir()
	for _, name := range []string{"KQvK", "KRvK", "KQvKR"} {
		for _, ext := range []string{".rtbw", ".rtbz"} {
			data, err := os.ReadFile(filepath.Join(dir, name+ext))
			if err != nil {
				t.Fatal(err)
			}
			if name == "KQvKR" {
				data = data[:len(data)/3]
			}
			os.WriteFile(filepath.Join(damaged, name+ext), data, 0o600)
		}
	}
	s.send("setoption name SyzygyPath value "+damaged, "position fen "+kqkr, "go depth 4")
	line, before := s.expect("bestmove", 30*time.Second)
	if !strings.Contains(strings.Join(before, "\n"), "info string error: syzygy table "+filepath.Join(damaged, "KQvKR")) || line == "bestmove (none)" {
		t.Errorf("a damaged table: %q then %q; want it named, and a move", before, line)
	}

	tb, err := syzygy.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	pos, _ := engine.ParseFEN(kqkr)
	ranked, err := tb.RootMoves(&pos)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranked {
		if pos.UCIMove(r.Move) == move && r.WDL != syzygy.Win {
			t.Errorf("with tables played %s, a %v", move, r.WDL)
		}
	}
}
