package protocol

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

func TestParseInfo(t *testing.T) {
	var inf Info
	ParseInfo([]byte("info depth 12 seldepth 18 multipv 1 score cp 31 upperbound nodes 51234 nps 1000 hashfull 17 tbhits 3 time 52 pv e2e4 e7e5 "), &inf)
	want := Info{Depth: 12, SelDepth: 18, MultiPV: 1, HasScore: true, Score: Score{CP: 31, Bound: Upper}, Nodes: 51234, NPS: 1000,
		HashFull: 17, TBHits: 3, Time: 52 * time.Millisecond, PV: []byte("e2e4 e7e5")}
	if fmt.Sprint(inf) != fmt.Sprint(want) {
		t.Fatalf("%+v\nwant %+v", inf, want)
	}
	for _, l := range []string{
		"info depth x score cp nodes",
		"info score mate",
		"info multipv 2 score cp -500 depth 12 pv a2a3",
		"info string score cp 9999",
		"info\x00\xff",
		"info nodes 99999999999999999999",
	} {
		ParseInfo([]byte(l), &inf)
	}
	if fmt.Sprint(inf) != fmt.Sprint(want) {
		t.Fatalf("garbage changed the info: %+v", inf)
	}
	ParseInfo([]byte("info depth 20 score mate -3 lowerbound nodes 7"), &inf)
	if inf.Score != (Score{Mate: -3, Bound: Lower}) || inf.Nodes != 7 || string(inf.PV) != "e2e4 e7e5" {
		t.Fatalf("%+v", inf)
	}
	ParseInfo([]byte("info score mate 0"), &inf)
	if inf.Score.Mate != -1 {
		t.Fatalf("mate 0: %+v", inf.Score)
	}
}

// The runner parses every line of every search: nothing is allocated
// once the PV buffer has grown.
func TestParseInfoAllocatesNothing(t *testing.T) {
	line := []byte("info depth 8 seldepth 6 multipv 1 score cp 44 nodes 1801 nps 225125 hashfull 0 tbhits 0 time 8 pv e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6")
	var inf Info
	ParseInfo(line, &inf)
	if n := testing.AllocsPerRun(100, func() { ParseInfo(line, &inf) }); n != 0 {
		t.Fatalf("%v allocations per line", n)
	}
}

func TestBestmove(t *testing.T) {
	for line, want := range map[string]Bestmove{
		"bestmove e2e4 ponder e7e5": {Move: "e2e4", Ponder: "e7e5"},
		"bestmove e7e8q":            {Move: "e7e8q"},
		"bestmove (none)":           {},
		"bestmove 0000 ponder a1a2": {Ponder: "a1a2"},
		"bestmove":                  {},
		"bestmove a1a2 ponder":      {Move: "a1a2"},
	} {
		if got := ParseBestmove([]byte(line)); got != want {
			t.Errorf("%q: %+v, want %+v", line, got, want)
		}
	}
}

func TestParsePost(t *testing.T) {
	var inf Info
	ParsePost([]byte("9 99997 150 123456 e2e4 e7e5"), &inf)
	if inf.Depth != 9 || inf.Score.Mate != 2 || inf.Time != 1500*time.Millisecond || inf.Nodes != 123456 || string(inf.PV) != "e2e4 e7e5" {
		t.Fatalf("%+v", inf)
	}
	ParsePost([]byte("tellics whisper hello"), &inf)
	if inf.Depth != 9 {
		t.Fatal("a non-post line changed the info")
	}
}

// FuzzInfo: any info line folds into Info without a panic; a line of a
// second PV (multipv 2) changes nothing; the fields of a well-formed line
// are read exactly whatever text follows its pv or string.
func FuzzInfo(f *testing.F) {
	for _, s := range []string{
		"info depth 12 seldepth 18 multipv 1 score cp 34 nodes 123456 nps 1000000 time 123 pv e2e4 e7e5",
		"info depth 3 score mate -2 pv a1a2", "info string depth 99 score cp 1", "info score cp", "info nodes -5 time +7",
		"info multipv 2 depth 30 score cp 900", "info depth 99999999999999999999 nodes 9223372036854775807",
		"info score lowerbound cp 5 currmove e2e4 currmovenumber 1",
	} {
		f.Add([]byte(s), uint16(5), uint32(1000), int16(-20), []byte("e2e4 e7e5"))
	}
	f.Fuzz(func(t *testing.T, line []byte, depth uint16, nodes uint32, cp int16, tail []byte) {
		start := Info{Depth: 1, Nodes: 2, HasScore: true, Score: Score{CP: 3}}
		inf := start
		ParseInfo(line, &inf)

		second := start
		ParseInfo(append([]byte("info multipv 2 "), line...), &second)
		if !bytes.Contains(line, []byte("multipv")) && fmt.Sprint(second) != fmt.Sprint(start) {
			t.Fatalf("a multipv 2 line changed the info: %+v", second)
		}

		wellFormed := fmt.Appendf(nil, "info depth %d nodes %d score cp %d string ", depth, nodes, cp)
		got := start
		ParseInfo(append(wellFormed, tail...), &got)
		want := Info{Depth: int(depth), Nodes: int64(nodes), HasScore: true, Score: Score{CP: int(cp)}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: %+v, want %+v", append(wellFormed, tail...), got, want)
		}
	})
}

