package match

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// fastchessGame is a game of record: two book plies, two engine moves, a
// black engine move ending it by adjudication.
func fastchessGame(t *testing.T, fen string, uci []string, book int) *GameRecord {
	t.Helper()
	start := time.Date(2026, 12, 5, 3, 50, 1, 0, time.UTC)
	g := &GameRecord{White: "New", Black: "Base", Result: BlackWins, End: EndAdjudication, Termination: TermAdjudication,
		Reason: "Black wins by adjudication", Round: "3.2", StartFEN: fen, BookPlies: book,
		Limits: [2]Limits{{Base: 10 * time.Second, Inc: 100 * time.Millisecond, Nodes: 400}, {Base: 10 * time.Second, Inc: 100 * time.Millisecond, Nodes: 300}},
		Start:  start, Finished: start.Add(65*time.Second + 900*time.Millisecond),
		EngineIDs: [2]EngineID{{Name: "Stockfish 15.1", Author: "the Stockfish developers (see AUTHORS file)"}, {Name: "Stockfish 15.1"}}}
	pos := engine.StartPosition()
	if fen != "" {
		var err error
		if pos, err = engine.ParseFEN(fen); err != nil {
			t.Fatal(err)
		}
	}
	infos := []MoveInfo{
		{HasScore: true, Score: Score{CP: 35}, Depth: 12, SelDepth: 15, Nodes: 4000, Elapsed: 120*time.Millisecond + 900*time.Microsecond, TimeLeft: 9980 * time.Millisecond},
		{HasScore: true, Score: Score{CP: 0}, Depth: 7, SelDepth: 9, Nodes: 300, Elapsed: 5 * time.Millisecond, TimeLeft: 10095 * time.Millisecond},
		{HasScore: true, Score: Score{Mate: -3}, Depth: 20, SelDepth: 6, Nodes: 1 << 20, Elapsed: 1500 * time.Millisecond, TimeLeft: 8600 * time.Millisecond},
		{Depth: 0, Elapsed: 2 * time.Millisecond},
		{HasScore: true, Score: Score{Mate: 2}, Depth: 9, SelDepth: 4, Nodes: 77, Elapsed: 10 * time.Millisecond, TimeLeft: 9 * time.Second},
	}
	for i, s := range uci {
		m, err := pos.ParseUCIMove(s)
		if err != nil {
			t.Fatal(err)
		}
		g.Moves = append(g.Moves, m)
		if i < book {
			g.Info = append(g.Info, MoveInfo{})
		} else {
			g.Info = append(g.Info, infos[i-book])
		}
		pos.MakeMove(m)
	}
	return g
}

func writeString(t *testing.T, g *GameRecord, o PGNOptions) string {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := WritePGN(w, g, o); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return b.String()
}

// TestFastchessPGN: a game in fastchess 1.8.2's form, written out by
// hand from its pgn_builder.cpp and pgn_gen.hpp: the tag order, the
// engines' own names, the clock tags (local time: UTC here), PlyCount,
// the Termination word, the time control without the node limits, the
// opening named from the last position of the game the table names
// (C70 after 3... a6, not C44 after 2... Nc6; 4. Ba4 is not in it),
// "N. SAN {comment}" words, a book move's comment, score/depth time with tl=, n=, sd=, mate scores in plies, the
// end's words on the last move, a line broken before 80 columns. The
// control: the same record without Fastchess is written in arbiter's own
// form, unchanged.
func TestFastchessPGN(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	g := fastchessGame(t, "", []string{"e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4"}, 2)
	got := writeString(t, g, PGNOptions{Fastchess: true, TimeLeft: true, Nodes: true, SelDepth: true, Site: "?"})
	want := `[Event "Fastchess Tournament"]
[Site "?"]
[Date "2026.12.05"]
[Round "3"]
[White "New"]
[Black "Base"]
[Result "0-1"]
[EngineWhiteName "Stockfish 15.1"]
[EngineWhiteAuthor "the Stockfish developers (see AUTHORS file)"]
[EngineBlackName "Stockfish 15.1"]
[GameDuration "00:01:05"]
[GameStartTime "2026-12-05T03:50:01 +0000"]
[GameEndTime "2026-12-05T03:51:06 +0000"]
[PlyCount "7"]
[Termination "adjudication"]
[TimeControl "10+0.1"]
[ECO "C70"]
[Opening "Ruy Lopez: Morphy Defense"]

1. e4 {book} e5 {book} 2. Nf3 {+0.35/12 0.120s, tl=9.980s, n=4000, sd=15}
Nc6 {0.00/7 0.005s, tl=10.095s, n=300, sd=9}
3. Bb5 {-M6/20 1.500s, tl=8.600s, n=1048576, sd=6}
a6 {/0 0.002s, tl=0.000s, n=0, sd=0}
4. Ba4 {+M3/9 0.010s, tl=9.000s, n=77, sd=4, Black wins by adjudication} 0-1

`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	own := writeString(t, g, PGNOptions{TimeLeft: true, Nodes: true, SelDepth: true, Site: "?"})
	for _, s := range []string{`[Round "3.2"]`, `[Time "03:50:01"]`, `[WhiteTimeControl "tc=10+0.1,nodes=400"]`, "1. e4 {book} e5 {book} 2. Nf3 {+0.35/12 0.121s, tl=9.980s, n=4000, sd=15}", "{Black wins by adjudication} 0-1"} {
		if !strings.Contains(own, s) {
			t.Errorf("arbiter's own form lacks %q:\n%s", s, own)
		}
	}
	if strings.Contains(own, "EngineWhiteName") || strings.Contains(own, "GameDuration") {
		t.Errorf("arbiter's own form carries fastchess's tags:\n%s", own)
	}
}