// BenchmarkInfoLines measures what the runner does with each line of a
// search: Stockfish's lines for one move at nodes=5000, told apart and the
// info lines parsed.
func BenchmarkInfoLines(b *testing.B) {
	lines := [][]byte{
		[]byte("info string NNUE evaluation using nn-ad9b42354671.nnue enabled"),
		[]byte("info depth 1 seldepth 1 multipv 1 score cp 28 nodes 38 nps 38000 hashfull 0 tbhits 0 time 1 pv e2e4"),
		[]byte("info depth 2 seldepth 2 multipv 1 score cp 44 nodes 77 nps 38500 hashfull 0 tbhits 0 time 2 pv e2e4 e7e5"),
		[]byte("info depth 5 seldepth 2 multipv 1 score cp 107 nodes 182 nps 91000 hashfull 0 tbhits 0 time 2 pv e2e4 e7e5 g1f3 b8c6 f1b5"),
		[]byte("info depth 8 seldepth 6 multipv 1 score cp 44 nodes 1801 nps 225125 hashfull 0 tbhits 0 time 8 pv e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6"),
		[]byte("info depth 10 seldepth 9 multipv 1 score cp 50 upperbound nodes 5000 nps 263157 hashfull 2 tbhits 0 time 19 pv b5a4"),
		[]byte("bestmove b5a4 ponder b7b5"),
	}
	var inf Info
	found := 0
	for i := 0; i < b.N; i++ {
		for _, line := range lines {
			switch {
			case HasWord(line, "info"):
				ParseInfo(line, &inf)
			case HasWord(line, "bestmove"):
				if mv, _ := SplitBestmove(line); mv != nil {
					found++
				}
			}
		}
	}
	if found != b.N || inf.Nodes != 5000 {
		b.Fatalf("%d bestmoves in %d searches, nodes %d", found, b.N, inf.Nodes)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}

// The commands a search sends: position incrementally within a game,
// whole after ForgetPosition; go with exactly the limits given.
func TestPositionAndGoCommands(t *testing.T) {
	u := NewUCI(nil)
	u.SetPosition("", []string{"e2e4"})
	u.SetPosition("", []string{"e2e4", "e7e5"})
	if got := string(u.posBuf); got != "position startpos moves e2e4 e7e5" {
		t.Errorf("position %q", got)
	}
	u.ForgetPosition()
	u.SetPosition("8/8/8/8/8/8/k7/K7 w - - 0 1", []string{"a1b1"})
	if got := string(u.posBuf); got != "position fen 8/8/8/8/8/8/k7/K7 w - - 0 1 moves a1b1" {
		t.Errorf("position %q", got)
	}
	for _, c := range []struct {
		g    Go
		want string
	}{
		{Go{Clock: true, Time: [2]time.Duration{0, 2 * time.Second}, Inc: [2]time.Duration{0, 10 * time.Millisecond}, MovesToGo: 3},
			"go wtime 1 btime 2000 winc 0 binc 10 movestogo 3"},
		{Go{Nodes: 5000, Depth: 8, MoveTime: 50 * time.Millisecond}, "go nodes 5000 depth 8 movetime 50"},
		{Go{Ponder: true, Clock: true, Time: [2]time.Duration{time.Second, time.Second}}, "go ponder wtime 1000 btime 1000"},
		{Go{Perft: 5, Nodes: 9}, "go perft 5"},
	} {
		u.setGo(&c.g)
		if got := string(u.goBuf); got != c.want {
			t.Errorf("%+v: %q, want %q", c.g, got, c.want)
		}
	}
}

// ParseInfo reports a line that gives the main line a PV; FirstMove is
// its first move (the cases of the EPD kind's time to solve).
func TestParseInfoNewPV(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"info depth 5 seldepth 7 multipv 1 score cp 20 nodes 100 pv e2e4 e7e5", "e2e4"},
		{"info depth 5 score cp 20 pv g1f3", "g1f3"},
		{"info depth 5 multipv 2 score cp 10 pv d2d4", ""},
		{"info depth 5 currmove e2e4 currmovenumber 1", ""},
		{"info string pv is printed below", ""},
		{"info depth 5 pv", ""},
		{"info", ""},
	} {
		var inf Info
		newPV := ParseInfo([]byte(c.line), &inf)
		if got := string(FirstMove(inf.PV)); newPV != (c.want != "") || got != c.want {
			t.Errorf("%q: new pv %v, first move %q; want %q", c.line, newPV, got, c.want)
		}
	}
}