// TestFastchessPGNFromFEN: a game from a set-up position with Black to
// move is numbered "12... " and carries SetUp and FEN; the opening is not
// named when no position of the game is in the table (the control of
// the ECO tags above); an end's words come from PGNOptions.Reason.
func TestFastchessPGNFromFEN(t *testing.T) {
	fen := "r1bqk2r/ppp2p1p/2np2p1/4p3/3P1Qn1/2N5/PPP1PPPP/2KR1BNR b kq - 0 12"
	g := fastchessGame(t, fen, []string{"c8e6", "d4e5"}, 0)
	got := writeString(t, g, PGNOptions{Fastchess: true, Event: "Batch 7", Reason: func(*GameRecord) string { return "Black mates" }})
	for _, s := range []string{"[Event \"Batch 7\"]\n[Site \"?\"]\n", "[SetUp \"1\"]\n[FEN \"" + fen + "\"]\n[GameDuration",
		"\n\n12... Be6 {+0.35/12 0.120s} 13. dxe5 {0.00/7 0.005s, Black mates} 0-1\n\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "[ECO ") {
		t.Errorf("an opening named for positions off the table:\n%s", got)
	}
	// A game an engine could not start has no start time: its clock tags
	// are its end's, not year 1's.
	g.Start = time.Time{}
	got = writeString(t, g, PGNOptions{Fastchess: true})
	if want := "[Date \"" + g.Finished.Local().Format("2006.01.02") + "\"]"; !strings.Contains(got, want) || !strings.Contains(got, `[GameDuration "00:00:00"]`) {
		t.Errorf("no start time: want %s and a zero duration:\n%s", want, got)
	}
}

// TestFastchessPGNValues: time controls as fastchess's stream operator
// prints them and scores as its Score does.
func TestFastchessPGNValues(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{Limits{Base: 10 * time.Second, Inc: 100 * time.Millisecond}, "10+0.1"},
		{Limits{Base: 1000 * time.Second, Inc: 10 * time.Second, Nodes: 400}, "1000+10"},
		{Limits{Base: 60 * time.Second, MovesToGo: 40}, "40/60"},
		{Limits{Base: 1500 * time.Millisecond}, "1.5"},
		{Limits{MoveTime: 250 * time.Millisecond}, "0.25/move"},
		{Limits{Nodes: 1000}, "-"},
		{Limits{Base: 1e6 * time.Second}, "1e+06"},
	} {
		if got := fastchessTC(c.l); got != c.want {
			t.Errorf("%+v: %q, want %q", c.l, got, c.want)
		}
	}
	for _, c := range []struct {
		s    Score
		want string
	}{{Score{CP: 35}, "+0.35"}, {Score{CP: -120}, "-1.20"}, {Score{}, "0.00"}, {Score{Mate: 1}, "+M1"}, {Score{Mate: 3}, "+M5"}, {Score{Mate: -2}, "-M4"}} {
		if got := fastchessScore(c.s); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
